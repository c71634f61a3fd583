package org.sss.client.cluster;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.io.TempDir;
import org.sss.client.SssClient;
import org.sss.core.cluster.ClusterSpec;
import org.sss.core.cluster.NodeAddress;
import org.sss.server.NodeConfig;
import org.sss.server.SssServer;

/**
 * A node holds an exclusive fcntl lock on data/node.lock for its process's life.
 * fcntl (POSIX) locks belong to the process, and closing ANY descriptor of the file in that
 * process drops them all (the JDK's FileLock javadoc warns about this). So anything in the
 * node's own JVM that opens and closes node.lock (the probe, a second NodeLock.acquire that is
 * refused) silently releases the node's lock, and other processes then see the node as stopped.
 */
@Timeout(value = 120, unit = TimeUnit.SECONDS)
class NodeLockTest {
  @TempDir
  Path work;

  static long inode(Path file) throws IOException {
    return ((Number) Files.getAttribute(file, "unix:ino")).longValue();
  }

  /** True when /proc/locks shows a POSIX lock of process {@code pid} on {@code file}'s inode. */
  static boolean kernelSaysHeldBy(long pid, Path file) throws IOException {
    long ino = inode(file);
    for (String line : Files.readAllLines(Path.of("/proc/locks"))) {
      String[] f = line.trim().split("\\s+");
      if (f.length >= 6 && f[1].equals("POSIX") && f[4].equals(Long.toString(pid)) && f[5].endsWith(":" + ino)) {
        return true;
      }
    }
    return false;
  }

  /** What another process sees: "held" or "free". */
  static String otherProcessSees(Path lockFile) throws Exception {
    String java = Path.of(System.getProperty("java.home"), "bin", "java").toString();
    Process p = new ProcessBuilder(java, "-Xmx32m", "-cp", System.getProperty("java.class.path"),
        LockCheckMain.class.getName(), lockFile.toString()).redirectErrorStream(true).start();
    String out = new String(p.getInputStream().readAllBytes(), StandardCharsets.UTF_8).trim();
    assertTrue(p.waitFor(30, TimeUnit.SECONDS));
    return out;
  }

  private static ClusterSpec oneNode(int port) {
    return ClusterSpec.of(List.of(new NodeAddress(0, "127.0.0.1", port)), 8, "s3cret");
  }

  @Test
  void probeInTheNodesOwnJvm_leavesTheNodesLockHeld() throws Exception {
    Path data = work.resolve("data");
    ClusterSpec spec = oneNode(FreePorts.pick(1).get(0));
    try (SssServer server = SssServer.start(NodeConfig.of(spec, 0, data))) {
      Path lock = data.resolve("node.lock");
      long me = ProcessHandle.current().pid();
      assertTrue(kernelSaysHeldBy(me, lock), "the running node holds its lock");
      assertEquals("held", otherProcessSees(lock));

      assertTrue(new NodeLockProbe(data).held(), "the probe sees the node");

      assertTrue(kernelSaysHeldBy(me, lock), "after a probe in its JVM, the kernel no longer lists the node's lock");
      assertEquals("held", otherProcessSees(lock), "another process may now take a running node's lock");
    }
  }

  @Test
  void secondServerInTheSameJvm_isRefused_andTheFirstKeepsItsLock() throws Exception {
    Path data = work.resolve("data");
    List<Integer> ports = FreePorts.pick(2);
    try (SssServer first = SssServer.start(NodeConfig.of(oneNode(ports.get(0)), 0, data))) {
      Path lock = data.resolve("node.lock");
      IllegalStateException e = assertThrows(IllegalStateException.class,
          () -> SssServer.start(NodeConfig.of(oneNode(ports.get(1)), 0, data)));
      assertTrue(e.getMessage().contains("in use"), e.getMessage());

      assertTrue(kernelSaysHeldBy(ProcessHandle.current().pid(), lock),
          "the refused second acquire closed its channel, and with it the first node's kernel lock");
      assertEquals("held", otherProcessSees(lock));
      try (SssClient c = SssClient.connect(oneNode(ports.get(0)))) {
        c.ping(); // the first node still runs and answers
      }
    }
  }

  /**
   * The consequence across processes: a node in a JVM that probed itself is invisible to the
   * tools; another ServerMain on the same directory gets past the node lock, and is refused
   * only by RocksDB's own LOCK, with RocksDB's words instead of "this node already runs".
   */
  @Test
  void afterAProbeInItsJvm_aSecondServerProcessIsRefusedByTheNodeLock() throws Exception {
    Path data = work.resolve("data");
    List<Integer> ports = FreePorts.pick(2);
    try (SssServer server = SssServer.start(NodeConfig.of(oneNode(ports.get(0)), 0, data))) {
      new NodeLockProbe(data).held();
      // a second server process for the same data directory (on another port)
      Path other = work.resolve("other");
      Files.createDirectories(other);
      oneNode(ports.get(1)).save(other.resolve("cluster.properties"));
      Files.writeString(other.resolve("node.properties"),
          "cluster=cluster.properties\nnode.id=0\ndata.dir=" + data.toAbsolutePath() + "\n");
      String java = Path.of(System.getProperty("java.home"), "bin", "java").toString();
      Process p = new ProcessBuilder(java, "-Xmx128m", "-cp", System.getProperty("java.class.path"),
          "org.sss.server.ServerMain", "--config", other.resolve("node.properties").toString())
          .redirectErrorStream(true).start();
      List<String> out = new ArrayList<>();
      try (var r = new java.io.BufferedReader(new java.io.InputStreamReader(p.getInputStream(), StandardCharsets.UTF_8))) {
        String line;
        while ((line = r.readLine()) != null) {
          out.add(line);
          if (line.startsWith("READY")) {
            break;
          }
        }
      } finally {
        p.destroyForcibly().waitFor(30, TimeUnit.SECONDS);
      }
      String all = String.join("\n", out);
      assertTrue(all.contains("is in use by another process"), "the second server should be refused by the node lock; it said:\n" + all);
    }
  }
}
