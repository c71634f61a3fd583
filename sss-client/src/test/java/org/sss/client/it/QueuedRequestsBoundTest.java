package org.sss.client.it;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;
import org.sss.client.SssClient;
import org.sss.client.TableSpec;
import org.sss.core.cluster.ClusterSpec;
import org.sss.core.cluster.NodeAddress;
import org.sss.core.keys.KeyCodec;
import org.sss.core.keys.PairTypes;
import org.sss.server.NodeConfig;
import org.sss.server.NodeListener;
import org.sss.server.SssServer;

/**
 * A node whose bound on held requests is far below what its clients send at once: connections
 * pause and resume many times, and every request is still answered and every write kept.
 */
class QueuedRequestsBoundTest {
  /** Connections; each carries the requests of several threads at once. */
  private static final int CLIENTS = 6;
  private static final int THREADS_EACH = 5;
  private static final int WRITES_EACH = 100;
  private static final int BOUND = 4;

  @Test
  void manyClients_overASmallBound_allAnswered_andTheBoundHolds(@TempDir Path dir) throws Exception {
    NodeListener socket = NodeListener.bind("127.0.0.1", 0);
    ClusterSpec spec = ClusterSpec.of(List.of(new NodeAddress(0, "127.0.0.1", socket.port())), 8, "secret");
    NodeConfig config = NodeConfig.of(spec, 0, dir).withMaxQueuedRequests(BOUND);
    ExecutorService threads = Executors.newFixedThreadPool(CLIENTS * THREADS_EACH);
    List<SssClient> clients = new ArrayList<>();
    try (SssServer server = SssServer.start(config, socket)) {
      try (SssClient admin = SssClient.connect(spec)) {
        admin.createTable("t", TableSpec.defaults(), false);
      }
      List<Future<?>> done = new ArrayList<>();
      for (int c = 0; c < CLIENTS; c++) {
        SssClient sc = SssClient.connect(spec);
        clients.add(sc);
        for (int t = 0; t < THREADS_EACH; t++) {
          int writer = c * THREADS_EACH + t;
          done.add(threads.submit(() -> {
            for (int i = 0; i < WRITES_EACH; i++) {
              byte[] key = KeyCodec.encodeString(writer + "-" + i);
              sc.put("t", PairTypes.BYTES, key, new byte[] {(byte) writer, (byte) i});
              assertArrayEquals(new byte[] {(byte) writer, (byte) i}, sc.get("t", key).orElseThrow());
            }
            return null;
          }));
        }
      }
      for (Future<?> f : done) {
        f.get(120, TimeUnit.SECONDS);
      }
      try (SssClient check = SssClient.connect(spec)) {
        assertEquals((long) CLIENTS * THREADS_EACH * WRITES_EACH, check.count("t"));
      }
      int peak = server.queuedRequests().peak();
      assertTrue(server.queuedRequests().pauses() > 0, "connections paused at the bound (peak " + peak + ")");
      // the answer leaves before the request is counted out: wait for the count, not a time
      long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(30);
      while (server.queuedRequests().held() != 0 && System.nanoTime() < deadline) {
        Thread.sleep(10);
      }
      assertEquals(0, server.queuedRequests().held(), "every request was answered and counted out");
    } finally {
      threads.shutdownNow();
      for (SssClient c : clients) {
        c.close();
      }
    }
  }
}
