package org.sss.kvs;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.util.List;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;
import org.rocksdb.Options;
import org.rocksdb.RocksDB;
import org.sss.core.proto.Compression;
import org.sss.core.proto.ErrorCode;
import org.sss.core.proto.TableOptions;

/** The job commit in {@link NodeStore}: reservations, rename, drop, reopen. */
class NodeStoreCommitTest {
  private static final TableOptions DEFAULTS = TableOptions.getDefaultInstance();
  private static final TableOptions BULK = TableOptions.newBuilder().setDisableWal(true)
      .setDisableAutoCompaction(true).setCompression(Compression.NONE).setMultiValued(true).build();
  private static final TableOptions ZSTD = TableOptions.newBuilder().setCompression(Compression.ZSTD).build();

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

  private static byte[] bytes(String s) {
    return s.getBytes(StandardCharsets.UTF_8);
  }

  private static void put(StoreTable t, String k, String v) {
    try (TableBatch b = t.newBatch()) {
      b.put(bytes(k), bytes(v));
      b.commit();
    }
  }

  private List<String> families() throws Exception {
    try (Options o = new Options()) {
      return RocksDB.listColumnFamilies(o, dir.resolve("rocksdb").toString()).stream()
          .map(f -> new String(f, StandardCharsets.UTF_8)).toList();
    }
  }

  /** Committed tables living in a family named sss-tmp-... or a spare's reopen under their new names. */
  @Test
  void committedTables_reopenUnderTheirNames_fromOwnFamilyFromSpareAndBulk() throws Exception {
    // ZSTD profile: first of its profile, so created directly in a family named sss-tmp-j1-0
    StoreTable direct = store.createForJob("j1", "sss-tmp-j1-0", ZSTD, "direct-out", false);
    put(direct, "a", "1");
    store.awaitBackground();
    // second of the profile: from a spare
    StoreTable spare = store.createForJob("j1", "sss-tmp-j1-1", ZSTD, "spare-out", false);
    put(spare, "b", "2");
    // bulk (no WAL): written through the packed path into sorted runs
    StoreTable bulk = store.createForJob("j1", "sss-tmp-j1-2", BULK, "bulk-out.stage0", false);
    PackedBatch pb = bulk.newPackedBatch(64);
    pb.put(bytes("c"), bytes("3"));
    pb.commit();
    assertTrue(families().contains("sss-tmp-j1-0"));
    assertEquals(3, store.commit("j1"));
    assertEquals(0, store.commit("j1"));
    reopen();
    assertArrayEquals(bytes("1"), store.require("direct-out").get(bytes("a")));
    assertArrayEquals(bytes("2"), store.require("spare-out").get(bytes("b")));
    assertArrayEquals(bytes("3"), store.require("bulk-out.stage0").get(bytes("c")));
    assertEquals(BULK, store.require("bulk-out.stage0").options());
    assertFalse(store.table("sss-tmp-j1-0").isPresent());
    // drop them and reopen: no family may survive its table
    store.drop("direct-out", false);
    store.drop("spare-out", false);
    store.drop("bulk-out.stage0", false);
    store.awaitBackground();
    reopen();
    assertFalse(families().contains("sss-tmp-j1-0"), families().toString());
    assertFalse(families().contains("sss-tmp-j1-2"), families().toString());
    // names reusable
    put(store.create("direct-out", ZSTD, false), "x", "y");
    reopen();
    assertArrayEquals(bytes("y"), store.require("direct-out").get(bytes("x")));
  }

  /** Overwrite: old table in its own family, replaced at commit, then reopen. */
  @Test
  void commitReplacing_oldTableInOwnFamily_thenRecreateAndReopen() throws Exception {
    put(store.create("out", ZSTD, false), "k", "old"); // first of profile: own family "out"
    assertTrue(families().contains("out"));
    StoreTable t = store.createForJob("j2", "sss-tmp-j2-0", ZSTD, "out", true);
    put(t, "k", "new");
    assertEquals(1, store.commit("j2"));
    assertArrayEquals(bytes("new"), store.require("out").get(bytes("k")));
    // user drops the committed output and creates the name again at once
    store.drop("out", false);
    put(store.create("out", ZSTD, false), "k", "again");
    reopen();
    assertArrayEquals(bytes("again"), store.require("out").get(bytes("k")));
    assertEquals(1, store.require("out").count());
  }

  /** After a restart, reservations are gone: a commit then has nothing to rename and says 0. */
  @Test
  void commit_afterRestart_renamesNothing_andReportsSuccess() {
    put(store.createForJob("j3", "sss-tmp-j3-0", DEFAULTS, "out3", false), "k", "v");
    reopen();
    assertTrue(store.table("sss-tmp-j3-0").isPresent(), "a WAL job table survives the restart");
    // the commit succeeds with 0, exactly like an idempotent repeat of a commit that did happen
    assertEquals(0, store.commit("j3"));
    assertFalse(store.table("out3").isPresent());
  }

  /**
   * An overwrite commit removes the old table from the name map, waits for its operations and
   * fsyncs the catalog, and only then puts the new table under the name: a reader of the
   * output meanwhile finds no table at all.
   */
  @Test
  void overwriteCommit_readerOfTheOutputNeverFindsItMissing() throws Exception {
    put(store.create("out", DEFAULTS, false), "k", "v0");
    java.util.concurrent.atomic.AtomicBoolean running = new java.util.concurrent.atomic.AtomicBoolean(true);
    java.util.concurrent.atomic.AtomicLong missing = new java.util.concurrent.atomic.AtomicLong();
    java.util.concurrent.atomic.AtomicLong reads = new java.util.concurrent.atomic.AtomicLong();
    Thread reader = new Thread(() -> {
      while (running.get()) {
        // no table under the name at all (not an old handle that was dropped under the read)
        if (store.table("out").isEmpty()) {
          missing.incrementAndGet();
        }
        reads.incrementAndGet();
      }
    });
    reader.start();
    for (int i = 1; i <= 50; i++) {
      put(store.createForJob("j" + i, "sss-tmp-j" + i + "-0", DEFAULTS, "out", true), "k", "v" + i);
      store.commit("j" + i);
    }
    running.set(false);
    reader.join();
    assertArrayEquals(bytes("v50"), store.require("out").get(bytes("k")));
    assertEquals(0, missing.get(), "the output was missing for " + missing.get() + " of " + reads.get()
        + " reads during 50 overwrite commits");
  }
}
