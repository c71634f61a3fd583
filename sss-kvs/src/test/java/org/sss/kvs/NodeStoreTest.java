package org.sss.kvs;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNotSame;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertSame;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.nio.ByteBuffer;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.Map;
import java.util.Random;
import java.util.TreeMap;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.function.Executable;
import org.junit.jupiter.api.io.TempDir;
import org.rocksdb.ColumnFamilyDescriptor;
import org.rocksdb.ColumnFamilyHandle;
import org.rocksdb.ColumnFamilyOptions;
import org.rocksdb.DBOptions;
import org.rocksdb.Options;
import org.rocksdb.RocksDB;
import org.sss.core.cluster.JobTables;
import org.sss.core.cluster.PartitionMap;
import org.sss.core.keys.KeyCodec;
import org.sss.core.proto.Compression;
import org.sss.core.proto.DataType;
import org.sss.core.proto.ErrorCode;
import org.sss.core.proto.TableInfo;
import org.sss.core.proto.TableOptions;
import org.sss.core.keys.StoredKeys;

class NodeStoreTest {
  private static final TableOptions DEFAULTS = TableOptions.getDefaultInstance();

  @TempDir
  Path dir;

  private NodeStore store;

  @BeforeEach
  void open() {
    store = NodeStore.open(dir);
  }

  @AfterEach
  void close() {
    if (store != null) {
      store.close();
    }
  }

  private void reopen() {
    store.close();
    store = null;
    store = NodeStore.open(dir);
  }

  // ---------------------------------------------------------------- helpers

  private static byte[] bytes(String s) {
    return s.getBytes(StandardCharsets.UTF_8);
  }

  private static void put(StoreTable t, Map<byte[], byte[]> pairs) {
    try (TableBatch b = t.newBatch()) {
      pairs.forEach(b::put);
      b.commit();
    }
  }

  private static void put(StoreTable t, byte[] key, byte[] value) {
    try (TableBatch b = t.newBatch()) {
      b.put(key, value);
      b.commit();
    }
  }

  private static List<byte[][]> drain(StoreCursor c) {
    List<byte[][]> out = new ArrayList<>();
    for (; c.valid(); c.next()) {
      out.add(new byte[][] {c.key(), c.value()});
    }
    return out;
  }

  private static List<byte[][]> scanAll(StoreTable t, byte[] lower, byte[] upper) {
    try (StoreCursor c = t.scan(lower, upper)) {
      return drain(c);
    }
  }

  private static List<byte[][]> scanRanges(StoreTable t, List<byte[][]> ranges, boolean ordered) {
    try (StoreCursor c = t.scanRanges(ranges, ordered)) {
      return drain(c);
    }
  }

  private static void assertPairs(List<byte[][]> expected, List<byte[][]> actual) {
    assertEquals(expected.size(), actual.size(), "number of pairs");
    for (int i = 0; i < expected.size(); i++) {
      int at = i;
      assertArrayEquals(expected.get(i)[0], actual.get(i)[0], () -> "key " + at);
      assertArrayEquals(expected.get(i)[1], actual.get(i)[1], () -> "value " + at);
    }
  }

  private static List<byte[][]> entries(TreeMap<byte[], byte[]> map) {
    List<byte[][]> out = new ArrayList<>();
    map.forEach((k, v) -> out.add(new byte[][] {k, v}));
    return out;
  }

  private static StoreException assertStore(ErrorCode code, Executable call) {
    StoreException e = assertThrows(StoreException.class, call);
    assertEquals(code, e.code(), e.getMessage());
    return e;
  }

  private static List<String> names(NodeStore s) {
    return s.tables().stream().map(StoreTable::name).toList();
  }

  // ---------------------------------------------------------------- catalog

  @Test
  void create_listsTablesSortedByName() {
    StoreTable b = store.create("b", DEFAULTS, false);
    store.create("a", DEFAULTS, false);
    store.create("c.d-e_F9", DEFAULTS, false);
    assertEquals(List.of("a", "b", "c.d-e_F9"), names(store));
    assertSame(b, store.require("b"));
    assertSame(b, store.table("b").orElseThrow());
    assertTrue(store.table("zzz").isEmpty());
  }

  @Test
  void create_existingTableThrowsTableExists() {
    store.create("t", DEFAULTS, false);
    StoreException e = assertStore(ErrorCode.TABLE_EXISTS, () -> store.create("t", DEFAULTS, false));
    assertTrue(e.getMessage().contains("'t'"), e.getMessage());
  }

  @Test
  void create_ifAbsentReturnsExistingWithItsOptions() {
    TableOptions first = TableOptions.newBuilder().setCompression(Compression.ZSTD).build();
    StoreTable t = store.create("t", first, false);
    put(t, bytes("k"), bytes("v"));
    StoreTable again = store.create("t", TableOptions.newBuilder().setCompression(Compression.NONE).build(), true);
    assertSame(t, again);
    assertEquals(first, again.options());
    assertArrayEquals(bytes("v"), again.get(bytes("k")), "existing data untouched");
    assertEquals(1, store.tables().size());
  }

  @Test
  void require_missingThrowsNoSuchTableNamingIt() {
    StoreException e = assertStore(ErrorCode.NO_SUCH_TABLE, () -> store.require("ghost"));
    assertTrue(e.getMessage().contains("ghost"), e.getMessage());
  }

  @Test
  void drop_removesTableAndReportsMissing() {
    store.create("t", DEFAULTS, false);
    store.create("u", DEFAULTS, false);
    assertTrue(store.drop("t", false));
    assertEquals(List.of("u"), names(store));
    assertStore(ErrorCode.NO_SUCH_TABLE, () -> store.require("t"));
    assertStore(ErrorCode.NO_SUCH_TABLE, () -> store.drop("t", false));
    assertFalse(store.drop("t", true));
  }

  @Test
  void infoIfLive_tableDroppedAfterListingIsSkippedNotAnError() {
    store.create("t", DEFAULTS, false);
    store.create("u", DEFAULTS, false);
    List<StoreTable> snapshot = List.copyOf(store.tables());
    store.drop("t", false);
    List<String> live = snapshot.stream().flatMap(t -> t.infoIfLive().stream()).map(i -> i.getName()).toList();
    assertEquals(List.of("u"), live);
    StoreTable dropped = snapshot.stream().filter(t -> t.name().equals("t")).findFirst().orElseThrow();
    assertStore(ErrorCode.NO_SUCH_TABLE, dropped::info);
  }

  @Test
  void create_illegalNamesRejectedAsBadRequest() {
    String[] bad = {"", "default", "a/b", "a b", "tab\t", "ünï", "a:b", "x".repeat(201), "../up"};
    for (String name : bad) {
      StoreException e = assertStore(ErrorCode.BAD_REQUEST, () -> store.create(name, DEFAULTS, false));
      assertTrue(e.getMessage().contains("illegal table name"), e.getMessage());
    }
    assertStore(ErrorCode.BAD_REQUEST, () -> store.create(null, DEFAULTS, false));
    assertEquals(List.of(), names(store));
    assertEquals("x".repeat(200), store.create("x".repeat(200), DEFAULTS, false).name(), "200 characters is legal");
  }

  // ---------------------------------------------------------------- reads and writes

  @Test
  void batch_putGetMultiGetDelete() {
    StoreTable t = store.create("t", DEFAULTS, false);
    try (TableBatch b = t.newBatch()) {
      b.put(bytes("a"), bytes("1"));
      b.put(bytes("b"), new byte[0]);
      b.put(new byte[0], bytes("empty key"));
      b.put(new byte[] {0, (byte) 0xFF}, new byte[100_000]);
      assertEquals(4, b.count());
      assertNull(t.get(bytes("a")), "nothing visible before commit");
      b.commit();
    }
    assertArrayEquals(bytes("1"), t.get(bytes("a")));
    assertArrayEquals(new byte[0], t.get(bytes("b")), "an empty value is not an absent value");
    assertArrayEquals(bytes("empty key"), t.get(new byte[0]));
    assertArrayEquals(new byte[100_000], t.get(new byte[] {0, (byte) 0xFF}));
    assertNull(t.get(bytes("zz")));

    List<byte[]> got = t.multiGet(List.of(bytes("zz"), bytes("b"), bytes("a"), bytes("nope"), bytes("a")));
    assertEquals(5, got.size());
    assertNull(got.get(0));
    assertArrayEquals(new byte[0], got.get(1));
    assertArrayEquals(bytes("1"), got.get(2));
    assertNull(got.get(3));
    assertArrayEquals(bytes("1"), got.get(4));

    t.delete(List.of(bytes("a"), bytes("never-there")));
    assertNull(t.get(bytes("a")));
    assertArrayEquals(new byte[0], t.get(bytes("b")));
    assertEquals(3, t.count());
  }

  @Test
  void batch_laterPutOfSameKeyWins() {
    StoreTable t = store.create("t", DEFAULTS, false);
    try (TableBatch b = t.newBatch()) {
      b.put(bytes("k"), bytes("old"));
      b.delete(bytes("k"));
      b.put(bytes("k"), bytes("new"));
      b.commit();
    }
    assertArrayEquals(bytes("new"), t.get(bytes("k")));
    assertEquals(1, t.count());
  }

  @Test
  void batch_putFromDirectBuffers() {
    StoreTable t = store.create("t", DEFAULTS, false);
    ByteBuffer key = ByteBuffer.allocateDirect(8);
    ByteBuffer value = ByteBuffer.allocateDirect(16);
    key.put(KeyCodec.encodeLong(5)).flip();
    value.put(bytes("direct")).flip();
    try (TableBatch b = t.newBatch()) {
      b.put(key, value);
      b.commit();
    }
    assertArrayEquals(bytes("direct"), t.get(KeyCodec.encodeLong(5)));
  }

  @Test
  void multiGet_ofNoKeysIsEmpty() {
    StoreTable t = store.create("t", DEFAULTS, false);
    assertEquals(List.of(), t.multiGet(List.of()));
  }

  @Test
  void tables_areIsolated() {
    StoreTable a = store.create("a", DEFAULTS, false);
    StoreTable b = store.create("b", DEFAULTS, false);
    put(a, bytes("k"), bytes("from a"));
    assertNull(b.get(bytes("k")));
    assertEquals(0, b.count());
    assertEquals(1, a.count());
  }

  // ---------------------------------------------------------------- scans

  @Test
  void scan_returnsHalfOpenRangeInOrder() {
    StoreTable t = store.create("t", DEFAULTS, false);
    TreeMap<byte[], byte[]> all = new TreeMap<>(Arrays::compareUnsigned);
    Random rnd = new Random(1);
    for (int i = 0; i < 2_000; i++) {
      long k = rnd.nextLong();
      all.put(KeyCodec.encodeLong(k), bytes("v" + k));
    }
    put(t, all);

    assertPairs(entries(all), scanAll(t, null, null));

    byte[] lower = KeyCodec.encodeLong(-1_000_000_000_000_000_000L);
    byte[] upper = KeyCodec.encodeLong(3_000_000_000_000_000_000L);
    TreeMap<byte[], byte[]> expected = new TreeMap<>(all.subMap(lower, true, upper, false));
    assertTrue(expected.size() > 100 && expected.size() < all.size(), "a real sub-range");
    assertPairs(entries(expected), scanAll(t, lower, upper));
  }

  @Test
  void scan_lowerIsInclusiveAndUpperExclusive() {
    StoreTable t = store.create("t", DEFAULTS, false);
    for (long k = 0; k < 10; k++) {
      put(t, KeyCodec.encodeLong(k), new byte[] {(byte) k});
    }
    List<byte[][]> got = scanAll(t, KeyCodec.encodeLong(3), KeyCodec.encodeLong(7));
    assertEquals(List.of(3L, 4L, 5L, 6L), got.stream().map(p -> KeyCodec.decodeLong(p[0])).toList());
    assertEquals(List.of(7L, 8L, 9L),
        scanAll(t, KeyCodec.encodeLong(7), null).stream().map(p -> KeyCodec.decodeLong(p[0])).toList());
    assertEquals(0, scanAll(t, KeyCodec.encodeLong(5), KeyCodec.encodeLong(5)).size(), "empty range");
  }

  @Test
  void scan_seesSnapshotTakenAtOpen() {
    StoreTable t = store.create("t", DEFAULTS, false);
    put(t, bytes("a"), bytes("1"));
    put(t, bytes("c"), bytes("3"));
    try (StoreCursor c = t.scan(null, null)) {
      put(t, bytes("b"), bytes("2"));
      t.delete(List.of(bytes("c")));
      List<byte[][]> got = drain(c);
      assertEquals(2, got.size());
      assertArrayEquals(bytes("a"), got.get(0)[0]);
      assertArrayEquals(bytes("c"), got.get(1)[0]);
    }
    assertEquals(2, t.count(), "a, b");
  }

  @Test
  void scan_ofEmptyTableIsInvalidAtOnce() {
    StoreTable t = store.create("t", DEFAULTS, false);
    try (StoreCursor c = t.scan(null, null)) {
      assertFalse(c.valid());
    }
    try (StoreCursor c = t.scanRanges(List.of(), true)) {
      assertFalse(c.valid());
    }
    try (StoreCursor c = t.scanRanges(List.of(), false)) {
      assertFalse(c.valid());
    }
  }

  @Test
  void cursor_closeTwiceIsHarmless() {
    StoreTable t = store.create("t", DEFAULTS, false);
    put(t, bytes("a"), bytes("1"));
    StoreCursor ordered = t.scanRanges(List.<byte[][]>of(KeyRanges.partition(0, new byte[0])), true);
    ordered.close();
    ordered.close();
    StoreCursor concat = t.scan(null, null);
    concat.close();
    concat.close();
    assertEquals(1, t.count(), "the table still works after double closes");
  }

  /** Writes {@code n} random long keys to their partitions and returns them by partition. */
  private static Map<Integer, TreeMap<byte[], byte[]>> fillPartitions(StoreTable t, PartitionMap map, int n, long seed) {
    Map<Integer, TreeMap<byte[], byte[]>> byPartition = new TreeMap<>();
    Random rnd = new Random(seed);
    try (TableBatch b = t.newBatch()) {
      for (int i = 0; i < n; i++) {
        byte[] user = KeyCodec.encodeLong(rnd.nextLong());
        int p = map.partitionOf(user);
        byte[] stored = StoredKeys.storedKey(p, user);
        byte[] value = bytes("p" + p + "/" + i);
        b.put(stored, value);
        byPartition.computeIfAbsent(p, x -> new TreeMap<>(Arrays::compareUnsigned)).put(stored, value);
      }
      b.commit();
    }
    return byPartition;
  }

  @Test
  void scanRanges_orderedMergesPartitionsIntoUserKeyOrder() {
    StoreTable t = store.create("t", DEFAULTS, false);
    PartitionMap map = PartitionMap.roundRobin(6, 1);
    Map<Integer, TreeMap<byte[], byte[]>> byPartition = fillPartitions(t, map, 3_000, 2);
    t.flush(); // merge across SST files as well as the memtable
    fillPartitions(t, map, 1_000, 3);

    List<Integer> scanned = List.of(5, 0, 3, 1); // not every partition, not in order
    List<byte[][]> ranges = new ArrayList<>();
    TreeMap<byte[], byte[]> expected = new TreeMap<>(
        (a, b) -> Arrays.compareUnsigned(a, 2, a.length, b, 2, b.length));
    for (int p : scanned) {
      ranges.add(KeyRanges.partition(p, new byte[0]));
    }
    try (StoreCursor c = t.scan(null, null)) {
      for (; c.valid(); c.next()) {
        if (scanned.contains(StoredKeys.partitionOf(c.key()))) {
          expected.put(c.key(), c.value());
        }
      }
    }
    List<byte[][]> got = scanRanges(t, ranges, true);
    assertTrue(got.size() > 2_000);
    assertPairs(entries(expected), got);
    for (int i = 1; i < got.size(); i++) {
      long prev = KeyCodec.decodeLong(StoredKeys.scannedKey(got.get(i - 1)[0]));
      long cur = KeyCodec.decodeLong(StoredKeys.scannedKey(got.get(i)[0]));
      assertTrue(prev < cur, "user keys ascend: " + prev + " then " + cur);
    }
    assertTrue(byPartition.keySet().containsAll(scanned), "every scanned partition holds data");
  }

  @Test
  void scanRanges_unorderedYieldsPartitionAfterPartitionInRequestOrder() {
    StoreTable t = store.create("t", DEFAULTS, false);
    PartitionMap map = PartitionMap.roundRobin(4, 1);
    Map<Integer, TreeMap<byte[], byte[]>> byPartition = fillPartitions(t, map, 2_000, 4);

    List<Integer> scanned = List.of(3, 1, 2); // partition 0 left out
    List<byte[][]> ranges = new ArrayList<>();
    List<byte[][]> expected = new ArrayList<>();
    for (int p : scanned) {
      ranges.add(KeyRanges.partition(p, new byte[0]));
      expected.addAll(entries(byPartition.get(p)));
    }
    List<byte[][]> got = scanRanges(t, ranges, false);
    assertPairs(expected, got);
    List<Integer> partitionRuns = new ArrayList<>();
    for (byte[][] pair : got) {
      int p = StoredKeys.partitionOf(pair[0]);
      if (partitionRuns.isEmpty() || partitionRuns.get(partitionRuns.size() - 1) != p) {
        partitionRuns.add(p);
      }
    }
    assertEquals(scanned, partitionRuns, "each partition is one run, in the order asked");
  }

  @Test
  void scanRanges_skipsEmptyRangesInBothModes() {
    StoreTable t = store.create("t", DEFAULTS, false);
    put(t, StoredKeys.storedKey(2, KeyCodec.encodeLong(1)), bytes("x"));
    put(t, StoredKeys.storedKey(4, KeyCodec.encodeLong(0)), bytes("y"));
    List<byte[][]> ranges = List.of(KeyRanges.partition(1, new byte[0]), KeyRanges.partition(2, new byte[0]),
        KeyRanges.partition(3, new byte[0]), KeyRanges.partition(4, new byte[0]), KeyRanges.partition(5, new byte[0]));
    List<byte[][]> concat = scanRanges(t, ranges, false);
    assertEquals(List.of("x", "y"), concat.stream().map(p -> new String(p[1], StandardCharsets.UTF_8)).toList());
    List<byte[][]> merged = scanRanges(t, ranges, true);
    assertEquals(List.of("y", "x"), merged.stream().map(p -> new String(p[1], StandardCharsets.UTF_8)).toList(),
        "merged by user key: 0 before 1");
  }

  @Test
  void scanRanges_keyPrefixSelectsKeysOfPartitionStartingWithIt() {
    StoreTable t = store.create("t", DEFAULTS, false);
    String[] words = {"", "a", "ab", "ab\u0000", "abc", "abd", "ab\u00ff", "ac", "b", "aa"};
    for (int p = 0; p < 3; p++) {
      for (String w : words) {
        put(t, StoredKeys.storedKey(p, KeyCodec.encodeString(w)), bytes(p + ":" + w));
      }
    }
    byte[] prefix = bytes("ab");
    List<String> got = scanAll(t, KeyRanges.partition(1, prefix)[0], KeyRanges.partition(1, prefix)[1]).stream()
        .map(p -> KeyCodec.decodeString(StoredKeys.scannedKey(p[0])))
        .toList();
    assertEquals(List.of("ab", "ab\u0000", "abc", "abd", "ab\u00ff"), got);

    // several partitions, merged: each word once per partition, ordered by the user key
    List<byte[][]> ranges = List.of(KeyRanges.partition(2, prefix), KeyRanges.partition(0, prefix));
    List<byte[][]> merged = scanRanges(t, ranges, true);
    assertEquals(10, merged.size());
    for (byte[][] pair : merged) {
      String w = KeyCodec.decodeString(StoredKeys.scannedKey(pair[0]));
      assertTrue(w.startsWith("ab"), w);
      assertTrue(StoredKeys.partitionOf(pair[0]) != 1);
    }
    for (int i = 1; i < merged.size(); i++) {
      assertTrue(Arrays.compareUnsigned(StoredKeys.scannedKey(merged.get(i - 1)[0]),
          StoredKeys.scannedKey(merged.get(i)[0])) <= 0);
    }
  }

  @Test
  void scanRanges_prefixEndingInFfAndLastPartitionReachTheEnd() {
    StoreTable t = store.create("t", DEFAULTS, false);
    int last = PartitionMap.MAX_PARTITIONS; // 0xFFFF: the last two-byte prefix
    byte[] ff = {(byte) 0xFF};
    put(t, StoredKeys.storedKey(last, new byte[] {(byte) 0xFF, 1}), bytes("in"));
    put(t, StoredKeys.storedKey(last, new byte[] {(byte) 0xFE, 1}), bytes("out"));
    put(t, StoredKeys.storedKey(last - 1, new byte[] {(byte) 0xFF}), bytes("other partition"));
    byte[][] range = KeyRanges.partition(last, ff);
    assertNull(range[1], "no upper bound after FF FF FF");
    assertEquals(List.of("in"), scanAll(t, range[0], range[1]).stream()
        .map(p -> new String(p[1], StandardCharsets.UTF_8)).toList());
    byte[][] whole = KeyRanges.partition(last, new byte[0]);
    assertEquals(2, scanAll(t, whole[0], whole[1]).size());
  }

  @Test
  void count_matchesPairsWritten() {
    StoreTable t = store.create("t", DEFAULTS, false);
    assertEquals(0, t.count());
    Map<byte[], byte[]> pairs = new TreeMap<>(Arrays::compareUnsigned);
    for (int i = 0; i < 1_234; i++) {
      pairs.put(KeyCodec.encodeLong(i), new byte[] {1});
    }
    put(t, pairs);
    assertEquals(1_234, t.count());
    t.delete(List.of(KeyCodec.encodeLong(0), KeyCodec.encodeLong(1)));
    assertEquals(1_232, t.count());
  }

  @Test
  void info_reportsPairsAndBytesAfterFlush() {
    TableOptions options = TableOptions.newBuilder().setKeyType(DataType.LONG).build();
    StoreTable t = store.create("t", options, false);
    Map<byte[], byte[]> pairs = new TreeMap<>(Arrays::compareUnsigned);
    for (int i = 0; i < 5_000; i++) {
      pairs.put(KeyCodec.encodeLong(i), bytes("value-" + i));
    }
    put(t, pairs);
    t.flush();
    TableInfo info = t.info();
    assertEquals("t", info.getName());
    assertEquals(options, info.getOptions());
    assertTrue(info.getPairs() > 0, "pairs " + info.getPairs());
    assertTrue(info.getBytes() > 0, "bytes " + info.getBytes());
    t.compact();
    assertEquals(5_000, t.count());
  }

  @Test
  void info_reportsBackgroundWorkUntilFlushesAndCompactionsAreDone() throws InterruptedException {
    StoreTable t = store.create("busy", TableOptions.newBuilder().setKeyType(DataType.LONG).build(), false);
    Map<byte[], byte[]> pairs = new TreeMap<>(Arrays::compareUnsigned);
    for (int i = 0; i < 5_000; i++) {
      pairs.put(KeyCodec.encodeLong(i), bytes("value-" + i));
    }
    put(t, pairs);
    t.flush();
    t.compact();
    long deadline = System.nanoTime() + 10_000_000_000L;
    while (t.info().getBackgroundWork() && System.nanoTime() < deadline) {
      Thread.sleep(20);
    }
    assertFalse(t.info().getBackgroundWork(), "an idle, compacted table must not report background work");
  }

  // ---------------------------------------------------------------- ingest

  @Test
  void ingestSorted_100kPairsThenScanEqual() {
    StoreTable t = store.create("t", TableOptions.newBuilder().setCompression(Compression.NONE)
        .setDisableWal(true).setDisableAutoCompaction(true).build(), false);
    int n = 100_000;
    List<byte[][]> pairs = new ArrayList<>(n);
    for (int i = 0; i < n; i++) {
      pairs.add(new byte[][] {StoredKeys.storedKey(i / 10_000, KeyCodec.encodeLong(i - 50_000)),
          bytes("value-" + i)});
    }
    t.ingestSorted(pairs);
    assertPairs(pairs, scanAll(t, null, null));
    assertEquals(n, t.count());
    assertArrayEquals(bytes("value-12345"), t.get(pairs.get(12_345)[0]));
    try (var left = Files.list(dir.resolve("ingest"))) {
      assertEquals(0, left.count(), "the ingest file was moved or deleted");
    } catch (java.io.IOException e) {
      throw new AssertionError(e);
    }
  }

  @Test
  void ingestSorted_nothingIsANoOp() {
    StoreTable t = store.create("t", DEFAULTS, false);
    t.ingestSorted(List.of());
    assertEquals(0, t.count());
  }

  @Test
  void ingestSorted_unsortedRunThrowsStorageErrorAndLeavesTableUntouched() {
    StoreTable t = store.create("t", DEFAULTS, false);
    put(t, bytes("keep"), bytes("1"));
    List<byte[][]> unsorted = List.of(new byte[][] {bytes("b"), bytes("2")}, new byte[][] {bytes("a"), bytes("1")});
    assertStore(ErrorCode.STORAGE_ERROR, () -> t.ingestSorted(unsorted));
    assertEquals(1, t.count());
  }

  @Test
  void ingestSorted_withZstdAndLz4Tables() {
    for (Compression c : new Compression[] {Compression.LZ4, Compression.ZSTD}) {
      StoreTable t = store.create("t-" + c, TableOptions.newBuilder().setCompression(c).build(), false);
      List<byte[][]> pairs = new ArrayList<>();
      for (int i = 0; i < 1_000; i++) {
        pairs.add(new byte[][] {KeyCodec.encodeLong(i), bytes("repeat repeat repeat " + i)});
      }
      t.ingestSorted(pairs);
      assertPairs(pairs, scanAll(t, null, null));
    }
  }

  @Test
  void runFile_isNotVisibleUntilIngestedAndThenNewerThanEarlierWrites_andClosingUningestedLeavesNothing() {
    StoreTable t = store.create("t", DEFAULTS, false);
    put(t, bytes("a"), bytes("old"));
    try (RunFile run = t.newRunFile()) {
      run.put(bytes("a"), bytes("run"));
      run.put(bytes("b"), bytes("run"));
      assertEquals(2, run.pairs());
      assertArrayEquals(bytes("old"), t.get(bytes("a")), "a run is apart from the table until ingested");
      assertEquals(1, t.count());
      run.ingest();
    }
    assertArrayEquals(bytes("run"), t.get(bytes("a")), "an ingested run is newer than what was written before");
    assertEquals(2, t.count());
    try (RunFile abandoned = t.newRunFile()) {
      abandoned.put(bytes("c"), bytes("never"));
    }
    assertEquals(2, t.count(), "a run closed without ingesting changes nothing");
    try (var left = Files.list(dir.resolve("ingest"))) {
      assertEquals(0, left.count(), "no run file stays behind");
    } catch (java.io.IOException e) {
      throw new AssertionError(e);
    }
    RunFile late = t.newRunFile();
    late.put(bytes("d"), bytes("1"));
    store.drop("t", false);
    assertStore(ErrorCode.NO_SUCH_TABLE, late::ingest);
  }

  // ---------------------------------------------------------------- restart

  @Test
  void openedAfterFlushedClose_isTrueForANewStoreAndAfterAClose_andTheMarkIsGoneWhileOpen() {
    assertTrue(store.openedAfterFlushedClose(), "a new store has nothing to lose");
    store.create("nowal", TableOptions.newBuilder().setDisableWal(true).build(), false);
    reopen();
    assertTrue(store.openedAfterFlushedClose(), "closed with every table flushed");
    assertFalse(Files.exists(dir.resolve(NodeStore.CLOSED_FLUSHED)),
        "removed while open: a crash from here on is seen at the next open");
  }

  @Test
  void reopen_keepsTablesOptionsAndData() {
    Map<String, TableOptions> created = new TreeMap<>();
    created.put("plain", DEFAULTS);
    created.put("zstd-multi", TableOptions.newBuilder().setCompression(Compression.ZSTD).setMultiValued(true)
        .setKeyType(DataType.LONG).setValueType(DataType.STRING).build());
    created.put("none-string", TableOptions.newBuilder().setCompression(Compression.NONE)
        .setKeyType(DataType.STRING).setValueType(DataType.LONG).setDisableAutoCompaction(true).build());
    created.put("nowal", TableOptions.newBuilder().setDisableWal(true).setKeyType(DataType.BYTES).build());
    for (var e : created.entrySet()) {
      store.create(e.getKey(), e.getValue(), false);
    }
    store.create("dropped", DEFAULTS, false);
    store.drop("dropped", false);
    for (String name : List.of("plain", "zstd-multi", "none-string")) {
      StoreTable t = store.require(name);
      for (int i = 0; i < 500; i++) {
        put(t, KeyCodec.encodeLong(i), bytes(name + i));
      }
    }

    reopen();

    assertEquals(List.copyOf(created.keySet()), names(store));
    for (var e : created.entrySet()) {
      assertEquals(e.getValue(), store.require(e.getKey()).options(), e.getKey());
    }
    for (String name : List.of("plain", "zstd-multi", "none-string")) {
      StoreTable t = store.require(name);
      assertEquals(500, t.count(), name);
      assertArrayEquals(bytes(name + 499), t.get(KeyCodec.encodeLong(499)));
    }
    // the reopened tables are fully usable
    StoreTable t = store.require("plain");
    put(t, bytes("after"), bytes("reopen"));
    reopen();
    assertArrayEquals(bytes("reopen"), store.require("plain").get(bytes("after")));
    assertEquals(501, store.require("plain").count());
  }

  @Test
  void reopen_keepsFlushedAndUnflushedData() {
    StoreTable t = store.create("t", DEFAULTS, false);
    put(t, bytes("flushed"), bytes("1"));
    t.flush();
    put(t, bytes("in-wal"), bytes("2"));
    reopen();
    StoreTable again = store.require("t");
    assertArrayEquals(bytes("1"), again.get(bytes("flushed")));
    assertArrayEquals(bytes("2"), again.get(bytes("in-wal")));
  }

  @Test
  void open_dropsColumnFamilyWithoutCatalogEntry() throws Exception {
    store.create("real", DEFAULTS, false);
    store.close();
    store = null;
    // simulate a crash between creating the column family and writing its catalog entry
    String path = dir.resolve("rocksdb").toString();
    List<byte[]> families;
    try (Options o = new Options()) {
      families = RocksDB.listColumnFamilies(o, path);
    }
    List<ColumnFamilyDescriptor> descriptors = new ArrayList<>();
    for (byte[] f : families) {
      descriptors.add(new ColumnFamilyDescriptor(f, new ColumnFamilyOptions()));
    }
    List<ColumnFamilyHandle> handles = new ArrayList<>();
    try (DBOptions o = new DBOptions(); RocksDB db = RocksDB.open(o, path, descriptors, handles)) {
      handles.add(db.createColumnFamily(new ColumnFamilyDescriptor(bytes("orphan"), new ColumnFamilyOptions())));
      handles.forEach(ColumnFamilyHandle::close);
    }
    descriptors.forEach(d -> d.getOptions().close());

    store = NodeStore.open(dir);
    assertEquals(List.of("real"), names(store));
    store.close();
    store = null;
    try (Options o = new Options()) {
      List<String> left = RocksDB.listColumnFamilies(o, path).stream()
          .map(f -> new String(f, StandardCharsets.UTF_8)).toList();
      assertFalse(left.contains("orphan"), left.toString());
    }
    store = NodeStore.open(dir);
    store.create("orphan", DEFAULTS, false);
    assertEquals(0, store.require("orphan").count());
  }

  private List<String> families() throws Exception {
    try (Options o = new Options()) {
      return RocksDB.listColumnFamilies(o, dir.resolve("rocksdb").toString()).stream()
          .map(f -> new String(f, StandardCharsets.UTF_8)).toList();
    }
  }

  private static final TableOptions INTERMEDIATE = JobTables.betweenStages(DataType.STRING, DataType.LONG);

  private static void putOne(StoreTable t, String key, String value) {
    try (TableBatch b = t.newBatch()) {
      b.put(bytes(key), bytes(value));
      b.commit();
    }
  }

  /** A profile no store starts with spares of (compressed, but not compacted on its own). */
  private static final TableOptions UNCOMPACTED = TableOptions.newBuilder().setDisableWal(true)
      .setDisableAutoCompaction(true).setCompression(Compression.ZSTD).setMultiValued(true).build();

  @Test
  void aNewStore_startsWithSparesOfTheTablesBetweenStages_whichItsFirstSuchTableTakes() throws Exception {
    assertEquals(SpareFamilies.PER_PROFILE, store.spareCount());
    List<String> before = families();
    assertEquals(1 + SpareFamilies.PER_PROFILE, before.size(), "the default family and the spares: " + before);
    putOne(store.create("first", INTERMEDIATE, false), "k", "v");
    store.awaitBackground();
    assertEquals(before, families(), "no column family created");
    assertEquals(SpareFamilies.PER_PROFILE - 1, store.spareCount());
    reopen();
    assertEquals(SpareFamilies.PER_PROFILE - 1, store.spareCount(), "spares are recorded, and reopened");
    assertArrayEquals(bytes("v"), store.require("first").get(bytes("k")));
    assertEquals(before, families());
  }

  @Test
  void create_afterFirstOfAProfileTakesASpareFamily_whichSurvivesRestart() throws Exception {
    int atStart = store.spareCount();
    store.create("first", UNCOMPACTED, false);
    store.awaitBackground();
    assertEquals(atStart + SpareFamilies.PER_PROFILE, store.spareCount());
    // same column-family profile, other catalog-only options: served by a spare
    TableOptions sameProfile = UNCOMPACTED.toBuilder().setDisableWal(false).setMultiValued(false).build();
    putOne(store.create("second", sameProfile, false), "k", "v");
    assertEquals(atStart + SpareFamilies.PER_PROFILE - 1, store.spareCount());
    // another profile is not served by these spares
    store.create("third", DEFAULTS, false);
    store.awaitBackground();
    assertEquals(atStart + 2 * SpareFamilies.PER_PROFILE - 1, store.spareCount());
    reopen();
    assertEquals(List.of("first", "second", "third"), names(store));
    assertEquals(sameProfile, store.require("second").options());
    assertArrayEquals(bytes("v"), store.require("second").get(bytes("k")));
    assertEquals(atStart + 2 * SpareFamilies.PER_PROFILE - 1, store.spareCount(), "spares are reopened, not recreated");
    assertFalse(families().contains("second"), "'second' lives in a spare's family");
  }

  @Test
  void drop_ofASmallTableFromASpareEmptiesItsFamilyForTheNextTable() throws Exception {
    store.create("warm", INTERMEDIATE, false);
    store.awaitBackground();
    int spares = store.spareCount();
    StoreTable used = store.create("used", INTERMEDIATE, false);
    for (int i = 0; i < 1000; i++) {
      putOne(used, "k" + i, "v" + i);
    }
    used.flush();
    List<String> before = families();
    store.drop("used", false);
    store.awaitBackground();
    assertEquals(before, families(), "no column family created or dropped");
    assertEquals(spares, store.spareCount(), "the family is a spare again");

    reopen(); // the recycled spare is recorded as one
    assertEquals(spares, store.spareCount());
    for (int i = 0; i < SpareFamilies.PER_PROFILE; i++) {
      StoreTable t = store.create("again" + i, INTERMEDIATE, false);
      assertEquals(0, t.count(), "a table made from a recycled family starts empty");
      assertEquals(0, t.info().getPairs());
      assertEquals(store.require("warm").info().getBytes(), t.info().getBytes(), "as a new table's");
    }
  }

  @Test
  void drop_whileACursorIsOpenDropsTheFamilyInsteadOfReusingIt() throws Exception {
    store.create("warm", INTERMEDIATE, false);
    store.awaitBackground();
    int spares = store.spareCount();
    StoreTable used = store.create("used", INTERMEDIATE, false);
    putOne(used, "k", "v");
    List<String> before = families();
    try (StoreCursor c = used.scan(null, null)) {
      store.drop("used", false);
      store.awaitBackground();
      assertTrue(c.valid());
      assertArrayEquals(bytes("v"), c.value(), "the open cursor still reads the dropped table");
    }
    assertEquals(before.size() - 1, families().size(), "its family was dropped");
    assertEquals(spares - 1, store.spareCount());
  }

  private static final TableOptions BULK = TableOptions.newBuilder().setDisableWal(true)
      .setDisableAutoCompaction(true).setCompression(Compression.NONE).build();

  private static byte[] key(int i) {
    return KeyCodec.encodeLong(i);
  }

  @Test
  void bulkTable_packedWritesAreReadableAtOnceInKeyOrder_andTheLastWriteOfAKeyWins() {
    StoreTable t = store.create("bulk", BULK, false);
    Random r = new Random(3);
    java.util.TreeMap<Integer, byte[]> expected = new java.util.TreeMap<>();
    for (int batch = 0; batch < 5; batch++) {
      PackedBatch b = t.newPackedBatch(64);
      for (int i = 0; i < 1000; i++) {
        int k = r.nextInt(3000); // repeats, within a batch and across batches
        byte[] v = bytes("v" + batch + "-" + i);
        b.put(key(k), v);
        expected.put(k, v);
      }
      b.commit();
    }
    assertEquals(5000, t.info().getPairs(), "gathered pairs count in the stats before they are stored");
    assertEquals(expected.size(), t.count());
    List<byte[][]> all = scanAll(t, null, null);
    assertEquals(expected.size(), all.size());
    int i = 0;
    for (var e : expected.entrySet()) {
      assertArrayEquals(key(e.getKey()), all.get(i)[0], "key order");
      assertArrayEquals(e.getValue(), all.get(i)[1], "last write wins for key " + e.getKey());
      i++;
    }
    // writes after a read: a new run, ingested after the first, so it wins again
    PackedBatch b = t.newPackedBatch(64);
    b.put(key(expected.firstKey()), bytes("newest"));
    b.commit();
    assertArrayEquals(bytes("newest"), t.get(key(expected.firstKey())));
  }

  @Test
  void bulkTable_sortsKeysOfEveryLengthAndSharedPrefixLikeAByteComparator() {
    StoreTable t = store.create("bulk", BULK, false);
    Random r = new Random(11);
    byte[] alphabet = {0, 1, (byte) 0x7F, (byte) 0x80, (byte) 0xFF};
    java.util.TreeMap<byte[], byte[]> expected = new java.util.TreeMap<>(java.util.Arrays::compareUnsigned);
    for (int batch = 0; batch < 4; batch++) {
      PackedBatch b = t.newPackedBatch(64);
      for (int i = 0; i < 3000; i++) {
        byte[] k = new byte[r.nextInt(13)]; // empty, one byte, shared prefixes, ties at 8 bytes
        for (int j = 0; j < k.length; j++) {
          k[j] = j < 9 && r.nextInt(4) > 0 ? 0 : alphabet[r.nextInt(alphabet.length)];
        }
        byte[] v = bytes(batch + "/" + i);
        b.put(k, v);
        expected.put(k, v);
      }
      b.commit();
    }
    List<byte[][]> all = scanAll(t, null, null);
    assertEquals(expected.size(), all.size());
    int i = 0;
    for (var e : expected.entrySet()) {
      assertArrayEquals(e.getKey(), all.get(i)[0], "key at " + i);
      assertArrayEquals(e.getValue(), all.get(i)[1], "last write wins at " + i);
      i++;
    }
  }

  @Test
  void bulkTable_scanReadsRunsFromMemory_andAWriteAfterTheScanStillWins() {
    StoreTable t = store.create("bulk", BULK, false);
    long heldBefore = SortedRuns.heldBytes();
    PackedBatch b = t.newPackedBatch(64);
    for (int i = 0; i < 100; i++) {
      b.put(key(i), bytes("old" + i));
    }
    b.commit();
    assertEquals(100, scanAll(t, null, null).size());
    assertTrue(SortedRuns.heldBytes() > heldBefore, "the scanned run stays in memory");
    b.put(key(7), bytes("new7"));
    b.put(key(200), bytes("new200"));
    b.commit(); // stores the resident run in RocksDB first, then gathers these
    List<byte[][]> all = scanAll(t, null, null); // the new resident run over the stored one
    assertEquals(101, all.size());
    assertArrayEquals(bytes("new7"), all.get(7)[1], "the newer run shadows the stored pair");
    assertArrayEquals(bytes("old8"), all.get(8)[1]);
    assertArrayEquals(key(200), all.get(100)[0]);
    List<byte[][]> some = scanAll(t, key(5), key(9));
    assertEquals(4, some.size());
    assertArrayEquals(bytes("new7"), some.get(2)[1]);
    store.drop("bulk", false);
    assertEquals(heldBefore, SortedRuns.heldBytes(), "dropping the table gives its runs back to the budget");
  }

  @Test
  void bulkTable_scanOfADroppedTableFailsAndKeepsNothingCounted() {
    StoreTable t = store.create("bulk", BULK, false);
    long heldBefore = SortedRuns.heldBytes();
    PackedBatch b = t.newPackedBatch(64);
    b.put(key(1), bytes("v"));
    b.commit();
    store.drop("bulk", false);
    assertEquals(heldBefore, SortedRuns.heldBytes(), "the drop gives the gathered batch back");
    assertStore(ErrorCode.NO_SUCH_TABLE, () -> t.scan(null, null));
    assertEquals(heldBefore, SortedRuns.heldBytes(), "a scan racing the drop keeps nothing counted");
  }

  @Test
  void bulkTable_gatheredRunsLandBeforeALaterBatchWriteOfTheSameKey() {
    StoreTable t = store.create("bulk", BULK, false);
    PackedBatch b = t.newPackedBatch(64);
    b.put(key(1), bytes("gathered"));
    b.commit();
    putOne(t, "unused", "x"); // a per-pair batch: stores the gathered run first
    try (TableBatch later = t.newBatch()) {
      later.put(key(1), bytes("later"));
      later.commit();
    }
    assertArrayEquals(bytes("later"), t.get(key(1)));
  }

  @Test
  void bulkTable_storesARunWhenGatheredBytesReachTheLimitAndKeepsEveryPair() throws Exception {
    StoreTable t = store.create("bulk", BULK, false);
    byte[] value = new byte[16 << 10];
    int pairs = (int) (SortedRuns.MAX_RUN_BYTES / value.length) + 100;
    PackedBatch b = t.newPackedBatch(1 << 20);
    for (int i = 0; i < pairs; i++) {
      b.put(key(pairs - i), value); // descending, so the runs must be sorted to be stored
      if (b.bytes() >= 1 << 20) {
        b.commit();
      }
    }
    b.commit();
    try (java.util.stream.Stream<Path> files = java.nio.file.Files.list(dir.resolve("rocksdb"))) {
      assertEquals(1, files.filter(f -> f.toString().endsWith(".sst")).count(), "one run was stored on the way");
    }
    assertEquals(pairs, t.count());
    List<byte[][]> some = scanAll(t, key(1), key(4));
    assertEquals(3, some.size());
    assertArrayEquals(key(1), some.get(0)[0]);
  }

  @Test
  void open_clearsLeftoverIngestFiles() throws Exception {
    Path ingest = dir.resolve("ingest");
    Files.createDirectories(ingest);
    Path leftover = Files.writeString(ingest.resolve("t-123.sst"), "half-written");
    reopen();
    assertFalse(Files.exists(leftover));
  }

  // ---------------------------------------------------------------- drop with open cursors

  @Test
  void drop_whileCursorOpenCursorKeepsWorking() {
    StoreTable t = store.create("t", DEFAULTS, false);
    TreeMap<byte[], byte[]> all = new TreeMap<>(Arrays::compareUnsigned);
    for (int i = 0; i < 1_000; i++) {
      all.put(KeyCodec.encodeLong(i), bytes("v" + i));
    }
    put(t, all);
    t.flush();
    List<byte[][]> got = new ArrayList<>();
    try (StoreCursor c = t.scan(null, null)) {
      for (int i = 0; i < 10; i++, c.next()) {
        got.add(new byte[][] {c.key(), c.value()});
      }
      assertTrue(store.drop("t", false));
      got.addAll(drain(c));
    }
    assertPairs(entries(all), got);
    assertStore(ErrorCode.NO_SUCH_TABLE, () -> store.require("t"));
  }

  @Test
  void drop_whileMergingCursorOpenCursorClosesCleanly() {
    StoreTable t = store.create("t", DEFAULTS, false);
    fillPartitions(t, PartitionMap.roundRobin(3, 1), 300, 9);
    StoreCursor c = t.scanRanges(List.of(KeyRanges.partition(0, new byte[0]), KeyRanges.partition(1, new byte[0]),
        KeyRanges.partition(2, new byte[0])), true);
    assertTrue(c.valid());
    store.drop("t", false);
    c.next();
    assertTrue(c.valid());
    c.close();
    assertStore(ErrorCode.NO_SUCH_TABLE, t::count);
  }

  @Test
  void drop_laterOperationsOnDroppedTableThrowNoSuchTable() {
    StoreTable t = store.create("t", DEFAULTS, false);
    put(t, bytes("k"), bytes("v"));
    StoreCursor open = t.scan(null, null);
    store.drop("t", false);
    try {
      assertStore(ErrorCode.NO_SUCH_TABLE, () -> t.get(bytes("k")));
      assertStore(ErrorCode.NO_SUCH_TABLE, () -> t.multiGet(List.of(bytes("k"))));
      assertStore(ErrorCode.NO_SUCH_TABLE, t::newBatch);
      assertStore(ErrorCode.NO_SUCH_TABLE, () -> t.delete(List.of(bytes("k"))));
      assertStore(ErrorCode.NO_SUCH_TABLE, () -> t.scan(null, null));
      assertStore(ErrorCode.NO_SUCH_TABLE, () -> t.scanRanges(List.of(), true));
      assertStore(ErrorCode.NO_SUCH_TABLE, t::count);
      assertStore(ErrorCode.NO_SUCH_TABLE, t::info);
      assertStore(ErrorCode.NO_SUCH_TABLE, t::flush);
      assertStore(ErrorCode.NO_SUCH_TABLE, t::compact);
      assertStore(ErrorCode.NO_SUCH_TABLE, () -> t.ingestSorted(List.<byte[][]>of(new byte[][] {bytes("a"), bytes("b")})));
    } finally {
      open.close();
    }
    // and once the last cursor has released the native handle
    assertStore(ErrorCode.NO_SUCH_TABLE, () -> t.get(bytes("k")));
    assertStore(ErrorCode.NO_SUCH_TABLE, t::count);
  }

  @Test
  void drop_batchOpenedBeforeDropRefusesWrites() {
    StoreTable t = store.create("t", DEFAULTS, false);
    try (TableBatch b = t.newBatch()) {
      b.put(bytes("before"), bytes("1"));
      store.drop("t", false);
      assertStore(ErrorCode.NO_SUCH_TABLE, () -> b.put(bytes("after"), bytes("2")));
      assertStore(ErrorCode.NO_SUCH_TABLE, () -> b.delete(bytes("before")));
      assertStore(ErrorCode.NO_SUCH_TABLE, b::commit);
    }
    assertStore(ErrorCode.NO_SUCH_TABLE, () -> store.require("t"));
  }

  @Test
  void create_afterDropReusesNameAndIsEmpty() {
    StoreTable old = store.create("t", TableOptions.newBuilder().setKeyType(DataType.LONG).build(), false);
    put(old, bytes("k"), bytes("old"));
    StoreCursor oldCursor = old.scan(null, null);
    store.drop("t", false);

    StoreTable fresh = store.create("t", DEFAULTS, false);
    assertNotSame(old, fresh);
    assertEquals(DEFAULTS, fresh.options());
    assertEquals(0, fresh.count());
    assertNull(fresh.get(bytes("k")));
    put(fresh, bytes("k"), bytes("new"));

    // the old cursor still reads the old table's snapshot, untouched by the new table
    assertTrue(oldCursor.valid());
    assertArrayEquals(bytes("old"), oldCursor.value());
    oldCursor.close();

    assertArrayEquals(bytes("new"), fresh.get(bytes("k")));
    assertStore(ErrorCode.NO_SUCH_TABLE, () -> old.get(bytes("k")));
    reopen();
    assertEquals(DEFAULTS, store.require("t").options());
    assertArrayEquals(bytes("new"), store.require("t").get(bytes("k")));
  }

  @Test
  void close_thenOperationsOnTablesThrowNoSuchTable() {
    StoreTable t = store.create("t", DEFAULTS, false);
    store.close();
    store = null;
    assertStore(ErrorCode.NO_SUCH_TABLE, () -> t.get(bytes("k")));
  }
}
