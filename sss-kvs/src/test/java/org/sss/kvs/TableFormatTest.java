package org.sss.kvs;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNotEquals;
import static org.junit.jupiter.api.Assertions.assertNotNull;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.HashSet;
import java.util.List;
import java.util.Set;
import java.util.stream.Stream;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;
import org.rocksdb.Options;
import org.rocksdb.RocksDBException;
import org.rocksdb.SstFileReader;
import org.rocksdb.TableProperties;
import org.sss.core.proto.Compression;
import org.sss.core.proto.TableOptions;

/**
 * Tables' SST files are cut into blocks of {@link NodeStore#BLOCK_BYTES} (64 KiB), not RocksDB's
 * 4 KiB, on both ways a file is made: a memtable's flush and a file written to be ingested.
 * Read back from the files' own table properties. And every table of a node reads through the
 * node's one block cache of {@link NodeStore#BLOCK_CACHE_BYTES}, seen through RocksDB's properties
 * of each column family.
 */
class TableFormatTest {
  private static final TableOptions UNCOMPRESSED = TableOptions.newBuilder().setCompression(Compression.NONE).build();

  @TempDir
  Path dir;

  @Test
  void flushedAndIngestedFiles_haveBlocksOfTheStoresSize() throws Exception {
    assertEquals(64 << 10, NodeStore.BLOCK_BYTES);
    try (NodeStore store = NodeStore.open(dir)) {
      StoreTable flushed = store.create("flushed", UNCOMPRESSED, false);
      try (TableBatch b = flushed.newBatch()) {
        for (int i = 0; i < 40_000; i++) {
          b.put(key(i), value(i));
        }
        b.commit();
      }
      flushed.flush();
      Set<Path> afterFlush = sstFiles();
      assertFalse(afterFlush.isEmpty(), "the flush wrote a file");
      assertBlocksOfTheStoresSize(afterFlush, "a memtable's flush");

      StoreTable ingested = store.create("ingested", UNCOMPRESSED, false);
      List<byte[][]> run = new ArrayList<>();
      for (int i = 0; i < 40_000; i++) {
        run.add(new byte[][] {key(i), value(i)});
      }
      ingested.ingestSorted(run);
      Set<Path> added = sstFiles();
      added.removeAll(afterFlush);
      assertFalse(added.isEmpty(), "the ingest added a file");
      assertBlocksOfTheStoresSize(added, "a file written to be ingested");
    }
  }

  @Test
  void everyTable_madeAloneFromASpareOrReopened_readsThroughTheNodesOneCache() throws Exception {
    assertEquals(256L << 20, NodeStore.BLOCK_CACHE_BYTES);
    try (NodeStore store = NodeStore.open(dir)) {
      StoreTable alone = store.create("alone", UNCOMPRESSED, false); // the profile's first: no spare yet
      store.awaitBackground(); // spares of the profile made
      StoreTable fromSpare = store.create("from-spare", UNCOMPRESSED, false);
      assertNotEquals("from-spare", fromSpare.family(), "the table took a spare");
      fill(alone);
      fill(fromSpare);
      assertOneCache(List.of(alone, fromSpare));
    }
    try (NodeStore store = NodeStore.open(dir)) {
      assertOneCache(List.of(store.require("alone"), store.require("from-spare")));
    }
  }

  private static void fill(StoreTable table) {
    try (TableBatch b = table.newBatch()) {
      for (int i = 0; i < 40_000; i++) {
        b.put(key(i), value(i));
      }
      b.commit();
    }
    table.flush();
  }

  /**
   * Each table's cache holds the node's size, and blocks read from one table show in every
   * other's cache: a cache per table would hold them in the reader's only.
   */
  private static void assertOneCache(List<StoreTable> tables) {
    for (StoreTable t : tables) {
      assertEquals(NodeStore.BLOCK_CACHE_BYTES, t.rocksProperty("rocksdb.block-cache-capacity"), t.name());
    }
    for (StoreTable reader : tables) {
      long before = reader.rocksProperty("rocksdb.block-cache-usage");
      for (int i = 0; i < 40_000; i += 97) {
        assertNotNull(reader.get(key(i)));
      }
      long after = reader.rocksProperty("rocksdb.block-cache-usage");
      assertTrue(after - before > 10 * NodeStore.BLOCK_BYTES, reader.name() + ": its reads filled the cache, "
          + before + " -> " + after + " bytes");
      for (StoreTable other : tables) {
        assertEquals(after, other.rocksProperty("rocksdb.block-cache-usage"),
            other.name() + " sees the blocks " + reader.name() + " read");
      }
    }
  }

  /** Every file's data blocks average between half and twice the store's block size. */
  private static void assertBlocksOfTheStoresSize(Set<Path> files, String how) throws RocksDBException {
    for (Path f : files) {
      try (Options options = new Options(); SstFileReader reader = new SstFileReader(options)) {
        reader.open(f.toString());
        TableProperties p = reader.getTableProperties();
        assertTrue(p.getNumDataBlocks() > 1, how + ": " + f + " holds several blocks");
        long average = p.getDataSize() / p.getNumDataBlocks();
        assertTrue(average > NodeStore.BLOCK_BYTES / 2 && average < 2 * NodeStore.BLOCK_BYTES,
            how + ": blocks of " + average + " bytes on average in " + f);
      }
    }
  }

  private Set<Path> sstFiles() throws IOException {
    try (Stream<Path> files = Files.walk(dir)) {
      return new HashSet<>(files.filter(f -> f.toString().endsWith(".sst")).toList());
    }
  }

  private static byte[] key(int i) {
    return String.format("k%09d", i).getBytes(StandardCharsets.US_ASCII);
  }

  private static byte[] value(int i) {
    byte[] v = new byte[100];
    for (int j = 0; j < v.length; j++) {
      v[j] = (byte) (i * 31 + j * 7);
    }
    return v;
  }
}
