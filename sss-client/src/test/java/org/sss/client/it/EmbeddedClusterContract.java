package org.sss.client.it;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertTrue;
import static org.sss.client.it.TestPairs.assertCode;
import static org.sss.client.it.TestPairs.hex;

import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.NavigableMap;
import java.util.Optional;
import java.util.Random;
import java.util.Set;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.TestInstance;
import org.junit.jupiter.api.Timeout;
import org.sss.client.BulkWriter;
import org.sss.client.ScanOptions;
import org.sss.client.SssClient;
import org.sss.client.TableScan;
import org.sss.client.TableSpec;
import org.sss.client.TableStatus;
import org.sss.client.cluster.SssCluster;
import org.sss.client.internal.ClientInternals;
import org.sss.client.internal.NodeChannels;
import org.sss.core.api.Pair;
import org.sss.core.keys.KeyCodec;
import org.sss.core.keys.PairTypes;
import org.sss.core.proto.Compression;
import org.sss.core.proto.DataType;
import org.sss.core.proto.ErrorCode;
import org.sss.core.proto.Request;
import org.sss.core.proto.Response;
import org.sss.core.proto.ScanClose;
import org.sss.core.proto.ScanNext;
import org.sss.core.proto.ScanOpen;
import org.sss.core.transport.Connection;
import org.sss.core.transport.Frame;
import org.sss.core.transport.SssException;

/**
 * The store's contract on an embedded cluster of real servers (RocksDB, Netty, loopback
 * sockets): subclasses choose the node count.
 */
@TestInstance(TestInstance.Lifecycle.PER_CLASS)
@Timeout(value = 120, unit = TimeUnit.SECONDS)
abstract class EmbeddedClusterContract {
  static final int PAIRS = 50_000;
  static final String TABLE = "random";

  SssCluster cluster;
  SssClient client;
  NavigableMap<byte[], byte[]> reference;
  private LeakDetection leakDetection;

  abstract int nodes();

  @BeforeAll
  void startAndLoad() throws Exception {
    // bulk data: sampled leak detection (BadInputTest keeps paranoid detection for error paths)
    leakDetection = LeakDetection.sampled();
    cluster = SssCluster.embedded(nodes());
    client = cluster.client();
    client.createTable(TABLE, TableSpec.defaults(), false);
    reference = TestPairs.randomPairs(42 + nodes(), PAIRS);
    assertEquals(PAIRS, TestPairs.load(client, TABLE, reference));
  }

  @AfterAll
  void stop() {
    if (leakDetection != null) {
      leakDetection.close();
    }
    if (client != null) {
      client.close();
    }
    if (cluster != null) {
      cluster.close();
    }
  }

  @Test
  void count_afterBulkLoad_equalsPairsLoaded() {
    assertEquals(PAIRS, client.count(TABLE));
  }

  @Test
  void get_sampleOfLoadedKeys_returnsEachValue() {
    for (byte[] key : TestPairs.sampleKeys(reference, 97)) {
      Optional<byte[]> v = client.get(TABLE, key);
      assertTrue(v.isPresent(), () -> "missing key " + hex(key));
      assertArrayEquals(reference.get(key), v.get(), () -> "wrong value of " + hex(key));
    }
  }

  @Test
  void get_absentKey_returnsEmpty() {
    assertTrue(client.get(TABLE, KeyCodec.encodeString("no such key")).isEmpty());
  }

  @Test
  void multiGet_presentAndAbsentKeys_returnsValuesInRequestOrderAndNullForAbsent() {
    List<byte[]> present = TestPairs.sampleKeys(reference, 13);
    List<byte[]> keys = new ArrayList<>();
    List<Boolean> expectPresent = new ArrayList<>();
    Random r = new Random(7);
    for (byte[] k : present) {
      keys.add(k);
      expectPresent.add(true);
      if (r.nextInt(3) == 0) {
        // absent: the loaded keys are encodeBytes() of raw bytes, these are not in the map
        byte[] absent = KeyCodec.encodeString("absent-" + keys.size());
        assertFalse(reference.containsKey(absent));
        keys.add(absent);
        expectPresent.add(false);
      }
    }
    List<byte[]> got = client.multiGet(TABLE, keys);
    assertEquals(keys.size(), got.size());
    for (int i = 0; i < keys.size(); i++) {
      if (expectPresent.get(i)) {
        assertArrayEquals(reference.get(keys.get(i)), got.get(i), "value of key #" + i);
      } else {
        assertNull(got.get(i), "key #" + i + " is absent");
      }
    }
    // only absent keys
    List<byte[]> none = client.multiGet(TABLE, List.of(KeyCodec.encodeLong(1), KeyCodec.encodeLong(2)));
    assertEquals(2, none.size());
    assertNull(none.get(0));
    assertNull(none.get(1));
  }

  @Test
  void multiGet_sameKeyTwice_answersBothPositions() {
    byte[] key = TestPairs.sampleKeys(reference, 1).get(0);
    byte[] absent = KeyCodec.encodeString("absent");
    List<byte[]> got = client.multiGet(TABLE, List.of(key, absent, key.clone()));
    assertArrayEquals(reference.get(key), got.get(0));
    assertNull(got.get(1));
    assertArrayEquals(reference.get(key), got.get(2));
  }

  @Test
  void delete_someKeys_areGoneAndOthersRemain() {
    String table = "delete-test";
    client.createTable(table, TableSpec.defaults(), false);
    NavigableMap<byte[], byte[]> pairs = TestPairs.randomPairs(3, 5_000);
    TestPairs.load(client, table, pairs);
    List<byte[]> doomed = TestPairs.sampleKeys(pairs, 4);
    List<byte[]> withAbsent = new ArrayList<>(doomed);
    withAbsent.add(KeyCodec.encodeString("never written"));
    client.delete(table, withAbsent);
    assertEquals(pairs.size() - doomed.size(), client.count(table));
    for (byte[] k : doomed.subList(0, 50)) {
      assertTrue(client.get(table, k).isEmpty(), () -> "deleted key still there: " + hex(k));
    }
    Set<String> doomedHex = new HashSet<>();
    doomed.forEach(k -> doomedHex.add(hex(k)));
    long left = 0;
    try (TableScan scan = client.scan(table, ScanOptions.anyOrder())) {
      while (scan.hasNext()) {
        Pair p = scan.next();
        assertFalse(doomedHex.contains(hex(p.key())), "scan returned a deleted key");
        assertArrayEquals(pairs.get(p.key()), p.value());
        left++;
      }
    }
    assertEquals(pairs.size() - doomed.size(), left);
    client.dropTable(table, false);
  }

  @Test
  void orderedScan_wholeTable_returnsEveryPairInAscendingUnsignedByteOrder() {
    List<Pair> got = new ArrayList<>();
    try (TableScan scan = client.scan(TABLE, ScanOptions.inKeyOrder())) {
      scan.forEachRemaining(got::add);
    }
    assertEquals(reference.size(), got.size());
    int i = 0;
    for (Map.Entry<byte[], byte[]> e : reference.entrySet()) {
      Pair p = got.get(i);
      int at = i;
      assertArrayEquals(e.getKey(), p.key(), () -> "key #" + at + " out of order");
      assertArrayEquals(e.getValue(), p.value(), () -> "value #" + at);
      if (i > 0) {
        assertTrue(Arrays.compareUnsigned(got.get(i - 1).key(), p.key()) < 0, "keys strictly ascending");
      }
      i++;
    }
  }

  @Test
  void unorderedScan_wholeTable_returnsTheSameSetOfPairs() {
    NavigableMap<byte[], byte[]> got = TestPairs.sortedMap();
    long n = 0;
    try (TableScan scan = client.scan(TABLE, ScanOptions.anyOrder())) {
      while (scan.hasNext()) {
        Pair p = scan.next();
        got.put(p.key(), p.value());
        n++;
      }
    }
    assertEquals(reference.size(), n, "no pair twice");
    assertEquals(reference.size(), got.size());
    for (Map.Entry<byte[], byte[]> e : reference.entrySet()) {
      assertArrayEquals(e.getValue(), got.get(e.getKey()), () -> "value of " + hex(e.getKey()));
    }
  }

  @Test
  void prefixScan_stringKeys_returnsExactlyTheKeysWithThatPrefix() {
    String table = "prefix-test";
    client.createTable(table, TableSpec.of(PairTypes.of(DataType.STRING, DataType.STRING)), false);
    List<String> keys = new ArrayList<>();
    for (String group : List.of("apple", "app", "apply", "b", "ap", "app\u0000x", "appé", "zz")) {
      keys.add(group);
      for (int i = 0; i < 300; i++) {
        keys.add(group + "/" + i);
      }
    }
    NavigableMap<byte[], byte[]> pairs = TestPairs.sortedMap();
    for (String k : keys) {
      pairs.put(KeyCodec.encodeString(k), ("v:" + k).getBytes(StandardCharsets.UTF_8));
    }
    TestPairs.load(client, table, pairs);
    for (String prefix : List.of("app", "apple", "app\u0000", "appé/1", "b/2", "a", "", "nothing")) {
      byte[] encoded = KeyCodec.encodeString(prefix);
      byte[] prefixBytes = Arrays.copyOf(encoded, encoded.length - 2);
      List<String> expected = keys.stream().filter(k -> k.startsWith(prefix))
          .sorted((a, b) -> Arrays.compareUnsigned(KeyCodec.encodeString(a), KeyCodec.encodeString(b)))
          .toList();
      for (boolean ordered : new boolean[] {true, false}) {
        List<String> got = new ArrayList<>();
        ScanOptions options = (ordered ? ScanOptions.inKeyOrder() : ScanOptions.anyOrder()).withPrefix(prefixBytes);
        try (TableScan scan = client.scan(table, options)) {
          while (scan.hasNext()) {
            Pair p = scan.next();
            String k = KeyCodec.decodeString(p.key());
            assertEquals("v:" + k, new String(p.value(), StandardCharsets.UTF_8));
            got.add(k);
          }
        }
        if (!ordered) {
          got.sort((a, b) -> Arrays.compareUnsigned(KeyCodec.encodeString(a), KeyCodec.encodeString(b)));
        }
        assertEquals(expected, got, "prefix '" + prefix + "' ordered=" + ordered);
      }
    }
    client.dropTable(table, false);
  }

  @Test
  void scanWithLimit_orderedReturnsTheFirstN_unorderedReturnsNDistinctPairs() {
    for (long limit : new long[] {1, 10, 777, PAIRS - 1, PAIRS, PAIRS + 5}) {
      List<Pair> got = new ArrayList<>();
      try (TableScan scan = client.scan(TABLE, ScanOptions.inKeyOrder().withLimit(limit))) {
        scan.forEachRemaining(got::add);
      }
      long expected = Math.min(limit, PAIRS);
      assertEquals(expected, got.size(), "ordered, limit " + limit);
      List<byte[]> firstKeys = new ArrayList<>(reference.keySet()).subList(0, (int) expected);
      for (int i = 0; i < expected; i++) {
        assertArrayEquals(firstKeys.get(i), got.get(i).key());
      }

      Set<String> seen = new HashSet<>();
      try (TableScan scan = client.scan(TABLE, new ScanOptions(new byte[0], false, limit, 4096))) {
        while (scan.hasNext()) {
          Pair p = scan.next();
          assertArrayEquals(reference.get(p.key()), p.value());
          assertTrue(seen.add(hex(p.key())), "duplicate pair");
        }
      }
      assertEquals(expected, seen.size(), "unordered, limit " + limit);
    }
  }

  @Test
  void listTablesAndTableStats_reportTablesWithTheirOptions() {
    TableSpec zstd = TableSpec.of(PairTypes.of(DataType.LONG, DataType.STRING))
        .compression(TableSpec.Compression.ZSTD).writeAheadLog(false);
    client.createTable("stats-a", zstd, false);
    client.createTable("stats-b", TableSpec.defaults(), false);
    client.putAll("stats-a", zstd.types(), List.of(new Pair(KeyCodec.encodeLong(1), "one".getBytes(StandardCharsets.UTF_8)),
        new Pair(KeyCodec.encodeLong(2), "two".getBytes(StandardCharsets.UTF_8))));

    List<TableStatus> tables = client.listTables();
    List<String> names = tables.stream().map(TableStatus::name).toList();
    assertTrue(names.containsAll(List.of(TABLE, "stats-a", "stats-b")), names.toString());
    List<String> sorted = new ArrayList<>(names);
    sorted.sort(null);
    assertEquals(sorted, names, "sorted by name");
    assertEquals(names.size(), new HashSet<>(names).size(), "each table once, summed over nodes");

    TableStatus a = client.tableStats("stats-a");
    assertEquals("stats-a", a.name());
    assertEquals(zstd, a.spec());
    TableStatus big = client.tableStats(TABLE);
    assertEquals(TableSpec.defaults(), big.spec());
    // pairs is RocksDB's estimate: within a factor of two of the truth
    assertTrue(big.pairs() > PAIRS / 2 && big.pairs() < PAIRS * 2, "estimate " + big.pairs());
    assertTrue(big.bytes() > 0);
    TableStatus listedBig = tables.stream().filter(t -> t.name().equals(TABLE)).findFirst().orElseThrow();
    assertEquals(big.spec(), listedBig.spec());

    client.dropTable("stats-a", false);
    client.dropTable("stats-b", false);
    List<String> after = client.listTables().stream().map(TableStatus::name).toList();
    assertFalse(after.contains("stats-a"));
    assertFalse(after.contains("stats-b"));
  }

  @Test
  void createTable_existingName_failsWithTableExistsUnlessIfAbsent() {
    assertCode(ErrorCode.TABLE_EXISTS, () -> client.createTable(TABLE, TableSpec.defaults(), false));
    client.createTable(TABLE, TableSpec.defaults(), true);
    assertEquals(PAIRS, client.count(TABLE), "create if-absent leaves the data alone");
    assertCode(ErrorCode.BAD_REQUEST, () -> client.createTable("no spaces allowed", TableSpec.defaults(), false));
  }

  @Test
  void dropTable_thenEveryOperationFailsWithNoSuchTable_andTheNameCanBeReused() {
    String table = "drop-test";
    client.createTable(table, TableSpec.defaults(), false);
    NavigableMap<byte[], byte[]> pairs = TestPairs.randomPairs(11, 2_000);
    TestPairs.load(client, table, pairs);
    assertTrue(client.dropTable(table, false));

    byte[] key = pairs.firstKey();
    assertCode(ErrorCode.NO_SUCH_TABLE, () -> client.get(table, key));
    assertCode(ErrorCode.NO_SUCH_TABLE, () -> client.multiGet(table, List.of(key)));
    for (int i = 0; i < 50; i++) {
      // a write to a dropped table must fail every time, not only when the error wins a race
      assertCode(ErrorCode.NO_SUCH_TABLE, () -> client.put(table, PairTypes.BYTES, key, new byte[1]));
    }
    assertCode(ErrorCode.NO_SUCH_TABLE, () -> client.putAll(table, PairTypes.BYTES, TestPairs.asPairs(pairs.headMap(pairs.firstKey(), true))));
    assertCode(ErrorCode.NO_SUCH_TABLE, () -> client.delete(table, List.of(key)));
    assertCode(ErrorCode.NO_SUCH_TABLE, () -> client.count(table));
    assertCode(ErrorCode.NO_SUCH_TABLE, () -> client.tableStats(table));
    assertCode(ErrorCode.NO_SUCH_TABLE, () -> {
      try (TableScan s = client.scan(table, ScanOptions.inKeyOrder())) {
        s.hasNext();
      }
    });
    assertCode(ErrorCode.NO_SUCH_TABLE, () -> {
      try (TableScan s = client.scan(table, ScanOptions.anyOrder())) {
        s.hasNext();
      }
    });
    assertCode(ErrorCode.NO_SUCH_TABLE, () -> {
      try (BulkWriter w = client.writer(table, PairTypes.BYTES)) {
        w.put(key, new byte[1]);
      }
    });
    // the failure thrown by flush, then by the close of try-with-resources: still the failure
    // (the same exception from both once made the close throw "Self-suppression not permitted")
    assertCode(ErrorCode.NO_SUCH_TABLE, () -> {
      try (BulkWriter w = client.writer(table, PairTypes.BYTES)) {
        w.put(key, new byte[1]);
        w.flush();
      }
    });
    assertCode(ErrorCode.NO_SUCH_TABLE, () -> { // closed twice: by hand, then by try-with-resources
      try (BulkWriter w = client.writer(table, PairTypes.BYTES)) {
        w.put(key, new byte[1]);
        w.close();
      }
    });
    assertCode(ErrorCode.NO_SUCH_TABLE, () -> client.dropTable(table, false));
    assertFalse(client.dropTable(table, true));
    assertFalse(client.listTables().stream().anyMatch(t -> t.name().equals(table)));

    // the same client keeps working, and the name can be reused for a new, empty table
    assertEquals(PAIRS, client.count(TABLE));
    client.createTable(table, TableSpec.defaults(), false);
    assertEquals(0, client.count(table));
    assertTrue(client.get(table, key).isEmpty());
    try (TableScan s = client.scan(table, ScanOptions.inKeyOrder())) {
      assertFalse(s.hasNext());
    }
    client.dropTable(table, false);
  }

  @Test
  void scan_tableMuchLargerThanTheChunk_completesInOrderAndUnordered() {
    String table = "large-scan";
    client.createTable(table, TableSpec.defaults(), false);
    int n = 200_000;
    byte[] value = new byte[100];
    try (BulkWriter w = client.writer(table, PairTypes.BYTES)) {
      for (int i = 0; i < n; i++) {
        Arrays.fill(value, (byte) i);
        w.put(KeyCodec.encodeLong(i), value);
      }
    }
    assertEquals(n, client.count(table));
    int chunk = 64 << 10;
    long seen = 0;
    long previous = Long.MIN_VALUE;
    try (TableScan scan = client.scan(table, new ScanOptions(new byte[0], true, 0, chunk))) {
      while (scan.hasNext()) {
        Pair p = scan.next();
        long k = KeyCodec.decodeLong(p.key());
        assertTrue(k > previous, "ascending");
        assertEquals((byte) k, p.value()[0]);
        assertEquals(100, p.value().length);
        previous = k;
        seen++;
      }
    }
    assertEquals(n, seen);
    assertEquals(n - 1, previous);

    boolean[] got = new boolean[n];
    seen = 0;
    try (TableScan scan = client.scan(table, new ScanOptions(new byte[0], false, 0, chunk))) {
      while (scan.hasNext()) {
        int k = (int) KeyCodec.decodeLong(scan.next().key());
        assertFalse(got[k], "pair " + k + " twice");
        got[k] = true;
        seen++;
      }
    }
    assertEquals(n, seen);
    client.dropTable(table, false);
  }

  @Test
  void closeScanEarly_manyTimes_releasesCursorsAndTheServerKeepsServing() {
    for (int round = 0; round < 200; round++) {
      boolean ordered = round % 2 == 0;
      // tiny chunks so that a prefetch request is usually in flight when the scan is closed
      try (TableScan scan = client.scan(TABLE, new ScanOptions(new byte[0], ordered, 0, 512))) {
        for (int i = 0; i < round % 7 && scan.hasNext(); i++) {
          scan.next();
        }
      }
    }
    assertEquals(PAIRS, client.count(TABLE));
    get_sampleOfLoadedKeys_returnsEachValue();
    // a fresh full scan still sees everything
    long n = 0;
    try (TableScan scan = client.scan(TABLE, ScanOptions.anyOrder())) {
      while (scan.hasNext()) {
        scan.next();
        n++;
      }
    }
    assertEquals(PAIRS, n);
  }

  /** Opens a one-pair-per-chunk scan on {@code node}'s connection and returns its cursor. */
  static long openProbe(SssClient c, int node) {
    Frame<Response> r = NodeChannels.await(ClientInternals.channels(c).get(node).call(Request.newBuilder().setScanOpen(
        ScanOpen.newBuilder().setTable(TABLE).setChunkBytes(1))), Duration.ofSeconds(30));
    r.release();
    assertFalse(r.header().getScan().getDone());
    long id = r.header().getScan().getCursor();
    NodeChannels.await(ClientInternals.channels(c).get(node).call(Request.newBuilder().setScanClose(
        ScanClose.newBuilder().setCursor(id))), Duration.ofSeconds(30)).release();
    return id;
  }

  @Test
  void closeScanBeforeItsFirstChunkArrives_serverCursorIsReleased() throws Exception {
    try (SssClient c = cluster.client()) {
      long[] before = new long[nodes()];
      for (int n = 0; n < nodes(); n++) {
        before[n] = openProbe(c, n);
      }
      for (int i = 0; i < 20; i++) {
        // an unordered scan sends its requests and returns at once: closed before any answer
        c.scan(TABLE, new ScanOptions(new byte[0], false, 0, 512)).close();
        try (TableScan s = c.scan(TABLE, new ScanOptions(new byte[0], i % 2 == 0, 0, 512))) {
          s.next();
        }
      }
      // A scan closed before its first answer closes its cursor when that answer arrives, so
      // the cursors may close a little after close() returned: wait until every cursor the
      // closed scans opened (the ids between the two probes) is gone, or fail after 30 s.
      // Nodes never expire a cursor by themselves: only the client's ScanClose, or reading it
      // to its end, ends one. A probe reads one small chunk, so probes back off (a dozen in
      // all) and never read a leaked cursor to its end.
      for (int n = 0; n < nodes(); n++) {
        long after = openProbe(c, n);
        Connection conn = ClientInternals.channels(c).get(n);
        List<Long> stillOpen = new ArrayList<>();
        for (long id = before[n] + 1; id < after; id++) {
          stillOpen.add(id);
        }
        long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(30);
        for (long pause = 20; ; pause = Math.min(5_000, pause * 2)) {
          stillOpen.removeIf(id -> {
            try {
              NodeChannels.await(conn.call(Request.newBuilder().setScanNext(ScanNext.newBuilder().setCursor(id))),
                  Duration.ofSeconds(30)).release();
              return false;
            } catch (SssException e) {
              assertEquals(ErrorCode.NO_SUCH_CURSOR, e.code(), e.getMessage());
              return true;
            }
          });
          if (stillOpen.isEmpty() || System.nanoTime() > deadline) {
            break;
          }
          Thread.sleep(pause);
        }
        assertEquals(List.of(), stillOpen, "cursors left open on node " + n + " by closed scans, 30 s later");
      }
    }
  }

  @Test
  void scan_tableDroppedWhileScanning_endsOrFailsCleanly_andTheServerKeepsServing() {
    String table = "drop-while-scanning";
    client.createTable(table, TableSpec.defaults(), false);
    NavigableMap<byte[], byte[]> pairs = TestPairs.randomPairs(5, 20_000);
    TestPairs.load(client, table, pairs);
    long n = 0;
    try (TableScan scan = client.scan(table, new ScanOptions(new byte[0], true, 0, 1024))) {
      for (int i = 0; i < 100 && scan.hasNext(); i++) {
        scan.next();
        n++;
      }
      client.dropTable(table, false);
      // the scan reads a snapshot: it may finish it, or fail with NO_SUCH_TABLE; never anything else
      try {
        while (scan.hasNext()) {
          Pair p = scan.next();
          assertArrayEquals(pairs.get(p.key()), p.value());
          n++;
        }
        assertEquals(pairs.size(), n);
      } catch (org.sss.core.transport.SssException e) {
        assertEquals(ErrorCode.NO_SUCH_TABLE, e.code(), e.getMessage());
      }
    }
    assertEquals(PAIRS, client.count(TABLE));
    assertCode(ErrorCode.NO_SUCH_TABLE, () -> client.count(table));
  }

  @Test
  void emptyTable_countIsZeroAndScansReturnNothing() {
    String table = "empty";
    client.createTable(table, TableSpec.defaults(), false);
    assertEquals(0, client.count(table));
    for (ScanOptions o : List.of(ScanOptions.inKeyOrder(), ScanOptions.anyOrder(),
        ScanOptions.inKeyOrder().withLimit(3))) {
      try (TableScan s = client.scan(table, o)) {
        assertFalse(s.hasNext());
      }
    }
    client.putAll(table, PairTypes.BYTES, List.of());
    assertEquals(0, client.count(table));
    client.dropTable(table, false);
  }
}
