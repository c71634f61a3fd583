package org.sss.client.it;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.NavigableMap;
import java.util.TreeMap;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicLong;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.sss.client.ScanOptions;
import org.sss.client.SssClient;
import org.sss.client.TableScan;
import org.sss.client.TableSpec;
import org.sss.client.cluster.SssCluster;
import org.sss.core.api.Pair;
import org.sss.core.keys.KeyCodec;
import org.sss.core.keys.PairTypes;
import org.sss.core.proto.ErrorCode;
import org.sss.core.transport.SssException;

/**
 * One client drops and recreates a table while others write, read, count and scan it. The
 * others may see NO_SUCH_TABLE and nothing else; the node keeps serving every other table.
 */
@Timeout(value = 90, unit = TimeUnit.SECONDS)
class DropWhileInUseTest {
  @Test
  void dropAndRecreateWhileOthersUseTheTable_onlyNoSuchTableErrors_andOtherTablesKeepWorking() throws Exception {
    try (LeakDetection sampled = LeakDetection.sampled();
         SssCluster cluster = SssCluster.embedded(1);
         SssClient admin = cluster.client();
         SssClient users = cluster.client()) {
      admin.createTable("bystander", TableSpec.defaults(), false);
      NavigableMap<byte[], byte[]> bystander = TestPairs.randomPairs(8, 1_000);
      TestPairs.load(admin, "bystander", bystander);
      admin.createTable("victim", TableSpec.defaults(), false);

      AtomicBoolean stop = new AtomicBoolean();
      AtomicLong succeeded = new AtomicLong();
      AtomicLong noSuchTable = new AtomicLong();
      Map<String, Throwable> unexpected = new ConcurrentHashMap<>();
      List<Thread> threads = new ArrayList<>();
      for (int t = 0; t < 5; t++) {
        int kind = t;
        threads.add(new Thread(() -> {
          for (long i = 0; !stop.get(); i++) {
            try {
              switch (kind) {
                case 0, 1, 2 -> {
                  // large batches: the longer a batch takes on the node, the likelier a drop
                  // lands between the node finding the table and writing to it
                  List<Pair> batch = new ArrayList<>();
                  for (int j = 0; j < 2_000; j++) {
                    batch.add(new Pair(KeyCodec.encodeLong(i * 2_000 + j), new byte[64]));
                  }
                  users.putAll("victim", PairTypes.BYTES, batch);
                }
                case 3 -> users.multiGet("victim", List.of(KeyCodec.encodeLong(i), KeyCodec.encodeLong(i + 1)));
                default -> {
                  users.count("victim");
                  try (TableScan s = users.scan("victim", ScanOptions.anyOrder().withLimit(50))) {
                    s.forEachRemaining(p -> { });
                  }
                }
              }
              succeeded.incrementAndGet();
            } catch (SssException e) {
              if (e.code() == ErrorCode.NO_SUCH_TABLE) {
                noSuchTable.incrementAndGet();
              } else {
                unexpected.putIfAbsent(e.getMessage(), e);
              }
            } catch (RuntimeException e) {
              unexpected.putIfAbsent(e.toString(), e);
            }
          }
        }, "user-" + t));
      }
      threads.forEach(Thread::start);
      long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(8);
      int cycles = 0;
      try {
        while (cycles < 200 && System.nanoTime() < deadline) {
          admin.dropTable("victim", false);
          admin.createTable("victim", TableSpec.defaults(), false);
          cycles++;
        }
      } finally {
        stop.set(true);
        for (Thread t : threads) {
          t.join(30_000);
        }
      }
      for (Thread t : threads) {
        assertFalse(t.isAlive(), t.getName() + " still runs 30 s after being told to stop: "
            + java.util.Arrays.toString(t.getStackTrace()));
      }
      assertEquals(Map.of(), new TreeMap<>(unexpected), "errors other than NO_SUCH_TABLE");
      assertTrue(cycles > 10, "dropped and recreated " + cycles + " times");
      assertTrue(succeeded.get() > 0, "some operations went through");

      // the node still takes writes and serves reads, on every table
      admin.put("bystander", PairTypes.BYTES, KeyCodec.encodeString("after"), new byte[] {7});
      assertArrayEquals(new byte[] {7}, admin.get("bystander", KeyCodec.encodeString("after")).orElseThrow());
      assertEquals(bystander.size() + 1, admin.count("bystander"));
      TestPairs.assertValues(admin, "bystander", bystander, TestPairs.sampleKeys(bystander, 10));
      admin.put("victim", PairTypes.BYTES, KeyCodec.encodeLong(-1), new byte[] {1});
      admin.dropTable("victim", false);
      admin.createTable("victim2", TableSpec.defaults(), false);
    }
  }
}
