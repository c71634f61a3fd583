package org.sss.kvs;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.Map;
import java.util.Random;
import java.util.TreeMap;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;
import org.rocksdb.RocksDBException;
import org.sss.core.keys.KeyCodec;
import org.sss.core.keys.StoredKeys;
import org.sss.core.proto.TableOptions;

/**
 * A bulk writer's pairs on one node ({@link StoreTable#writeBulk}, {@link StoreTable#sealBulk}):
 * stored as SST files, not through the memtable; a seal stores them only when the node holds
 * the count the writer saw acknowledged since its last seal; and a writer's pairs sent again
 * under a new session win over the old session's, whatever is still open of it.
 */
class BulkWritesTest {
  private static final TableOptions USER_TABLE = TableOptions.getDefaultInstance(); // WAL, LZ4, compaction
  private static final int PARTITIONS = 8;

  private static byte[][] pair(long key, String value) {
    return new byte[][] {StoredKeys.storedKey((int) (key % PARTITIONS), KeyCodec.encodeLong(key)),
        value.getBytes(StandardCharsets.UTF_8)};
  }

  /** Sends {@code pairs} as one bulk batch of {@code session}, as the server does with a writer's batch. */
  private static void send(StoreTable t, long session, List<byte[][]> pairs) {
    byte[] block = packed(pairs);
    try (var entered = t.enterBulk()) {
      t.drainBulk(t.writeBulk(block, block.length, pairs.size(), session));
    }
  }

  private static byte[] packed(List<byte[][]> pairs) {
    PackedBatch packer = new PackedBatch(null, 1 << 10, OrderedStreams.NONE);
    for (byte[][] p : pairs) {
      packer.put(p[0], p[1]);
    }
    return Arrays.copyOf(packer.array(), packer.bytes());
  }

  private static long property(StoreTable t, String name) throws RocksDBException {
    return Long.parseLong(t.db().getProperty(t.handle(), name).trim());
  }

  private static void assertHolds(StoreTable t, TreeMap<byte[], byte[]> model) {
    assertEquals(model.size(), t.count());
    for (Map.Entry<byte[], byte[]> e : model.entrySet()) {
      assertArrayEquals(e.getValue(), t.get(e.getKey()), () -> "key " + Arrays.toString(e.getKey()));
    }
  }

  /**
   * A replicated table holding bulk pairs not stored yet is marked on disk, so that a node killed
   * then knows its copies may lack pairs the other copies serve ({@link UnsealedMarks}); the mark
   * goes once they are stored, and with the table.
   */
  @Test
  void unsealedPairsOfAReplicatedTable_areMarkedUntilStored_andAStoreOpeningWithTheMarkNamesTheTable(@TempDir Path dir)
      throws Exception {
    TableOptions replicated = USER_TABLE.toBuilder().setReplication(2).build();
    Path marks = dir.resolve(NodeStore.UNSEALED);
    String family;
    try (NodeStore store = NodeStore.open(dir)) {
      StoreTable t = store.create("t", replicated, false);
      StoreTable single = store.create("single", USER_TABLE, false);
      family = t.family();
      send(single, 7, List.<byte[][]>of(pair(1, "one copy")));
      assertFalse(Files.exists(marks.resolve(single.family())), "with one copy there is no other to serve them");
      send(t, 42, List.<byte[][]>of(pair(1, "a"), pair(2, "b")));
      assertTrue(Files.exists(marks.resolve(family)), "acknowledged, not stored: marked");
      assertTrue(t.sealBulk(42, 2, false));
      assertFalse(Files.exists(marks.resolve(family)), "sealed: stored, the mark gone");
      send(t, 42, List.<byte[][]>of(pair(3, "c")));
      assertArrayEquals("c".getBytes(StandardCharsets.UTF_8), t.get(pair(3, "c")[0]));
      assertFalse(Files.exists(marks.resolve(family)), "a read stores what was gathered: the mark goes too");
      send(t, 42, List.<byte[][]>of(pair(4, "d")));
      assertTrue(Files.exists(marks.resolve(family)), "marked again");
      assertTrue(t.sealBulk(42, 2, false));
      // a batch marks the table before the membership's view is taken, and is queued after it: a
      // seal of another writer meanwhile must leave the mark to it
      try (var onItsWay = t.enterBulk()) {
        send(t, 7, List.<byte[][]>of(pair(6, "f")));
        assertTrue(t.sealBulk(7, 1, true));
        assertTrue(Files.exists(marks.resolve(family)), "a batch on its way keeps the mark");
        byte[] block = packed(List.<byte[][]>of(pair(8, "h")));
        t.drainBulk(t.writeBulk(block, block.length, 1, 42));
      }
      assertTrue(Files.exists(marks.resolve(family)), "its pair is gathered, not stored");
      assertTrue(t.sealBulk(42, 1, false));
      t.enterBulk().close(); // a batch that marked the table, then was refused (another view, say)
      assertTrue(Files.exists(marks.resolve(family)));
      t.sealRuns(); // what a read, a put or a stop does first
      assertFalse(Files.exists(marks.resolve(family)), "nothing gathered: the refused batch's mark goes");
      send(t, 42, List.<byte[][]>of(pair(10, "j")));
    } // a stop stores what was gathered
    assertFalse(Files.exists(marks.resolve(family)), "a stop stores the pairs and removes the mark");

    // as a node killed with pairs unsealed finds it: its mark, and one of a table gone since
    Files.createFile(marks.resolve(family));
    Files.createFile(marks.resolve("gone"));
    try (NodeStore store = NodeStore.open(dir)) {
      assertEquals(List.of("t"), lost(store));
      assertFalse(Files.exists(marks.resolve("gone")), "a mark of no table is removed at open");
      store.owesCatchUp(); // what the membership says when it finds the mark; then a clean stop, unsettled
    }
    assertTrue(Files.exists(marks.resolve(family)), "a stop before the loss is settled keeps the mark");
    assertFalse(Files.exists(dir.resolve(NodeStore.CLOSED_FLUSHED)), "and does not pass for a flushed close");
    try (NodeStore store = NodeStore.open(dir)) {
      assertEquals(List.of("t"), lost(store), "the next start still knows");
      assertFalse(store.openedAfterFlushedClose());
      store.owesCatchUp();
      store.lostWritesSettled(); // the node was decided out: it catches up
      assertEquals(List.of("t"), lost(store), "what was found at open stays found");
      assertFalse(Files.exists(marks.resolve(family)), "the mark is gone: a later crash does not count it again");
      send(store.require("t"), 43, List.<byte[][]>of(pair(5, "e")));
      assertTrue(Files.exists(marks.resolve(family)));
      store.drop("t", false);
      assertFalse(Files.exists(marks.resolve(family)), "dropped with its pairs");
    }
    try (NodeStore store = NodeStore.open(dir)) {
      assertTrue(store.openedAfterFlushedClose(), "settled, a clean stop is a flushed close again");
    }
  }

  /** A store that fails may throw gathered pairs away: the mark stays, through later stores and a stop. */
  @Test
  void aFailedStore_holdsTheMark_throughLaterStoresAndAStop(@TempDir Path dir) throws Exception {
    TableOptions replicated = USER_TABLE.toBuilder().setReplication(2).build();
    byte[][] broken = pair(1, "a");
    Path mark;
    try (NodeStore store = NodeStore.open(dir)) {
      StoreTable t = store.create("t", replicated, false);
      mark = dir.resolve(NodeStore.UNSEALED).resolve(t.family());
      send(t, 42, List.<byte[][]>of(pair(9, "z")));
      send(t, 42, List.<byte[][]>of(broken)); // breaks the stream: gathered for a sorted run
      deleteRecursively(dir.resolve("ingest"));
      Files.writeString(dir.resolve("ingest"), "not a directory");
      assertThrows(StoreException.class, t::sealRuns, "the store fails");
      Files.delete(dir.resolve("ingest"));
      send(t, 43, List.<byte[][]>of(pair(20, "x")));
      t.sealRuns(); // stores, and leaves nothing gathered
      assertNull(t.get(broken[0]), "the failed store lost it");
      assertTrue(Files.exists(mark), "a later store does not take the mark away");
    }
    assertTrue(Files.exists(mark), "nor does a stop");
    try (NodeStore store = NodeStore.open(dir)) {
      assertEquals(List.of("t"), lost(store), "the next start knows");
    }
  }

  private static List<String> lost(NodeStore store) {
    return store.tablesThatLostUnsealedPairs().stream().map(StoreTable::name).toList();
  }

  private static void deleteRecursively(Path p) throws java.io.IOException {
    try (var files = Files.walk(p)) {
      files.sorted(java.util.Comparator.reverseOrder()).forEach(f -> f.toFile().delete());
    }
  }

  @Test
  void pairsInKeyOrder_areStoredAsFilesAtTheBottom_notInTheMemtable_atTheSeal(@TempDir Path dir) throws RocksDBException {
    try (NodeStore store = NodeStore.open(dir)) {
      StoreTable t = store.create("t", USER_TABLE, false);
      TreeMap<byte[], byte[]> model = new TreeMap<>(Arrays::compareUnsigned);
      long session = 42;
      for (int batch = 0; batch < 10; batch++) {
        List<byte[][]> pairs = new ArrayList<>();
        for (int i = 0; i < 500; i++) {
          byte[][] p = pair(batch * 500L + i, "v" + batch + "-" + i);
          pairs.add(p);
          model.put(p[0], p[1]);
        }
        send(t, session, pairs);
      }
      assertTrue(t.sealBulk(session, 5_000, true));
      assertEquals(0, property(t, "rocksdb.num-entries-active-mem-table"), "nothing went through the memtable");
      assertEquals(0, property(t, "rocksdb.num-files-at-level0"), "files that share no key land below level 0");
      assertTrue(property(t, "rocksdb.num-files-at-level6") > 0, "in the bottom level");
      assertHolds(t, model);
    }
  }

  @Test
  void aSeal_storesOnlyWhenTheNodeHoldsWhatWasAcknowledged_countedFromTheLastSeal(@TempDir Path dir) {
    try (NodeStore store = NodeStore.open(dir)) {
      StoreTable t = store.create("t", USER_TABLE, false);
      send(t, 7, List.<byte[][]>of(pair(1, "a"), pair(2, "b"), pair(3, "c")));
      assertFalse(t.sealBulk(7, 4, false), "one more than it holds: lost, nothing sealed");
      assertFalse(t.sealBulk(8, 3, false), "another session's count is its own");
      assertFalse(t.sealBulk(7, 2, false), "one less: some came twice or from elsewhere");
      assertTrue(t.sealBulk(7, 3, false));
      assertTrue(t.sealBulk(7, 0, false), "the next seal counts from the last one");
      send(t, 7, List.<byte[][]>of(pair(4, "d")));
      assertFalse(t.sealBulk(7, 4, false), "the pairs since the last seal, not since the session began");
      assertTrue(t.sealBulk(7, 1, true));
      assertFalse(t.sealBulk(7, 1, false), "an ended session holds nothing");
      assertEquals(4, t.count());
    }
  }

  /**
   * A writer sends a key twice (a then b) after its first session's stream took a, and a batch
   * failed: its pairs since the checkpoint go again under a new session, whose stream breaks at
   * the second value. The old session's file still holds a, and must not land after b, whether
   * the table is sealed or read first.
   */
  @Test
  void pairsSentAgainUnderANewSession_winOverTheOldSessionsOpenFiles(@TempDir Path dir) {
    for (boolean readFirst : new boolean[] {false, true}) {
      try (NodeStore store = NodeStore.open(dir.resolve("read-first-" + readFirst))) {
        StoreTable t = store.create("t", USER_TABLE, false);
        send(t, 1, List.<byte[][]>of(pair(5, "a"), pair(13, "x"))); // session 1: a file per partition, open
        send(t, 2, List.<byte[][]>of(pair(5, "a"), pair(13, "x"), pair(5, "b"))); // sent again, and the newer b
        if (readFirst) {
          assertArrayEquals("b".getBytes(StandardCharsets.UTF_8), t.get(pair(5, "")[0]));
        }
        assertTrue(t.sealBulk(2, 3, true));
        assertArrayEquals("b".getBytes(StandardCharsets.UTF_8), t.get(pair(5, "")[0]));
        assertArrayEquals("x".getBytes(StandardCharsets.UTF_8), t.get(pair(13, "")[0]));
      }
    }
  }

  /**
   * A job's commit stores everything its output gathered: the streams' files as well as the runs
   * of streams that broke (nothing left in the ingest directory for a later read to store).
   */
  @Test
  void aJobsCommit_storesItsStreamsFiles_whenRunsHoldPairsToo(@TempDir Path dir) throws Exception {
    try (NodeStore store = NodeStore.open(dir)) {
      StoreTable t = store.createForJob("j1", "sss-tmp-j1-0", USER_TABLE, "out", false);
      List<byte[][]> inOrder = new ArrayList<>();
      for (long k = 0; k < 100; k++) {
        inOrder.add(pair(k, "in order " + k));
      }
      PackedBatch ordered = t.newPackedBatch(1 << 10, PackedBatch.stream(0, 1));
      inOrder.forEach(p -> ordered.put(p[0], p[1]));
      ordered.commit();
      PackedBatch broken = t.newPackedBatch(1 << 10, PackedBatch.stream(0, 2));
      broken.put(pair(1_005, "x")[0], pair(1_005, "x")[1]);
      broken.put(pair(1_005, "y")[0], pair(1_005, "y")[1]); // not above its last: the stream breaks
      broken.commit();
      store.commit("j1");
      try (java.util.stream.Stream<Path> left = java.nio.file.Files.walk(dir.resolve("ingest"))) {
        assertEquals(List.of(), left.filter(java.nio.file.Files::isRegularFile).toList(),
            "files written for the output and not ingested by its commit");
      }
      StoreTable out = store.require("out");
      assertEquals(101, out.count());
      assertArrayEquals("y".getBytes(StandardCharsets.UTF_8), out.get(pair(1_005, "")[0]));
    }
  }

  /**
   * Many sessions, some sent again, interleaved with reads, checkpoints and puts: the last write
   * of each key wins.
   */
  @Test
  void sessionsSentAgain_andPuts_keepTheLastWriteOfEachKey(@TempDir Path dir) {
    Random random = new Random(11);
    TreeMap<byte[], byte[]> model = new TreeMap<>(Arrays::compareUnsigned);
    try (NodeStore store = NodeStore.open(dir)) {
      StoreTable t = store.create("t", USER_TABLE, false);
      long session = 100;
      List<byte[][]> sinceCheckpoint = new ArrayList<>();
      long next = 0;
      for (int batch = 0; batch < 300; batch++) {
        int dice = random.nextInt(100);
        if (dice < 5 && !sinceCheckpoint.isEmpty()) {
          send(t, ++session, sinceCheckpoint); // a failure: everything since the checkpoint again
        } else if (dice < 10 && sinceCheckpoint.isEmpty()) {
          // a put of another client right after a checkpoint (a resend never goes back past it)
          byte[][] p = pair(random.nextInt((int) next + 1), "put" + batch);
          try (TableBatch b = t.newBatch()) {
            b.put(p[0], p[1]);
            b.commit();
          }
          model.put(p[0], p[1]);
        } else if (dice < 15) {
          assertEquals(model.size(), t.count()); // a read while sessions are open
        } else if (dice < 20) {
          t.flush(); // a checkpoint: what came before is stored
          sinceCheckpoint.clear();
        } else {
          List<byte[][]> pairs = new ArrayList<>();
          for (int i = 0; i < 1 + random.nextInt(50); i++) {
            long key = random.nextInt(10) == 0 ? random.nextInt((int) next + 1) : next++; // mostly in order
            byte[][] p = pair(key, "s" + session + "-" + batch + "-" + i);
            pairs.add(p);
            model.put(p[0], p[1]);
          }
          send(t, session, pairs);
          sinceCheckpoint.addAll(pairs);
        }
      }
      assertHolds(t, model);
      t.flush();
      assertHolds(t, model);
    }
  }
}
