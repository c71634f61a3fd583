package org.sss.kvs;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.TreeMap;
import java.util.stream.Stream;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;
import org.sss.core.proto.Compression;
import org.sss.core.proto.TableOptions;

/**
 * Large values are kept out of SST blocks (blob files), so a scan merging many sorted runs
 * holds a small block per run, not a whole value per run; and the detour a large value takes
 * through a bulk table's memtable keeps the order of writes.
 */
class LargeValuesTest {
  private static final TableOptions BULK = TableOptions.newBuilder().setDisableWal(true)
      .setDisableAutoCompaction(true).setCompression(Compression.NONE).build();
  private static final int LARGE = StoreTable.LARGE_VALUE_BYTES + 1000;

  @TempDir
  Path dir;

  @Test
  void bulkTable_keepsLargeValuesInBlobFiles_andReadsEveryValueBack() throws IOException {
    try (NodeStore store = NodeStore.open(dir)) {
      StoreTable t = store.create("bulk", BULK, false);
      TreeMap<String, byte[]> expected = new TreeMap<>();
      for (int i = 0; i < 24; i++) {
        PackedBatch b = t.newPackedBatch(1 << 10);
        if (i % 3 == 0) {
          byte[] key = key(i);
          byte[] value = value(i, LARGE);
          b.put(key, value);
          expected.put(hex(key), value);
        } else {
          for (int j = 0; j < 100; j++) {
            byte[] key = key(i * 1000 + j);
            byte[] value = value(i * 1000 + j, 50);
            b.put(key, value);
            expected.put(hex(key), value);
          }
        }
        b.commit();
      }
      t.flush();
      long sst = bytesOfFiles(".sst");
      long blob = bytesOfFiles(".blob");
      assertTrue(blob >= 8L * LARGE, "the 8 large values are in blob files, not " + blob + " bytes");
      assertTrue(sst < StoreTable.LARGE_VALUE_BYTES, "SST files hold references, " + sst + " bytes");
      assertTrue(t.info().getBytes() >= blob, "a table's size counts its blob files: " + t.info().getBytes());
      assertScanMatches(t, expected);
    }
  }

  @Test
  void bulkTable_laterWriteOfAKeyWins_whicheverPathEachTook() {
    try (NodeStore store = NodeStore.open(dir)) {
      StoreTable t = store.create("single", BULK, false);
      byte[] key = key(1);
      byte[][] writes = {value(1, 10), value(2, LARGE), value(3, 20), value(4, LARGE), value(5, LARGE), value(6, 30)};
      for (byte[] v : writes) {
        PackedBatch b = t.newPackedBatch(64);
        b.put(key, v);
        b.commit();
        assertArrayEquals(v, t.get(key), "the last write of the key, " + v.length + " bytes");
      }
      for (int round = 0; round < writes.length; round++) {
        PackedBatch b = t.newPackedBatch(64);
        b.put(key, writes[round]);
        b.commit();
      }
      TreeMap<String, byte[]> expected = new TreeMap<>();
      expected.put(hex(key), writes[writes.length - 1]);
      assertScanMatches(t, expected);
      assertArrayEquals(writes[writes.length - 1], t.get(key));
    }
  }

  @Test
  void readAhead_sharesOneBudgetOverTheRunsAScanMerges() {
    try (NodeStore store = NodeStore.open(dir)) {
      StoreTable t = store.create("runs", BULK, false);
      assertEquals(StoreTable.MAX_READ_AHEAD, t.readAheadPerFile(1), "few files: the most");
      for (int run = 0; run < 120; run++) {
        List<byte[][]> pairs = new ArrayList<>(); // overlapping runs, as a shuffle writes them: level 0
        pairs.add(new byte[][] {key(run), value(run, 10)});
        pairs.add(new byte[][] {key(10_000 - run), value(run, 10)});
        t.ingestSorted(pairs);
      }
      long perFile = t.readAheadPerFile(1);
      assertTrue(perFile * 110 <= StoreTable.READ_AHEAD_BUDGET, perFile + " bytes per file over 120 runs");
      assertTrue(perFile < StoreTable.MAX_READ_AHEAD);
      assertEquals(StoreTable.MIN_READ_AHEAD, t.readAheadPerFile(1000), "never below the least");
      assertFalse(t.readAheadPerFile(8) > perFile / 8 + 1, "ranges read side by side share it too");
    }
  }

  /** Bytes of the store's files with this ending: only the table under test holds data. */
  private long bytesOfFiles(String ending) throws IOException {
    try (Stream<Path> files = Files.list(dir.resolve("rocksdb"))) {
      return files.filter(f -> f.toString().endsWith(ending)).mapToLong(f -> f.toFile().length()).sum();
    }
  }

  private static void assertScanMatches(StoreTable t, TreeMap<String, byte[]> expected) {
    List<String> keys = new ArrayList<>();
    try (StoreCursor c = t.scan(null, null)) {
      for (; c.valid(); c.next()) {
        String k = hex(c.key());
        keys.add(k);
        assertTrue(Arrays.equals(expected.get(k), c.value()), "value of " + k);
      }
    }
    assertEquals(new ArrayList<>(expected.keySet()), keys, "every key once, in order");
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

  @Test
  void manyRuns_areMergedPastTheMostAScanHoldsSideBySide() throws org.rocksdb.RocksDBException {
    try (NodeStore store = NodeStore.open(dir)) {
      StoreTable t = store.create("many", BULK, false);
      TreeMap<String, byte[]> expected = new TreeMap<>();
      for (int run = 0; run < RunFile.MAX_RUNS + 10; run++) {
        List<byte[][]> pairs = new ArrayList<>(); // overlapping runs: each lands in level 0
        for (int k : new int[] {run, 100_000 - run}) {
          byte[] v = value(run, 20);
          pairs.add(new byte[][] {key(k), v});
          expected.put(hex(key(k)), v);
        }
        t.ingestSorted(pairs);
      }
      assertTrue(t.levelZeroFiles() <= RunFile.MAX_RUNS, t.levelZeroFiles() + " runs side by side");
      assertScanMatches(t, expected);
    }
  }
}
