package org.sss.client.cluster;

import java.io.File;
import java.io.IOException;
import java.io.Reader;
import java.io.Writer;
import java.net.InetSocketAddress;
import java.net.ServerSocket;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.Properties;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;
import org.sss.client.MembershipView;
import org.sss.client.SssClient;
import org.sss.core.cluster.ClusterSpec;
import org.sss.core.cluster.NodeAddress;
import org.sss.core.cluster.ReplicaPlacement;
import org.sss.core.transport.Auth;
import org.sss.core.transport.Buffers;

/**
 * A cluster of server processes on this machine, one per node, all on 127.0.0.1. Everything
 * lives in one directory:
 *
 * <pre>
 *   DIR/cluster.properties        the cluster file clients use (--cluster DIR/cluster.properties)
 *   DIR/node-i/node.properties    node i's config
 *   DIR/node-i/launch.properties  how node i is started (its heap), reused by later starts
 *   DIR/node-i/data/              node i's store; data/node.lock is held while the node runs
 *   DIR/node-i/server.log         node i's output
 * </pre>
 *
 * <h2>Knowing a node runs</h2>
 * A node runs while a process holds its data directory's lock ({@link NodeLockProbe}); it is
 * up when it also answers an authenticated connection as the node the cluster file names. A
 * lock held by a node that does not answer is a node starting or a process still being torn
 * down (after {@code kill -9} the kernel may need a moment): a start waits for either. Nothing
 * is decided from a pid file or a clock.
 *
 * <h2>Start and stop</h2>
 * Starting on a directory that already holds a cluster starts exactly the nodes that do not
 * run, with their data; a failed start stops only the processes it launched and names the node
 * with the lines it logged. Stopping asks each node to stop over the wire ({@code StopNode}: it
 * flushes every table, answers, and exits), and waits until its lock is released; only a node
 * that does not answer gets a signal, sent to the process the kernel names as the lock's holder
 * (SIGTERM, then SIGKILL after 15 s, said per node with what may be lost).
 *
 * <p>Server processes run {@code org.sss.server.ServerMain} with the class path in the system
 * property {@code sss.server.classpath} (set by {@code bin/sss}), or this JVM's class path, and
 * the JVM options in the environment variable {@code SSS_SERVER_JAVA_OPTS} (split at spaces)
 * after their own: a profiler's agent, logging, or a JIT setting for short-lived servers (the
 * build's tests start theirs with {@code -XX:TieredStopAtLevel=1}). Where the system property
 * {@code sss.server.archive.dir} names a directory, they also map a class-data archive made
 * there once per class path ({@link ServerClassArchive}).
 */
public final class LocalProcessCluster implements SssCluster {
  private static final String SERVER_MAIN = "org.sss.server.ServerMain";
  private static final Duration START_TIMEOUT = Duration.ofSeconds(60);
  private static final Duration TERM_GRACE = NodeControl.TERM_GRACE;
  static final String DEFAULT_HEAP = "1g";

  private final Path dir;
  private final ClusterSpec spec;
  /** The file the nodes read (DIR/cluster.properties, or a resize's private one). */
  private final Path clusterFile;

  /** The options of {@code SSS_SERVER_JAVA_OPTS}: words separated by spaces; none when unset or blank. */
  static List<String> extraServerOptions(String value) {
    return value == null || value.isBlank() ? List.of() : List.of(value.strip().split("\\s+"));
  }

  private LocalProcessCluster(Path dir, ClusterSpec spec) {
    this(dir, spec, dir.resolve("cluster.properties"));
  }

  private LocalProcessCluster(Path dir, ClusterSpec spec, Path clusterFile) {
    this.clusterFile = clusterFile;
    this.dir = dir;
    this.spec = spec;
  }

  /**
   * Starts (or restarts) a cluster in {@code dir} and returns when every node answers.
   *
   * @param nodes      node count for a new cluster; 0 to take the existing cluster's (a
   *                   different count for an existing cluster is refused)
   * @param partitions partition count for a new cluster; 0 for 8 per node (likewise)
   * @param heap       -Xmx of each server started, e.g. "1g"; null for the node's last (default 1g)
   */
  public static LocalProcessCluster start(Path dir, int nodes, int partitions, String heap) throws IOException {
    return start(dir, nodes, partitions, 0, heap);
  }

  /**
   * {@link #start(Path, int, int, String)} with {@code replication} copies of each partition for
   * a new cluster (0: one copy; a different number for an existing cluster is refused). Its nodes
   * all run on this machine, so each is labelled a host of its own ({@code local-<i>}) for the
   * rule that keeps copies on distinct hosts: a local cluster rehearses placement, it does not
   * protect against losing the machine.
   */
  public static LocalProcessCluster start(Path dir, int nodes, int partitions, int replication, String heap)
      throws IOException {
    return start(dir, nodes, partitions, replication, heap, false);
  }

  /** {@code byResize}: started by {@link ClusterResize}, which alone may start a directory it is resizing. */
  static LocalProcessCluster start(Path dir, int nodes, int partitions, int replication, String heap,
                                   boolean byResize) throws IOException {
    if (!byResize) {
      ClusterResize.refuseUnfinished(dir);
    }
    return start(dir, dir.resolve("cluster.properties"), nodes, partitions, replication, heap);
  }

  /**
   * Starts the existing cluster of {@code dir} from another cluster file (a resize's private
   * one, which no client knows); the nodes are pointed at that file.
   */
  static LocalProcessCluster startFrom(Path dir, Path clusterFile, String heap) throws IOException {
    return start(dir, clusterFile, 0, 0, 0, heap);
  }

  /** The cluster of {@code dir} as the nodes know it from {@code clusterFile}, without starting anything. */
  static LocalProcessCluster attach(Path dir, Path clusterFile) throws IOException {
    return new LocalProcessCluster(dir, ClusterSpec.load(clusterFile), clusterFile);
  }

  private static LocalProcessCluster start(Path dir, Path clusterFile, int nodes, int partitions, int replication,
                                           String heap) throws IOException {
    ClusterSpec spec;
    if (Files.exists(clusterFile)) {
      spec = ClusterSpec.load(clusterFile);
      if (nodes > 0 && nodes != spec.nodeCount()) {
        throw new IllegalArgumentException(dir + " holds a cluster of " + spec.nodeCount() + " nodes; --nodes "
            + nodes + " cannot change it: start it without --nodes, then grow or shrink it with"
            + " bin/sss cluster resize --dir " + dir + " --nodes " + nodes);
      }
      if (partitions > 0 && partitions != spec.partitionMap().partitions()) {
        throw new IllegalArgumentException(dir + " holds a cluster of " + spec.partitionMap().partitions()
            + " partitions; --partitions " + partitions + " cannot change it: start it without --partitions, then"
            + " bin/sss cluster resize --dir " + dir + " --partitions " + partitions);
      }
      if (replication > 0 && replication != spec.replication()) {
        throw new IllegalArgumentException(dir + " holds a cluster with replication " + spec.replication()
            + "; --replication " + replication + " cannot change it");
      }
    } else {
      int n = nodes > 0 ? nodes : 3;
      String eachHeap = heap == null ? DEFAULT_HEAP : heap.trim();
      if (!eachHeap.matches("[0-9]+[kKmMgG]?")) {
        throw new IllegalArgumentException("--heap must be a size such as 512m or 2g, not '" + heap + "'");
      }
      String warning = MachineLimits.checkProcesses(n, MachineLimits.bytesOf(eachHeap), eachHeap);
      if (warning != null) {
        System.err.println(warning);
      }
      Files.createDirectories(dir);
      spec = newSpec(n, partitions > 0 ? partitions : n * ClusterSpec.DEFAULT_PARTITIONS_PER_NODE, replication,
          Auth.randomSecret());
      spec.save(clusterFile);
    }
    LocalProcessCluster cluster = new LocalProcessCluster(dir, spec, clusterFile);
    Map<Integer, Launched> launched = new LinkedHashMap<>();
    List<LaunchLock> turns = new ArrayList<>();
    try {
      for (int i = 0; i < spec.nodeCount(); i++) { // in node order, so that two starts cannot deadlock
        turns.add(LaunchLock.acquire(cluster.nodeDir(i).resolve("data"), LAUNCH_TURN_TIMEOUT));
      }
      for (int i = 0; i < spec.nodeCount(); i++) {
        if (!cluster.awaitSettled(i)) {
          launched.put(i, cluster.launch(i, heap));
        }
      }
      cluster.awaitUp(launched);
    } catch (IOException | RuntimeException e) {
      // nodes that ran before this start keep running; only what it launched is stopped
      for (Launched l : launched.values()) {
        l.process.destroy();
      }
      for (Launched l : launched.values()) {
        try {
          l.process.onExit().get(TERM_GRACE.toSeconds(), TimeUnit.SECONDS);
        } catch (Exception notYet) {
          l.process.destroyForcibly();
        }
      }
      throw e;
    } finally {
      turns.forEach(LaunchLock::close);
    }
    cluster.awaitMembership(); // the nodes run: a failure here names the node and leaves them running
    return cluster;
  }

  /** How long a start or stop waits for another one of the same node to end. */
  static final Duration LAUNCH_TURN_TIMEOUT = Duration.ofSeconds(180);

  /**
   * The file of a new cluster of {@code n} nodes on free ports of 127.0.0.1, each node labelled
   * a host of its own ({@code local-i}) so that copies of a partition go to different nodes.
   */
  static ClusterSpec newSpec(int n, int partitions, int replication, String secret) throws IOException {
    List<Integer> ports = FreePorts.pick(replication > 1 ? 2 * n : n); // with copies, one more each for membership
    List<NodeAddress> addresses = new ArrayList<>();
    for (int i = 0; i < n; i++) {
      addresses.add(new NodeAddress(i, "127.0.0.1", ports.get(i)));
    }
    ClusterSpec spec = ClusterSpec.of(addresses, partitions, secret);
    if (replication > 1) {
      List<ReplicaPlacement.Location> hosts = new ArrayList<>();
      for (int i = 0; i < n; i++) {
        hosts.add(new ReplicaPlacement.Location("local-" + i, ClusterSpec.DEFAULT_RACK));
      }
      spec = spec.withRaftPorts(ports.subList(n, 2 * n)).withReplication(replication, hosts);
    }
    return spec;
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
    return clusterFile;
  }

  private Path nodeDir(int node) {
    return dir.resolve("node-" + node);
  }

  private NodeControl control(int node) {
    return new NodeControl(spec, node, nodeDir(node).resolve("data"));
  }

  /** The process of a running node, as the kernel names its lock's holder. */
  public Optional<Long> pid(int node) {
    return control(node).pid();
  }

  /** True when the node answers an authenticated connection as itself. */
  public boolean answers(int node) {
    return control(node).answers();
  }

  /**
   * Waits until node {@code node} either runs or is stopped, and says whether it runs; fails
   * when its lock stays held without an answer.
   */
  private boolean awaitSettled(int node) throws IOException {
    NodeControl c = control(node);
    NodeControl.State s = c.awaitSettled(NodeControl.SETTLE_TIMEOUT);
    if (s == NodeControl.State.UNRESPONSIVE) {
      throw new IOException("node " + node + ": a process" + c.holderText() + " holds " + c.dataDir()
          + " but the node has not answered for " + NodeControl.SETTLE_TIMEOUT.toSeconds()
          + " s; stop it with `sss cluster stop --dir " + dir + "`");
    }
    return s == NodeControl.State.RUNNING;
  }

  /** A server process this start launched, and where its log stood before it. */
  private record Launched(Process process, long logOffset) {}

  /** How long a launch waits for a node's ports to be free (a process that held them still ending). */
  static final Duration PORT_WAIT = Duration.ofSeconds(5);

  /**
   * Waits, at most {@link #PORT_WAIT}, until {@code address} can be bound as a node binds it:
   * a process just stopped may hold its listening socket for a moment after it released its
   * data directory's lock, and a node started on its port then would fail at once. Returns in
   * any case: a port still taken fails the node's start, which names it.
   */
  static void awaitBindable(NodeAddress address) {
    long deadline = System.nanoTime() + PORT_WAIT.toNanos();
    while (true) {
      try (ServerSocket s = new ServerSocket()) {
        s.setReuseAddress(true); // as the node binds it: connections left in TIME_WAIT do not count
        s.bind(new InetSocketAddress(address.host(), address.port()), 1);
        return;
      } catch (IOException taken) {
        if (System.nanoTime() > deadline) {
          return;
        }
        NodeControl.sleep(100);
      }
    }
  }

  private Launched launch(int node, String heap) throws IOException {
    awaitBindable(spec.node(node));
    if (spec.replication() > 1) {
      awaitBindable(spec.raftAddress(node));
    }
    Path nd = nodeDir(node);
    Files.createDirectories(nd);
    Path config = nd.resolve("node.properties");
    String clusterRef = nd.relativize(clusterFile).toString();
    if (Files.exists(config)) {
      pointAt(config, clusterRef);
    } else {
      Properties p = new Properties();
      p.setProperty("cluster", clusterRef);
      p.setProperty("node.id", Integer.toString(node));
      p.setProperty("data.dir", "data");
      try (Writer w = Files.newBufferedWriter(config, StandardCharsets.UTF_8)) {
        p.store(w, "SSS node " + node);
      }
    }
    String xmx = rememberedHeap(node, heap);
    String java = Path.of(System.getProperty("java.home"), "bin", "java").toString();
    String classpath = System.getProperty("sss.server.classpath", System.getProperty("java.class.path"));
    List<String> cmd = new ArrayList<>();
    if (Files.isExecutable(Path.of("/usr/bin/setsid"))) {
      cmd.add("/usr/bin/setsid"); // detach from the terminal: Ctrl-C on the launcher spares the nodes
    }
    List<String> options = new ArrayList<>(List.of("-XX:+UseParallelGC"));
    String hugePages = HugePages.jvmOption();
    if (hugePages != null) {
      options.add(hugePages);
    }
    options.addAll(Buffers.JVM_OPTIONS);
    ServerClassArchive.Launch archived = ServerClassArchive.forServers(java, classpath, options);
    cmd.addAll(List.of(java, "-Xmx" + xmx));
    cmd.addAll(options);
    cmd.addAll(archived.jvmOptions());
    cmd.addAll(extraServerOptions(System.getenv("SSS_SERVER_JAVA_OPTS")));
    cmd.addAll(List.of("-cp", archived.classpath(), SERVER_MAIN, "--config", config.toString()));
    Path log = nd.resolve("server.log");
    long offset = Files.exists(log) ? Files.size(log) : 0;
    ProcessBuilder pb = new ProcessBuilder(cmd)
        .redirectErrorStream(true)
        .redirectOutput(ProcessBuilder.Redirect.appendTo(log.toFile()))
        .redirectInput(ProcessBuilder.Redirect.from(new File("/dev/null")));
    pb.environment().remove("CLASSPATH");
    return new Launched(pb.start(), offset);
  }

  /** Rewrites the {@code cluster=} line of a node file when it names another file; the rest stays as it is. */
  private static void pointAt(Path config, String clusterRef) throws IOException {
    List<String> lines = Files.readAllLines(config, StandardCharsets.UTF_8);
    List<String> out = new ArrayList<>();
    boolean changed = false;
    for (String line : lines) {
      if (line.startsWith("cluster=") && !line.equals("cluster=" + clusterRef)) {
        out.add("cluster=" + clusterRef);
        changed = true;
      } else {
        out.add(line);
      }
    }
    if (changed) {
      Files.write(config, out, StandardCharsets.UTF_8);
    }
  }

  /**
   * The heap a node starts with: the one given, remembered for later starts, or the one the
   * node last started with.
   */
  private String rememberedHeap(int node, String heap) throws IOException {
    Path file = nodeDir(node).resolve("launch.properties");
    Properties p = launchSettings(nodeDir(node));
    if (heap == null) {
      String remembered = p.getProperty("heap", DEFAULT_HEAP).trim();
      if (!remembered.matches("[0-9]+[kKmMgG]?")) {
        throw new IllegalArgumentException(file + ": heap must be a size such as 512m or 2g, not '" + remembered
            + "' (start with --heap to set it)");
      }
      return remembered;
    }
    heap = heap.trim();
    if (!heap.matches("[0-9]+[kKmMgG]?")) {
      throw new IllegalArgumentException("--heap must be a size such as 512m or 2g, not '" + heap + "'");
    }
    p.setProperty("heap", heap);
    try (Writer w = Files.newBufferedWriter(file, StandardCharsets.UTF_8)) {
      p.store(w, "how node " + node + " is started");
    }
    return heap;
  }

  /** How the node in {@code nodeDir} was last started (its {@code launch.properties}); empty when never. */
  static Properties launchSettings(Path nodeDir) throws IOException {
    Path file = nodeDir.resolve("launch.properties");
    Properties p = new Properties();
    if (Files.exists(file)) {
      try (Reader r = Files.newBufferedReader(file, StandardCharsets.UTF_8)) {
        p.load(r);
      }
    }
    return p;
  }

  /** Waits until every node answers; a launched node whose process ends first fails the start. */
  private void awaitUp(Map<Integer, Launched> launched) throws IOException {
    Instant deadline = Instant.now().plus(START_TIMEOUT);
    for (int i = 0; i < spec.nodeCount(); i++) {
      Launched mine = launched.get(i);
      NodeControl node = control(i);
      while (true) {
        // ask the node only once it holds its lock (it binds its port after): a port that
        // something else holds meanwhile would only make the question wait
        if (node.lockHeld()) {
          if (node.answers()) {
            break;
          }
        } else if (mine != null && !mine.process.isAlive()) {
          String logged = logSince(nodeDir(i).resolve("server.log"), mine.logOffset);
          throw new IOException("node " + i + " exited during start (status " + mine.process.exitValue() + "): "
              + why(logged) + " (its log: " + nodeDir(i).resolve("server.log") + ")\n" + logged);
        }
        if (mine != null && !mine.process.isAlive() && !node.lockHeld()) {
          continue; // it just exited: say why above
        }
        if (Instant.now().isAfter(deadline)) {
          throw new IOException("node " + i + " did not answer within " + START_TIMEOUT.toSeconds() + " s; it logged:\n"
              + logSince(nodeDir(i).resolve("server.log"), mine == null ? -1 : mine.logOffset));
        }
        NodeControl.sleep(100);
      }
    }
  }

  /** How long a node just started may take to have its membership confirmed (a Raft election first). */
  static final Duration MEMBERSHIP_TIMEOUT = Duration.ofSeconds(60);

  /**
   * With copies, waits until every node has had its membership view confirmed by a majority of
   * the voters and serves (or catches up): until then it refuses reads and writes of replicated
   * tables, and a command run right after the start would be refused.
   */
  private void awaitMembership() throws IOException {
    if (spec.replication() < 2) {
      return;
    }
    Instant deadline = Instant.now().plus(MEMBERSHIP_TIMEOUT);
    try (SssClient client = SssClient.connect(spec)) {
      for (int i = 0; i < spec.nodeCount(); i++) {
        while (true) {
          String why;
          try {
            MembershipView v = client.view(i);
            // serving, or catching up (which may take long, and is the node's own business)
            if (NodeControl.servesOrCatchesUp(v, i)) {
              break;
            }
            why = "its view was last confirmed " + (v.confirmedMillisAgo() == Long.MAX_VALUE ? "never"
                : v.confirmedMillisAgo() + " ms ago") + ", leader " + v.leader() + (v.serving() ? "" : ", not serving");
          } catch (RuntimeException e) {
            why = e.getMessage();
          }
          if (Instant.now().isAfter(deadline)) {
            throw new IOException("node " + i + " answers but its membership was not confirmed by a majority of the"
                + " voters within " + MEMBERSHIP_TIMEOUT.toSeconds() + " s (" + why + "); see " + nodeDir(i)
                .resolve("server.log"));
          }
          NodeControl.sleep(100);
        }
      }
    }
  }

  /** Waits until every node answers (a cluster started elsewhere). */
  public void awaitAll() throws IOException {
    awaitUp(Map.of());
  }

  /** Kills one node at once ({@code kill -9}), as a crash would, and waits until it is gone. */
  public void kill(int node) {
    control(node).kill();
  }

  /** Sends {@code kill -9} to the node's process and returns at once (it may still be dying). */
  public void killNow(int node) {
    control(node).killNow();
  }

  /** Stops every node; see {@link #stop()}. */
  public void stopAll() {
    stop();
  }

  /**
   * Stops every node of this directory ({@link NodeControl#stop}); returns a line per node
   * saying how it stopped, and what may be lost where it had to be forced.
   */
  public List<String> stop() {
    List<CompletableFuture<String>> stops = new ArrayList<>();
    for (int i = 0; i < spec.nodeCount(); i++) {
      NodeControl c = control(i);
      CompletableFuture<String> f = new CompletableFuture<>();
      Thread t = new Thread(() -> {
        try {
          f.complete(c.stop());
        } catch (RuntimeException e) {
          f.complete("node " + c.node() + ": NOT STOPPED: " + e.getMessage());
        }
      }, "sss-stop-node-" + i);
      t.start(); // side by side: each waits for its node to flush and exit
      stops.add(f);
    }
    return stops.stream().map(CompletableFuture::join).toList();
  }

  @Override
  public void close() {
    stopAll();
  }

  /**
   * The line of a node's log that says why it failed (the first exception or error), for the
   * one line a command prints; the whole log follows on the lines after it.
   */
  static String why(String logged) {
    for (String line : logged.lines().toList()) {
      String t = line.strip();
      if (t.startsWith("sss server: ")) {
        return t.substring("sss server: ".length()); // the server's own last word
      }
      if (t.contains("Exception") || t.contains(" ERROR ") || t.startsWith("Error")) {
        t = t.replaceFirst("^Exception in thread \"[^\"]*\" ", "");
        return t.length() > 400 ? t.substring(0, 400) + "…" : t;
      }
    }
    return "it logged no error";
  }

  /** What the node logged since {@code offset} (its last 40 lines), or its last 20 lines for -1. */
  private static String logSince(Path log, long offset) {
    try {
      byte[] all = Files.readAllBytes(log);
      int from = offset >= 0 && offset <= all.length ? (int) offset : 0;
      List<String> lines = new String(all, from, all.length - from, StandardCharsets.UTF_8).lines().toList();
      int keep = offset >= 0 ? 40 : 20;
      String text = String.join("\n", lines.subList(Math.max(0, lines.size() - keep), lines.size()));
      return text.isBlank() ? "(nothing)" : text;
    } catch (IOException e) {
      return "(no log: " + e.getMessage() + ")";
    }
  }
}
