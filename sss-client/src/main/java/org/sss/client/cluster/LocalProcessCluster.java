package org.sss.client.cluster;

import java.io.IOException;
import java.io.Writer;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.List;
import java.util.Optional;
import java.util.Properties;
import org.sss.client.SssClient;
import org.sss.core.cluster.ClusterSpec;
import org.sss.core.cluster.NodeAddress;
import org.sss.core.transport.Auth;

/**
 * A cluster of server processes on this machine, one per node, all on 127.0.0.1. Everything
 * lives in one directory:
 *
 * <pre>
 *   DIR/cluster.properties        the cluster file clients use (--cluster DIR/cluster.properties)
 *   DIR/node-i/node.properties    node i's config
 *   DIR/node-i/data/              node i's store
 *   DIR/node-i/server.log         node i's output
 *   DIR/node-i/pid                node i's process id while it runs
 * </pre>
 *
 * Starting on a directory that already holds a cluster restarts the nodes that are not
 * running, with their data. Server processes run {@code org.sss.server.ServerMain} with the
 * class path in the system property {@code sss.server.classpath} (set by {@code bin/sss}), or
 * this JVM's class path.
 */
public final class LocalProcessCluster implements SssCluster {
  private static final String SERVER_MAIN = "org.sss.server.ServerMain";
  private static final Duration START_TIMEOUT = Duration.ofSeconds(60);

  private final Path dir;
  private final ClusterSpec spec;

  private LocalProcessCluster(Path dir, ClusterSpec spec) {
    this.dir = dir;
    this.spec = spec;
  }

  /**
   * Starts (or restarts) a cluster in {@code dir} and returns when every node answers.
   *
   * @param nodes      node count for a new cluster (ignored when {@code dir} holds one)
   * @param partitions partition count for a new cluster; 0 for 8 per node
   * @param heap       -Xmx of each server, e.g. "1g"
   */
  public static LocalProcessCluster start(Path dir, int nodes, int partitions, String heap) throws IOException {
    Path clusterFile = dir.resolve("cluster.properties");
    ClusterSpec spec;
    if (Files.exists(clusterFile)) {
      spec = ClusterSpec.load(clusterFile);
    } else {
      if (nodes < 1) {
        throw new IllegalArgumentException("--nodes must be at least 1");
      }
      Files.createDirectories(dir);
      List<Integer> ports = FreePorts.pick(nodes);
      List<NodeAddress> addresses = new ArrayList<>();
      for (int i = 0; i < nodes; i++) {
        addresses.add(new NodeAddress(i, "127.0.0.1", ports.get(i)));
      }
      spec = ClusterSpec.of(addresses, partitions > 0 ? partitions
          : nodes * ClusterSpec.DEFAULT_PARTITIONS_PER_NODE, Auth.randomSecret());
      spec.save(clusterFile);
    }
    LocalProcessCluster cluster = new LocalProcessCluster(dir, spec);
    for (int i = 0; i < spec.nodeCount(); i++) {
      if (cluster.pid(i).isEmpty()) {
        cluster.launch(i, heap);
      }
    }
    cluster.awaitAll();
    return cluster;
  }

  /** The cluster in {@code dir} without starting anything. */
  public static LocalProcessCluster attach(Path dir) throws IOException {
    return new LocalProcessCluster(dir, ClusterSpec.load(dir.resolve("cluster.properties")));
  }

  @Override
  public ClusterSpec spec() {
    return spec;
  }

  public Path clusterFile() {
    return dir.resolve("cluster.properties");
  }

  private Path nodeDir(int node) {
    return dir.resolve("node-" + node);
  }

  /** The node's process id if it is running. */
  public Optional<Long> pid(int node) {
    Path pidFile = nodeDir(node).resolve("pid");
    try {
      if (!Files.exists(pidFile)) {
        return Optional.empty();
      }
      long pid = Long.parseLong(Files.readString(pidFile).trim());
      Instant written = Files.getLastModifiedTime(pidFile).toInstant();
      // A pid file outlives its process; the pid may since belong to another process. Ours
      // started just before its pid file was written.
      return ProcessHandle.of(pid).filter(ProcessHandle::isAlive)
          .filter(h -> h.info().startInstant()
              .map(s -> !s.isAfter(written.plusSeconds(5)) && s.isAfter(written.minusSeconds(120)))
              .orElse(true))
          .map(ProcessHandle::pid);
    } catch (IOException | NumberFormatException e) {
      return Optional.empty();
    }
  }

  private void launch(int node, String heap) throws IOException {
    Path nd = nodeDir(node);
    Files.createDirectories(nd);
    Path config = nd.resolve("node.properties");
    if (!Files.exists(config)) {
      Properties p = new Properties();
      p.setProperty("cluster", "../cluster.properties");
      p.setProperty("node.id", Integer.toString(node));
      p.setProperty("data.dir", "data");
      try (Writer w = Files.newBufferedWriter(config, StandardCharsets.UTF_8)) {
        p.store(w, "SSS node " + node);
      }
    }
    String java = Path.of(System.getProperty("java.home"), "bin", "java").toString();
    String classpath = System.getProperty("sss.server.classpath", System.getProperty("java.class.path"));
    List<String> cmd = new ArrayList<>();
    if (Files.isExecutable(Path.of("/usr/bin/setsid"))) {
      cmd.add("/usr/bin/setsid"); // detach from the terminal: Ctrl-C on the launcher spares the nodes
    }
    cmd.addAll(List.of(java, "-Xmx" + heap, "-XX:+UseParallelGC", "-cp", classpath, SERVER_MAIN,
        "--config", config.toString()));
    ProcessBuilder pb = new ProcessBuilder(cmd)
        .redirectErrorStream(true)
        .redirectOutput(ProcessBuilder.Redirect.appendTo(nd.resolve("server.log").toFile()))
        .redirectInput(ProcessBuilder.Redirect.from(new java.io.File("/dev/null")));
    pb.environment().remove("CLASSPATH");
    Process p = pb.start();
    Files.writeString(nd.resolve("pid"), Long.toString(p.pid()));
  }

  /** Waits until every node accepts an authenticated connection, or fails naming the node. */
  public void awaitAll() throws IOException {
    Instant deadline = Instant.now().plus(START_TIMEOUT);
    for (int i = 0; i < spec.nodeCount(); i++) {
      while (true) {
        if (pid(i).isEmpty()) {
          throw new IOException("node " + i + " exited during start; last lines of "
              + nodeDir(i).resolve("server.log") + ":\n" + tail(nodeDir(i).resolve("server.log")));
        }
        try (SssClient c = SssClient.connect(spec)) {
          c.channels().get(i);
          break;
        } catch (RuntimeException e) {
          if (Instant.now().isAfter(deadline)) {
            throw new IOException("node " + i + " did not answer within " + START_TIMEOUT.toSeconds() + " s: "
                + e.getMessage());
          }
          sleep(100);
        }
      }
    }
  }

  /** Kills one node at once ({@code kill -9}), as a crash would. */
  public void kill(int node) {
    pid(node).flatMap(ProcessHandle::of).ifPresent(h -> {
      h.destroyForcibly();
      h.onExit().join();
    });
  }

  /** Stops every node (SIGTERM, then SIGKILL after 15 s). */
  public void stopAll() {
    List<ProcessHandle> running = new ArrayList<>();
    for (int i = 0; i < spec.nodeCount(); i++) {
      pid(i).flatMap(ProcessHandle::of).ifPresent(h -> {
        h.destroy();
        running.add(h);
      });
    }
    for (ProcessHandle h : running) {
      try {
        h.onExit().get(15, java.util.concurrent.TimeUnit.SECONDS);
      } catch (Exception e) {
        h.destroyForcibly();
        h.onExit().join();
      }
    }
    for (int i = 0; i < spec.nodeCount(); i++) {
      try {
        Files.deleteIfExists(nodeDir(i).resolve("pid"));
      } catch (IOException ignored) {
        // stale pid files are ignored at start anyway
      }
    }
  }

  @Override
  public void close() {
    stopAll();
  }

  private static String tail(Path log) {
    try {
      List<String> lines = Files.readAllLines(log);
      return String.join("\n", lines.subList(Math.max(0, lines.size() - 20), lines.size()));
    } catch (IOException e) {
      return "(no log)";
    }
  }

  private static void sleep(long ms) {
    try {
      Thread.sleep(ms);
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
    }
  }
}
