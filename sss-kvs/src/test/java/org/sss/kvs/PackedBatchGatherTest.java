package org.sss.kvs;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.nio.file.Path;
import java.util.Arrays;
import java.util.Map;
import java.util.Random;
import java.util.TreeMap;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;
import org.sss.core.keys.KeyCodec;
import org.sss.core.proto.Compression;
import org.sss.core.proto.TableOptions;

/**
 * A table that gathers sorted runs keeps a committed batch's array when it is nearly full and a
 * copy otherwise; either way the batch object is reused for the next pairs, so no pair of one
 * commit may be overwritten by the next, and the last write of a key wins.
 */
class PackedBatchGatherTest {
  private static final TableOptions BULK = TableOptions.newBuilder().setDisableWal(true)
      .setDisableAutoCompaction(true).setCompression(Compression.NONE).build();

  @Test
  void commitsOfFullAndShortBatches_reusingOneBatch_keepEveryPairAsLastWritten(@TempDir Path dir) {
    TreeMap<byte[], byte[]> model = new TreeMap<>(Arrays::compareUnsigned);
    Random random = new Random(42);
    try (NodeStore store = NodeStore.open(dir)) {
      StoreTable t = store.create("bulk", BULK, false);
      PackedBatch b = t.newPackedBatch(64 << 10);
      for (int round = 0; round < 40; round++) {
        // alternately fill the array (kept as it is) and commit a few pairs (copied)
        int pairs = round % 2 == 0 ? 2_000 : 3;
        for (int i = 0; i < pairs && (round % 2 == 1 || b.bytes() < (60 << 10)); i++) {
          byte[] key = KeyCodec.encodeLong(random.nextInt(5_000));
          byte[] value = new byte[1 + random.nextInt(20)];
          random.nextBytes(value);
          b.put(key, value);
          model.put(key, value);
        }
        b.commit();
      }
      // received batches: a block copied in one piece into room reserved for exactly it
      for (int round = 0; round < 5; round++) {
        PackedBatch sender = new PackedBatch(null, 64, OrderedStreams.NONE);
        for (int i = 0; i < 10; i++) {
          byte[] key = KeyCodec.encodeLong(10_000 + round * 10 + i);
          byte[] value = new byte[] {(byte) round, (byte) i};
          sender.put(key, value);
          model.put(key, value);
        }
        SortedRuns.Batch block = sender.take();
        PackedBatch received = t.newPackedBatch(0);
        int at = received.reserveBlock(block.length(), block.count());
        System.arraycopy(block.rep(), 0, received.array(), at, block.length());
        received.commit();
      }
      assertEquals(model.size(), t.count());
      try (StoreCursor c = t.scan(null, null)) {
        for (Map.Entry<byte[], byte[]> e : model.entrySet()) {
          assertTrue(c.valid(), "the scan ended before key " + KeyCodec.decodeLong(e.getKey()));
          assertArrayEquals(e.getKey(), c.key());
          assertArrayEquals(e.getValue(), c.value(), "value of " + KeyCodec.decodeLong(e.getKey()));
          c.next();
        }
        assertFalse(c.valid(), "no pair beyond the model's");
      }
    }
  }
}
