package org.sss.kvs;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.Random;
import java.util.TreeMap;
import java.util.concurrent.atomic.AtomicReference;
import java.util.stream.Stream;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;
import org.sss.core.proto.Compression;
import org.sss.core.proto.ErrorCode;
import org.sss.core.proto.TableOptions;

class LargeValuesSkepticTest {
  private static final TableOptions BULK = TableOptions.newBuilder().setDisableWal(true)
      .setDisableAutoCompaction(true).setCompression(Compression.NONE).build();
  private static final TableOptions MV = BULK.toBuilder().setMultiValued(true).build();
  private static final int LARGE = StoreTable.LARGE_VALUE_BYTES;

  @TempDir
  Path dir;

  // ---- spares recycled with blob files

  @Test
  void recycle_bulkTableWithFlushedBlobs() throws IOException {
    recycle(BULK, true);
  }

  @Test
  void recycle_bulkTableWithBlobsInMemtable() throws IOException {
    recycle(BULK, false);
  }

  @Test
  void recycle_walTableWithFlushedBlobs() throws IOException {
    recycle(TableOptions.getDefaultInstance(), true);
  }

  private void recycle(TableOptions options, boolean flush) throws IOException {
    try (NodeStore store = NodeStore.open(dir)) {
      store.create("warm", options, false);
      store.awaitBackground();
      assertEquals(SpareFamilies.PER_PROFILE, store.spareCount());
      StoreTable used = store.create("used", options, false);
      for (int i = 0; i < 10; i++) {
        PackedBatch b = used.newPackedBatch(64);
        b.put(key(i), value(i, LARGE + i));
        b.put(key(1000 + i), value(i, 10));
        b.commit();
        used.get(key(0)); // one run per batch
      }
      if (flush) {
        used.flush();
        assertTrue(bytesOfFiles(".blob") > 0, "blob files written");
      }
      store.drop("used", false);
      store.awaitBackground();
      assertEquals(SpareFamilies.PER_PROFILE, store.spareCount(), "the family is a spare again");
      assertEquals(0, bytesOfFiles(".blob"), "no blob file left behind");
      for (int i = 0; i < SpareFamilies.PER_PROFILE; i++) {
        StoreTable t = store.create("again" + i, options, false);
        assertEquals(0, t.count());
        assertNull(t.get(key(3)));
        assertEquals(0, t.info().getPairs());
        assertEquals(store.require("warm").info().getBytes(), t.info().getBytes(), "as a new table's");
      }
    }
  }

  // ---- model check: later writes win whatever path each took

  @Test
  void randomMix_matchesAModel() {
    for (TableOptions options : List.of(BULK, MV)) {
      Path sub = dir.resolve(options.getMultiValued() ? "mv" : "sv");
      NodeStore store = NodeStore.open(sub);
      try {
        StoreTable t = store.create("bulk", options, false);
        TreeMap<String, byte[]> model = new TreeMap<>();
        Random r = new Random(7);
        for (int op = 0; op < 250; op++) {
          int what = r.nextInt(20);
          if (what < 12) {
            PackedBatch b = t.newPackedBatch(64);
            int n = 1 + r.nextInt(4);
            for (int j = 0; j < n; j++) {
              int k = r.nextInt(12);
              int len = switch (r.nextInt(4)) {
                case 0 -> LARGE + r.nextInt(3);
                case 1 -> LARGE - 1;
                case 2 -> 1 + r.nextInt(100);
                default -> 0;
              };
              byte[] v = value(op * 100 + j, len);
              b.put(key(k), v);
              model.put(hex(key(k)), v);
            }
            b.commit();
          } else if (what < 14) {
            int k = r.nextInt(12);
            byte[] v = value(op, r.nextBoolean() ? LARGE : 5);
            try (StoreTable.Batch b = t.newBatch()) {
              b.put(key(k), v);
              b.commit();
            }
            model.put(hex(key(k)), v);
          } else if (what < 15) {
            int k = r.nextInt(12);
            t.delete(List.of(key(k)));
            model.remove(hex(key(k)));
          } else if (what < 17) {
            assertScanMatches(t, model, "op " + op);
          } else if (what < 18) {
            int k = r.nextInt(12);
            assertArrayEquals(model.get(hex(key(k))), t.get(key(k)), "get at op " + op);
          } else if (what < 19) {
            t.flush();
          } else {
            if (r.nextBoolean()) {
              t.compact();
            } else {
              store.close();
              store = NodeStore.open(sub);
              t = store.require("bulk");
            }
          }
        }
        assertScanMatches(t, model, "end");
        for (int k = 0; k < 12; k++) {
          assertArrayEquals(model.get(hex(key(k))), t.get(key(k)), "final get " + k);
        }
      } finally {
        store.close();
      }
    }
  }

  // ---- a drop racing a run's store

  @Test
  void dropDuringAStoreOfLargeValues_neverBreaksTheNode() throws Exception {
    try (NodeStore store = NodeStore.open(dir)) {
      store.create("warm", BULK, false);
      store.awaitBackground();
      for (int round = 0; round < 20; round++) {
        StoreTable t = store.create("t" + round, BULK, false);
        for (int i = 0; i < 20; i++) {
          PackedBatch b = t.newPackedBatch(64);
          b.put(key(i), value(i, LARGE + 10));
          b.put(key(100 + i), value(i, 10));
          b.commit();
        }
        AtomicReference<Throwable> failure = new AtomicReference<>();
        StoreTable ft = t;
        Thread sealer = new Thread(() -> {
          try {
            ft.flush();
          } catch (StoreException e) {
            if (e.code() != ErrorCode.NO_SUCH_TABLE) {
              failure.set(e);
            }
          } catch (Throwable e) {
            failure.set(e);
          }
        });
        sealer.start();
        Thread.sleep(round % 5);
        store.drop("t" + round, false);
        sealer.join();
        if (failure.get() != null) {
          throw new AssertionError(failure.get());
        }
      }
      store.awaitBackground();
      StoreTable other = store.create("other", TableOptions.getDefaultInstance(), false);
      try (StoreTable.Batch b = other.newBatch()) {
        b.put(key(1), value(1, LARGE));
        b.commit();
      }
      other.flush();
      assertArrayEquals(value(1, LARGE), other.get(key(1)));
      for (StoreTable t : store.tables()) {
        if (t.name().startsWith("again")) {
          assertEquals(0, t.count());
        }
      }
      for (int i = 0; i < SpareFamilies.PER_PROFILE; i++) {
        StoreTable t = store.create("again" + i, BULK, false);
        assertEquals(0, t.count(), "a recycled family shows nothing of the dropped table");
      }
    }
  }

  // ---- reopen and info

  @Test
  void userBulkTable_largeValuesSurviveACleanReopen_andInfoCountsThem() {
    try (NodeStore store = NodeStore.open(dir)) {
      StoreTable t = store.create("userbulk", BULK, false);
      for (int i = 0; i < 6; i++) {
        PackedBatch b = t.newPackedBatch(64);
        b.put(key(i), value(i, LARGE + 1));
        b.put(key(50 + i), value(i, 10));
        b.commit();
        t.get(key(0));
      }
      assertEquals(12, t.info().getPairs());
    }
    try (NodeStore store = NodeStore.open(dir)) {
      StoreTable t = store.require("userbulk");
      assertEquals(12, t.count());
      for (int i = 0; i < 6; i++) {
        assertArrayEquals(value(i, LARGE + 1), t.get(key(i)));
      }
      assertTrue(t.info().getBytes() >= 6L * LARGE, "bytes " + t.info().getBytes());
      assertEquals(12, t.info().getPairs());
    }
  }

  private long bytesOfFiles(String ending) throws IOException {
    try (Stream<Path> files = Files.list(dir.resolve("rocksdb"))) {
      return files.filter(f -> f.toString().endsWith(ending)).mapToLong(f -> f.toFile().length()).sum();
    }
  }

  private static void assertScanMatches(StoreTable t, TreeMap<String, byte[]> expected, String when) {
    List<String> keys = new ArrayList<>();
    try (StoreCursor c = t.scan(null, null)) {
      for (; c.valid(); c.next()) {
        String k = hex(c.key());
        keys.add(k);
        assertTrue(Arrays.equals(expected.get(k), c.value()), "value of " + k + " at " + when
            + ": expected " + (expected.get(k) == null ? "none" : expected.get(k).length) + " bytes, got "
            + c.value().length);
      }
    }
    assertEquals(new ArrayList<>(expected.keySet()), keys, "every key once, in order, at " + when);
  }

  private static byte[] key(int i) {
    return new byte[] {0, 0, (byte) (i >>> 24), (byte) (i >>> 16), (byte) (i >>> 8), (byte) i};
  }

  private static byte[] value(int seed, int length) {
    byte[] v = new byte[length];
    for (int i = 0; i < length; i++) {
      v[i] = (byte) (seed * 31 + i);
    }
    return v;
  }

  private static String hex(byte[] b) {
    StringBuilder s = new StringBuilder();
    for (byte x : b) {
      s.append(String.format("%02x", x));
    }
    return s.toString();
  }
}
