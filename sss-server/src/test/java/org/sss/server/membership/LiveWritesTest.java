package org.sss.server.membership;

import static org.junit.jupiter.api.Assertions.assertEquals;

import io.netty.buffer.ByteBuf;
import io.netty.buffer.Unpooled;
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.TreeMap;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;
import org.sss.core.cluster.PartitionMap;
import org.sss.core.proto.TableOptions;
import org.sss.core.transport.PairBlock;
import org.sss.kvs.NodeStore;
import org.sss.kvs.RunFile;
import org.sss.kvs.StoreCursor;
import org.sss.kvs.StoreTable;
import org.sss.kvs.TableBatch;
import org.sss.core.keys.StoredKeys;

/** A copy ingested as a run never replaces what a node catching up wrote live, before or during the copy. */
class LiveWritesTest {
  @TempDir
  Path dir;

  private NodeStore store;
  private StoreTable table;
  private final LiveWrites live = new LiveWrites();
  /** What the table must hold: the copy's pairs, with every live write applied over them. */
  private final Map<String, String> model = new TreeMap<>();

  @BeforeEach
  void open() {
    store = NodeStore.open(dir);
    table = store.create("t", TableOptions.getDefaultInstance(), false);
  }

  @AfterEach
  void close() {
    store.close();
  }

  @Test
  void copiedRun_keepsLiveWritesMadeBeforeItsChunksAndBetweenChunksAndIngest() {
    ByteBuf chunk = Unpooled.buffer();
    for (int i = 0; i < 100; i++) {
      PairBlock.write(chunk, key(1, i), bytes("copy-" + i)); // the source's snapshot, in key order
      model.put(name(1, i), "copy-" + i);
    }
    putLive(1, 5, "live-5"); // before the chunk arrives: left out of the run
    deleteLive(1, 6);
    try (RunFile run = table.newRunFile()) {
      live.addCopied(table, chunk, run);
      assertEquals(98, run.pairs(), "the two keys written live are left out of the run");
      putLive(1, 7, "live-7"); // after the chunk went into the run: the ingest must not undo them
      deleteLive(1, 8);
      putLive(1, 200, "live-200");
      live.ingestKeepingLive(table, run, Set.of(1));
    }
    assertEquals(model, stored());
  }

  @Test
  void copiedRun_leavesOtherPartitionsAndForgottenTablesAlone() {
    putLive(2, 1, "live-2-1");
    copyOne(1, 1, "copy-1"); // partition 2's live key is not in this run's partitions
    assertEquals(model, stored());

    live.forget("t"); // the table was dropped and made again: its live keys no longer count
    copyOne(2, 1, "copy-2-1");
    assertEquals(model, stored());
  }

  /** Copies one pair into the table as catch-up does: a one-pair run of its partition, ingested. */
  private void copyOne(int partition, int i, String value) {
    ByteBuf chunk = Unpooled.buffer();
    PairBlock.write(chunk, key(partition, i), bytes(value));
    model.put(name(partition, i), value);
    try (RunFile run = table.newRunFile()) {
      live.addCopied(table, chunk, run);
      live.ingestKeepingLive(table, run, Set.of(partition));
    }
  }

  @Test
  void copiedLargeValues_goToTheTableAtOnce_notIntoTheRun_andLiveWritesStillWin() {
    byte[] large = new byte[StoreTable.LARGE_VALUE_BYTES];
    java.util.Arrays.fill(large, (byte) 'x');
    ByteBuf chunk = Unpooled.buffer();
    PairBlock.write(chunk, key(1, 1), large);
    PairBlock.write(chunk, key(1, 2), bytes("copy-2"));
    PairBlock.write(chunk, key(1, 3), large);
    putLive(1, 3, "live-3"); // written live before its large copied value arrives
    try (RunFile run = table.newRunFile()) {
      live.addCopied(table, chunk, run);
      assertEquals(1, run.pairs(), "only the small pair goes into the run");
      live.ingestKeepingLive(table, run, Set.of(1));
    }
    org.junit.jupiter.api.Assertions.assertArrayEquals(large, table.get(key(1, 1)));
    assertEquals("copy-2", new String(table.get(key(1, 2)), StandardCharsets.UTF_8));
    assertEquals("live-3", new String(table.get(key(1, 3)), StandardCharsets.UTF_8));
  }

  private void putLive(int partition, int i, String value) {
    byte[] k = key(partition, i);
    live.apply("t", List.of(k), () -> {
      try (TableBatch b = table.newBatch()) {
        b.put(k, bytes(value));
        b.commit();
      }
    });
    model.put(name(partition, i), value);
  }

  private void deleteLive(int partition, int i) {
    byte[] k = key(partition, i);
    live.apply("t", List.of(k), () -> table.delete(List.of(k)));
    model.remove(name(partition, i));
  }

  private Map<String, String> stored() {
    Map<String, String> out = new TreeMap<>();
    try (StoreCursor c = table.scan(null, null)) {
      for (; c.valid(); c.next()) {
        byte[] k = c.key();
        out.put(StoredKeys.partitionOf(k) + "/" + new String(StoredKeys.scannedKey(k), StandardCharsets.UTF_8),
            new String(c.value(), StandardCharsets.UTF_8));
      }
    }
    return out;
  }

  private static byte[] key(int partition, int i) {
    return StoredKeys.storedKey(partition, bytes(String.format("k%04d", i)));
  }

  private static String name(int partition, int i) {
    return partition + "/" + String.format("k%04d", i);
  }

  private static byte[] bytes(String s) {
    return s.getBytes(StandardCharsets.UTF_8);
  }
}
