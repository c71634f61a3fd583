package org.sss.kvs;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.Map;
import java.util.Random;
import java.util.TreeMap;
import java.util.stream.Stream;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;
import org.rocksdb.RocksDBException;
import org.sss.core.keys.KeyCodec;
import org.sss.core.keys.StoredKeys;
import org.sss.core.proto.TableOptions;

/**
 * A job's output keeps each writer's pairs apart while they come in key order: checked against
 * a model of what was written (the last write of a key wins within its writer), and by where
 * the pairs land (files ingested into the bottom level, nothing in level 0 to compact).
 */
class OrderedStreamsTest {
  private static final TableOptions DEFAULTS = TableOptions.getDefaultInstance();
  private static final int PARTITIONS = 8;

  private static StoreTable jobOutput(NodeStore store) {
    return store.createForJob("j1", "sss-tmp-j1-0", DEFAULTS, "out", false);
  }

  /** Writes {@code pairs} (stored keys and values) of writer {@code writer} on node 0 in one batch. */
  private static void write(StoreTable t, int writer, List<byte[][]> pairs) {
    PackedBatch b = t.newPackedBatch(1 << 10, PackedBatch.stream(0, writer));
    for (byte[][] p : pairs) {
      b.put(p[0], p[1]);
    }
    b.commit();
  }

  private static byte[][] pair(long key, byte[] value) {
    return new byte[][] {StoredKeys.storedKey((int) (key % PARTITIONS), KeyCodec.encodeLong(key)), value};
  }

  /** The table holds exactly the model's pairs, in key order (a scan), and counts as many. */
  static void assertHolds(StoreTable t, TreeMap<byte[], byte[]> model) {
    assertEquals(model.size(), t.count());
    try (StoreCursor c = t.scan(null, null)) {
      for (Map.Entry<byte[], byte[]> e : model.entrySet()) {
        assertTrue(c.valid(), "the scan ended before a key of the model");
        assertArrayEquals(e.getKey(), c.key());
        assertArrayEquals(e.getValue(), c.value());
        c.next();
      }
      assertFalse(c.valid(), "no pair beyond the model's");
    }
  }

  /** Commits job j1, checks its output against the model and that level 0 holds no file; returns the output. */
  private static StoreTable assertCommittedOutsideLevelZero(NodeStore store, TreeMap<byte[], byte[]> model, String why)
      throws RocksDBException {
    store.commit("j1");
    StoreTable out = store.require("out");
    assertHolds(out, model);
    assertEquals(0, out.levelZeroFiles(), why);
    return out;
  }

  private static long filesAt(StoreTable t, int level) throws RocksDBException {
    return Long.parseLong(t.db().getProperty(t.handle(), "rocksdb.num-files-at-level" + level).trim());
  }

  @Test
  void writersInKeyOrder_landInTheBottomLevel_asWritten(@TempDir Path dir) throws RocksDBException {
    TreeMap<byte[], byte[]> model = new TreeMap<>(Arrays::compareUnsigned);
    try (NodeStore store = NodeStore.open(dir)) {
      StoreTable t = jobOutput(store);
      // two writers, each over a key range of its own (two splits), their batches interleaved
      for (int batch = 0; batch < 40; batch++) {
        for (int writer = 1; writer <= 2; writer++) {
          List<byte[][]> pairs = new ArrayList<>();
          for (int i = 0; i < 250; i++) {
            long key = writer * 1_000_000L + batch * 250L + i;
            byte[][] p = pair(key, ("line " + key).getBytes());
            pairs.add(p);
            model.put(p[0], p[1]);
          }
          write(t, writer, pairs);
        }
      }
      StoreTable out = assertCommittedOutsideLevelZero(store, model,
          "files that overlap nothing are not left in level 0 to compact");
      assertEquals(2 * PARTITIONS, filesAt(out, 6), "one file per writer and partition, in the bottom level");
    }
  }

  @Test
  void writersOutOfOrder_keepTheLastWriteOfEachKey(@TempDir Path dir) {
    Random random = new Random(7);
    TreeMap<byte[], byte[]> model = new TreeMap<>(Arrays::compareUnsigned);
    try (NodeStore store = NodeStore.open(dir)) {
      StoreTable t = jobOutput(store);
      long[] next = new long[5];
      for (int batch = 0; batch < 120; batch++) {
        int writer = 1 + random.nextInt(4); // writer 4 breaks at once, the others sometime
        List<byte[][]> pairs = new ArrayList<>();
        for (int i = 0; i < 1 + random.nextInt(60); i++) {
          long key = writer * 1_000_000L + next[writer]; // each writer over keys of its own
          int dice = random.nextInt(1000);
          if (writer == 4 || dice < 3) {
            key = writer * 1_000_000L + random.nextInt((int) next[writer] + 1); // again, or back
          } else {
            next[writer] += 1 + random.nextInt(3);
          }
          byte[] value = new byte[dice < 2 ? StoreTable.LARGE_VALUE_BYTES + 10 : 1 + random.nextInt(40)];
          random.nextBytes(value);
          byte[][] p = pair(key, value);
          pairs.add(p);
          model.put(p[0], p[1]);
        }
        write(t, writer, pairs);
        if (batch == 30) {
          assertHolds(t, model); // a scan and a count while the job writes
        }
      }
      store.commit("j1");
      assertHolds(store.require("out"), model);
    }
  }

  @Test
  void moreLanesThanOpenFiles_finishTheOldestAndGoOn(@TempDir Path dir) throws RocksDBException {
    TreeMap<byte[], byte[]> model = new TreeMap<>(Arrays::compareUnsigned);
    int partitions = OrderedStreams.MAX_OPEN_FILES + 20;
    try (NodeStore store = NodeStore.open(dir)) {
      StoreTable t = jobOutput(store);
      for (int round = 0; round < 2; round++) {
        List<byte[][]> pairs = new ArrayList<>();
        for (int p = 0; p < partitions; p++) {
          byte[] stored = StoredKeys.storedKey(p, KeyCodec.encodeLong(round));
          byte[] value = {(byte) p, (byte) round};
          pairs.add(new byte[][] {stored, value});
          model.put(stored, value);
        }
        write(t, 1, pairs);
      }
      assertCommittedOutsideLevelZero(store, model, "");
    }
  }

  @Test
  void droppedWithOpenFiles_leavesNoFileAndRefusesWrites(@TempDir Path dir) throws IOException {
    try (NodeStore store = NodeStore.open(dir)) {
      StoreTable t = jobOutput(store);
      write(t, 1, List.<byte[][]>of(pair(1, new byte[] {1}), pair(2, new byte[] {2})));
      try (Stream<Path> files = Files.list(dir.resolve("ingest"))) {
        assertEquals(2, files.count(), "a file per partition written");
      }
      store.drop("sss-tmp-j1-0", false);
      long deadline = System.nanoTime() + 10_000_000_000L; // the files are forgotten in the background
      long left;
      do {
        try (Stream<Path> files = Files.list(dir.resolve("ingest"))) {
          left = files.count();
        }
      } while (left > 0 && System.nanoTime() < deadline);
      assertEquals(0, left, "the drop forgot the streams' files");
      StoreException e = assertThrows(StoreException.class, () -> write(t, 1, List.<byte[][]>of(pair(3, new byte[] {3}))));
      assertTrue(e.getMessage().contains("dropped"), e.getMessage());
    }
  }

  @Test
  void hundredsOfStreams_eachAFewPairs_finishTheOldestFilesAndReadAsWritten(@TempDir Path dir) throws RocksDBException {
    TreeMap<byte[], byte[]> model = new TreeMap<>(Arrays::compareUnsigned);
    int streams = OrderedStreams.MAX_OPEN_FILES + 200;
    try (NodeStore store = NodeStore.open(dir)) {
      StoreTable t = jobOutput(store);
      for (int round = 0; round < 2; round++) {
        for (int writer = 1; writer <= streams; writer++) {
          long key = writer * 10L + round; // each writer a range of its own, over all partitions
          byte[][] p = pair(key, new byte[] {(byte) writer, (byte) round});
          model.put(p[0], p[1]);
          write(t, writer, List.<byte[][]>of(p));
        }
      }
      assertCommittedOutsideLevelZero(store, model, "files of different writers share no key");
    }
  }

  @Test
  void aSmallBatchOfALargeArray_isGatheredCutToSize(@TempDir Path dir) {
    TableOptions bulk = TableOptions.newBuilder().setDisableWal(true).setDisableAutoCompaction(true).build();
    try (NodeStore store = NodeStore.open(dir)) {
      StoreTable between = store.createForJob("j1", "sss-tmp-j1-1", bulk, "", false); // between stages: no streams
      StoreTable output = jobOutput(store);
      for (StoreTable t : List.of(between, output)) {
        long before = SortedRuns.heldBytes();
        PackedBatch b = t.newPackedBatch(1 << 20, PackedBatch.stream(0, 1));
        b.put(pair(5, new byte[] {5})[0], new byte[] {5});
        b.commit();
        PackedBatch again = t.newPackedBatch(1 << 20, PackedBatch.stream(0, 1)); // not in order: gathered
        again.put(pair(5, new byte[] {6})[0], new byte[] {6});
        again.commit();
        long held = SortedRuns.heldBytes() - before;
        assertTrue(held < 64 << 10, t.name() + " holds " + held + " bytes for two pairs");
      }
    }
  }
}
