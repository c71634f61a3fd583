package org.sss.client.cluster;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNotNull;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicReference;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.io.TempDir;
import org.sss.client.BulkWriter;
import org.sss.client.ScanOptions;
import org.sss.client.SssClient;
import org.sss.client.TableScan;
import org.sss.client.TableSpec;
import org.sss.core.api.Pair;
import org.sss.core.keys.KeyCodec;
import org.sss.core.keys.PairTypes;
import org.sss.core.transport.SssException;

/**
 * Crash safety: a node is killed with SIGKILL while a client writes small synchronous batches;
 * after the node restarts, every batch that was acknowledged (putAll returned) must be readable
 * with its value. A node killed under running scans makes them fail promptly, naming the node.
 */
@Timeout(value = 150, unit = TimeUnit.SECONDS)
class KillNineDuringLoadTest {
  static final int BATCH = 200;
  static final int VICTIM = 1;

  @TempDir
  Path work;

  static byte[] key(long batch, int i) {
    return KeyCodec.encodeLong(batch * BATCH + i);
  }

  static byte[] value(long batch, int i) {
    return ("batch " + batch + " pair " + i + " " + "v".repeat(i % 50)).getBytes(StandardCharsets.UTF_8);
  }

  @Test
  void killNodeDuringLoad_thenRestart_everyAcknowledgedPairIsReadable() throws Exception {
    Path dir = work.resolve("load");
    LocalProcessCluster cluster = LocalProcessCluster.start(dir, 3, 24, "256m");
    try (SssClient client = cluster.client()) {
      client.createTable("acks", TableSpec.defaults(), false);
      assertTrue(client.tableStats("acks").spec().writeAheadLog(), "the table keeps the WAL");

      List<Long> acknowledged = new ArrayList<>();
      AtomicReference<Throwable> loaderFailure = new AtomicReference<>();
      CountDownLatch enoughLoaded = new CountDownLatch(50);
      long[] attempted = new long[1];
      Thread loader = new Thread(() -> {
        long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(60);
        for (long b = 0; System.nanoTime() < deadline; b++) {
          List<Pair> pairs = new ArrayList<>(BATCH);
          for (int i = 0; i < BATCH; i++) {
            pairs.add(new Pair(key(b, i), value(b, i)));
          }
          attempted[0] = b + 1;
          try {
            client.putAll("acks", PairTypes.BYTES, pairs);
          } catch (Throwable e) {
            loaderFailure.set(e);
            return; // stop loading at the first failure
          }
          synchronized (acknowledged) {
            acknowledged.add(b);
          }
          enoughLoaded.countDown();
        }
      }, "loader");
      loader.start();

      assertTrue(enoughLoaded.await(60, TimeUnit.SECONDS), "the loader got going");
      long pid = cluster.pid(VICTIM).orElseThrow();
      cluster.kill(VICTIM);
      // its lock is free once the kernel has torn the process down; the JVM reaps it soon after
      ProcessHandle.of(pid).ifPresent(h -> h.onExit().orTimeout(10, TimeUnit.SECONDS).join());
      assertTrue(ProcessHandle.of(pid).map(ProcessHandle::isAlive).orElse(false) == false, "node killed");
      loader.join(TimeUnit.SECONDS.toMillis(70));
      assertFalse(loader.isAlive(), "the loader stopped");

      Throwable failure = loaderFailure.get();
      assertNotNull(failure, "a write to the killed node must fail, not hang or succeed");
      assertTrue(failure instanceof SssException, () -> "an SssException, not " + failure);
      assertTrue(failure.getMessage().contains("node " + VICTIM), () -> "the error names the node: " + failure.getMessage());
      List<Long> acked;
      synchronized (acknowledged) {
        acked = new ArrayList<>(acknowledged);
      }
      assertTrue(acked.size() >= 50);

      // restart the killed node only: the others keep running with the same processes
      long pid0 = cluster.pid(0).orElseThrow();
      long pid2 = cluster.pid(2).orElseThrow();
      cluster = LocalProcessCluster.start(dir, 3, 24, "256m");
      assertEquals(pid0, cluster.pid(0).orElseThrow());
      assertEquals(pid2, cluster.pid(2).orElseThrow());
      assertTrue(cluster.pid(VICTIM).isPresent());

      // the same client reconnects to the restarted node
      List<byte[]> keys = new ArrayList<>();
      List<byte[]> values = new ArrayList<>();
      for (long b : acked) {
        for (int i = 0; i < BATCH; i++) {
          keys.add(key(b, i));
          values.add(value(b, i));
        }
      }
      for (int from = 0; from < keys.size(); from += 10_000) {
        int to = Math.min(keys.size(), from + 10_000);
        List<byte[]> got = client.multiGet("acks", keys.subList(from, to));
        for (int j = 0; j < got.size(); j++) {
          byte[] k = keys.get(from + j);
          assertNotNull(got.get(j), () -> "acknowledged pair lost: key " + KeyCodec.decodeLong(k));
          assertArrayEquals(values.get(from + j), got.get(j));
        }
      }
      long count = client.count("acks");
      assertTrue(count >= (long) acked.size() * BATCH, "count " + count + " covers the acknowledged pairs");
      assertTrue(count <= attempted[0] * BATCH, "count " + count + " holds nothing never written");
      assertTrue(client.tableStats("acks").spec().writeAheadLog());

      // and the cluster takes writes again
      client.put("acks", PairTypes.BYTES, KeyCodec.encodeLong(-1), new byte[] {1});
      assertArrayEquals(new byte[] {1}, client.get("acks", KeyCodec.encodeLong(-1)).orElseThrow());
    } finally {
      cluster.stopAll();
    }
  }

  /** Reads until the scan fails; returns the failure (the pairs read must be real ones). */
  static SssException readUntilFailure(TableScan scan, int pairs) {
    long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(30);
    try {
      while (scan.hasNext()) {
        Pair p = scan.next();
        long k = KeyCodec.decodeLong(p.key());
        assertTrue(k >= 0 && k < pairs);
        assertArrayEquals(value(k, 0), p.value());
        assertTrue(System.nanoTime() < deadline, "the scan still runs 30 s after the kill");
      }
    } catch (SssException e) {
      return e;
    }
    throw new AssertionError("the scan ended normally although a node died under it");
  }

  @Test
  void killNodeDuringScans_orderedAndUnorderedFailPromptly_andScanAgainAfterRestart() throws Exception {
    Path dir = work.resolve("scan");
    LocalProcessCluster cluster = LocalProcessCluster.start(dir, 3, 24, "256m");
    int pairs = 30_000;
    try (SssClient client = cluster.client()) {
      client.createTable("scanned", TableSpec.defaults(), false);
      try (BulkWriter w = client.writer("scanned", PairTypes.BYTES)) {
        for (long k = 0; k < pairs; k++) {
          w.put(KeyCodec.encodeLong(k), value(k, 0));
        }
      }
      TableScan ordered = client.scan("scanned", new ScanOptions(new byte[0], true, 0, 4096));
      TableScan unordered = client.scan("scanned", new ScanOptions(new byte[0], false, 0, 4096));
      for (int i = 0; i < 1000; i++) {
        assertEquals(i, KeyCodec.decodeLong(ordered.next().key()));
        unordered.next();
      }
      cluster.kill(2);
      long start = System.nanoTime();
      SssException orderedFailure = readUntilFailure(ordered, pairs);
      SssException unorderedFailure = readUntilFailure(unordered, pairs);
      assertTrue(System.nanoTime() - start < TimeUnit.SECONDS.toNanos(30), "failed promptly");
      for (SssException e : List.of(orderedFailure, unorderedFailure)) {
        assertTrue(e.getMessage().contains("node 2"), () -> "names the dead node: " + e.getMessage());
      }
      ordered.close();
      unordered.close();

      cluster = LocalProcessCluster.start(dir, 3, 24, "256m");
      assertEquals(pairs, client.count("scanned"));
      long n = 0;
      try (TableScan again = client.scan("scanned", new ScanOptions(new byte[0], true, 0, 4096))) {
        while (again.hasNext()) {
          assertEquals(n, KeyCodec.decodeLong(again.next().key()));
          n++;
        }
      }
      assertEquals(pairs, n);
    } finally {
      cluster.stopAll();
    }
  }
}
