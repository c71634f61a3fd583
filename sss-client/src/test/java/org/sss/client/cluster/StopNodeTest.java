package org.sss.client.cluster;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicReference;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.io.TempDir;
import org.sss.client.SssClient;
import org.sss.client.TableSpec;
import org.sss.core.api.Pair;
import org.sss.core.cluster.ClusterSpec;
import org.sss.core.cluster.NodeAddress;
import org.sss.core.keys.KeyCodec;
import org.sss.core.keys.PairTypes;
import org.sss.core.proto.DataType;

/**
 * Acknowledged writes to tables without a WAL survive a stop: StopNode flushes, then
 * answers, then closes in a background thread; writes on connections that were open before keep
 * being acknowledged until the close shuts the connections, and the close flushes them again.
 */
@Timeout(value = 240, unit = TimeUnit.SECONDS)
class StopNodeTest {
  static final int BATCH = 100;

  @TempDir
  Path work;

  static TableSpec noWal(boolean bulk) {
    return TableSpec.of(PairTypes.of(DataType.LONG, DataType.STRING)).writeAheadLog(false).autoCompaction(!bulk);
  }

  /** A writer of synchronous batches that records what was acknowledged, until its first failure. */
  static final class Writer extends Thread {
    final SssClient client;
    final String table;
    final List<Long> acked = new ArrayList<>();
    final AtomicReference<Throwable> failure = new AtomicReference<>();
    final CountDownLatch warm = new CountDownLatch(200);

    Writer(SssClient client, String table) {
      super("writer-" + table);
      this.client = client;
      this.table = table;
    }

    @Override
    public void run() {
      long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(60);
      for (long b = 0; System.nanoTime() < deadline; b++) {
        List<Pair> pairs = new ArrayList<>(BATCH);
        for (int i = 0; i < BATCH; i++) {
          pairs.add(new Pair(KeyCodec.encodeLong(b * BATCH + i), ("v" + b).getBytes()));
        }
        try {
          client.putAll(table, PairTypes.of(DataType.LONG, DataType.STRING), pairs);
        } catch (Throwable e) {
          failure.set(e);
          return;
        }
        synchronized (acked) {
          acked.add(b);
        }
        warm.countDown();
      }
    }

    List<Long> missing(SssClient reader) {
      List<Long> missing = new ArrayList<>();
      synchronized (acked) {
        for (long b : acked) {
          if (reader.get(table, KeyCodec.encodeLong(b * BATCH + BATCH - 1)).isEmpty()
              || reader.get(table, KeyCodec.encodeLong(b * BATCH)).isEmpty()) {
            missing.add(b);
          }
        }
      }
      return missing;
    }
  }

  private static void check(LocalProcessCluster cluster, List<Writer> writers) {
    StringBuilder lost = new StringBuilder();
    try (SssClient reader = cluster.client()) {
      for (Writer w : writers) {
        List<Long> missing = w.missing(reader);
        if (!missing.isEmpty()) {
          lost.append(w.table).append(": ").append(missing.size()).append(" of ").append(w.acked.size())
              .append(" acknowledged batches lost ").append(missing).append(" (the writer stopped with ")
              .append(w.failure.get()).append("); ");
        }
      }
    }
    assertEquals("", lost.toString());
  }

  @Test
  void stopWhileWritesAreInFlight_everyAcknowledgedWriteSurvives() throws Exception {
    Path dir = work.resolve("c");
    LocalProcessCluster cluster = LocalProcessCluster.start(dir, 1, 0, "256m");
    List<Writer> writers = new ArrayList<>();
    try (SssClient c1 = cluster.client(); SssClient c2 = cluster.client()) {
      c1.createTable("nowal", noWal(false), false);
      c1.createTable("bulk", noWal(true), false);
      writers.add(new Writer(c1, "nowal"));
      writers.add(new Writer(c2, "bulk"));
      writers.forEach(Thread::start);
      for (Writer w : writers) {
        assertTrue(w.warm.await(60, TimeUnit.SECONDS));
      }
      List<String> report = cluster.stop();
      for (Writer w : writers) {
        w.join();
      }
      assertTrue(report.get(0).contains("stopped, "), report.toString());
      System.out.println("stop report: " + report + "; writers saw: " + writers.get(0).failure.get() + " / "
          + writers.get(1).failure.get());
    }
    cluster = LocalProcessCluster.start(dir, 0, 0, null);
    try {
      check(cluster, writers);
    } finally {
      cluster.stopAll();
    }
  }

  /**
   * The shutdown hook and StopNode's close share one "closed" flag: whichever comes second
   * returns at once. A SIGTERM (an operator's kill, or NodeControl's own forceStop when a close
   * outlasts STOP_TIMEOUT) arriving while StopNode's close runs makes the hook return at once,
   * and the JVM halts in the middle of that close, before the store's final flush.
   */
  @Test
  void sigtermWhileStopNodeCloses_everyAcknowledgedWriteSurvives() throws Exception {
    Path dir = work.resolve("t");
    LocalProcessCluster cluster = LocalProcessCluster.start(dir, 1, 0, "256m");
    List<Writer> writers = new ArrayList<>();
    long pid = cluster.pid(0).orElseThrow();
    try (SssClient c1 = cluster.client(); SssClient c2 = cluster.client(); SssClient stopper = cluster.client()) {
      c1.createTable("nowal", noWal(false), false);
      c1.createTable("bulk", noWal(true), false);
      writers.add(new Writer(c1, "nowal"));
      writers.add(new Writer(c2, "bulk"));
      writers.forEach(Thread::start);
      for (Writer w : writers) {
        assertTrue(w.warm.await(60, TimeUnit.SECONDS));
      }
      stopper.stopNode(0);
      ProcessHandle.of(pid).ifPresent(ProcessHandle::destroy); // SIGTERM while it closes
      for (Writer w : writers) {
        w.join();
      }
      assertTrue(new NodeControl(cluster.spec(), 0, dir.resolve("node-0/data")).awaitLockFree(
          java.time.Duration.ofSeconds(60)));
    }
    cluster = LocalProcessCluster.start(dir, 0, 0, null);
    try {
      check(cluster, writers);
    } finally {
      cluster.stopAll();
    }
  }

  /** ServerMain after a StopNode: the process ends by itself, exit status 0, having logged its stop. */
  @Test
  void serverMainExitsZero_afterStopNode() throws Exception {
    int port = FreePorts.pick(1).get(0);
    ClusterSpec spec = ClusterSpec.of(
        List.of(new NodeAddress(0, "127.0.0.1", port)), 8, "s3cret");
    spec.save(work.resolve("cluster.properties"));
    Files.writeString(work.resolve("node.properties"), "cluster=cluster.properties\nnode.id=0\ndata.dir=data\n");
    String javaBin = Path.of(System.getProperty("java.home"), "bin", "java").toString();
    Process p = new ProcessBuilder(javaBin, "-Xmx128m", "-Dsss.test.log=INFO", "-cp", System.getProperty("java.class.path"),
        "org.sss.server.ServerMain", "--config", work.resolve("node.properties").toString())
        .redirectErrorStream(true).redirectOutput(work.resolve("server.log").toFile()).start();
    try {
      long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(60);
      while (!Files.readString(work.resolve("server.log")).contains("READY")) {
        assertTrue(p.isAlive() && System.nanoTime() < deadline, Files.readString(work.resolve("server.log")));
        Thread.sleep(50);
      }
      try (SssClient c = SssClient.connect(spec)) {
        c.stopNode(0);
      }
      assertTrue(p.waitFor(30, TimeUnit.SECONDS), "the process ends after StopNode");
      assertEquals(0, p.exitValue(), Files.readString(work.resolve("server.log")));
    } finally {
      p.destroyForcibly();
    }
  }
}
