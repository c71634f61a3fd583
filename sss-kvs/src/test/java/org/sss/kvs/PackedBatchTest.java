package org.sss.kvs;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNull;

import java.nio.file.Path;
import java.util.Random;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;
import org.sss.core.proto.TableOptions;

class PackedBatchTest {
  @TempDir
  Path dir;

  @Test
  void commit_writesEveryFormOfPairInOneBatch() {
    try (NodeStore store = NodeStore.open(dir)) {
      store.create("other", TableOptions.getDefaultInstance(), false);
      StoreTable t = store.create("t", TableOptions.newBuilder().setDisableWal(true).build(), false);
      PackedBatch b = t.newPackedBatch(16);
      Random r = new Random(7);
      byte[][] values = new byte[1000][];
      for (int i = 0; i < 1000; i++) {
        values[i] = new byte[r.nextInt(300)];
        r.nextBytes(values[i]);
        byte[] key = {(byte) (i >>> 8), (byte) i};
        switch (i % 3) {
          case 0 -> b.put(new byte[] {0, 1, key[0], key[1]}, values[i]);
          case 1 -> b.put(1, key, new byte[] {9, 9, 9}, 0, values[i]);
          default -> {
            byte[] packed = new byte[2 + 4 + 2 + values[i].length];
            int o = 0;
            packed[o++] = 4;
            packed[o++] = 0;
            packed[o++] = 1;
            packed[o++] = key[0];
            packed[o++] = key[1];
            int len = values[i].length;
            packed[o++] = (byte) ((len & 0x7F) | (len > 127 ? 0x80 : 0));
            if (len > 127) {
              packed[o++] = (byte) (len >>> 7);
            }
            System.arraycopy(values[i], 0, packed, o, len);
            int at = b.reserveBlock(o + len, 1); // a received block of one pair
            System.arraycopy(packed, 0, b.array(), at, o + len);
          }
        }
      }
      assertEquals(1000, b.count());
      b.commit();
      assertEquals(0, b.count());
      for (int i = 0; i < 1000; i++) {
        byte[] key = {0, 1, (byte) (i >>> 8), (byte) i};
        assertArrayEquals(values[i], t.get(key), "pair " + i);
      }
      assertEquals(1000, t.count());
      assertNull(store.require("other").get(new byte[] {0, 1, 0, 0}), "records go to their own table only");
    }
  }
}
