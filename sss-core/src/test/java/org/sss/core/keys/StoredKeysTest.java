package org.sss.core.keys;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.netty.buffer.ByteBuf;
import io.netty.buffer.Unpooled;
import org.junit.jupiter.api.Test;
import org.sss.core.cluster.PartitionMap;

/** The stored-key layout, checked against bytes written out by hand from the drawing in {@link StoredKeys}. */
class StoredKeysTest {
  private static final byte[] KEY = {'a', 'b', 0};

  @Test
  void storedKey_isTheBigEndianPartitionThenTheKey() {
    assertArrayEquals(new byte[] {0x12, 0x34, 'a', 'b', 0}, StoredKeys.storedKey(0x1234, KEY));
    for (int p : new int[] {0, 1, 255, 256, 4660, PartitionMap.MAX_PARTITIONS - 1}) {
      byte[] stored = StoredKeys.storedKey(p, KEY);
      assertEquals(KEY.length + StoredKeys.PREFIX_BYTES, stored.length);
      assertEquals(p, StoredKeys.partitionOf(stored));
      assertArrayEquals(KEY, StoredKeys.scannedKey(stored));
      assertArrayEquals(KEY, StoredKeys.encodedKey(stored, false));
    }
    assertEquals(2, StoredKeys.storedKey(300, new byte[0]).length);
    assertEquals(-1, StoredKeys.partitionOrMinusOne(new byte[] {7}));
  }

  @Test
  void storedKeys_sortByPartitionFirst() {
    byte[] high = StoredKeys.storedKey(1, new byte[] {0});
    byte[] low = StoredKeys.storedKey(0, new byte[] {(byte) 0xFF, (byte) 0xFF});
    assertTrue(KeyCodec.compare(low, high) < 0);
    assertTrue(KeyCodec.compare(StoredKeys.storedKey(255, new byte[0]), StoredKeys.storedKey(256, new byte[0])) < 0,
        "partition prefix is big-endian unsigned");
  }

  @Test
  void multiValuedKey_endsWithSourceAndSequence() {
    byte[] stored = StoredKeys.withUniquifier(StoredKeys.storedKey(3, KEY), 0xABCD, 0x0102030405060708L);
    assertArrayEquals(new byte[] {0, 3, 'a', 'b', 0, (byte) 0xAB, (byte) 0xCD, 1, 2, 3, 4, 5, 6, 7, 8}, stored);
    assertEquals(stored.length, StoredKeys.storedLength(KEY.length, true));
    assertEquals(KEY.length, StoredKeys.keyLength(stored.length, true));
    assertArrayEquals(KEY, StoredKeys.encodedKey(stored, true));
    assertTrue(StoredKeys.holdsKey(stored, KEY, true));
    assertFalse(StoredKeys.holdsKey(stored, new byte[] {'a', 'b'}, true));
    assertTrue(StoredKeys.isValueOf(stored, StoredKeys.storedKey(3, KEY)));
    assertFalse(StoredKeys.isValueOf(stored, StoredKeys.storedKey(4, KEY)), "another partition");
    assertFalse(StoredKeys.isValueOf(StoredKeys.storedKey(3, KEY), StoredKeys.storedKey(3, KEY)), "no uniquifier");
    assertArrayEquals(StoredKeys.scannedKey(StoredKeys.storedKey(3, KEY)),
        StoredKeys.withoutUniquifier(StoredKeys.scannedKey(stored), true));
  }

  @Test
  void bufferForms_writeAndReadTheSameLayoutAsTheArrayForms() {
    ByteBuf buf = Unpooled.buffer();
    try {
      StoredKeys.writeStored(buf, 0x0102, KEY, true, 0xABCD, 0x0102030405060708L);
      byte[] written = new byte[buf.readableBytes()];
      buf.getBytes(0, written);
      assertArrayEquals(StoredKeys.withUniquifier(StoredKeys.storedKey(0x0102, KEY), 0xABCD, 0x0102030405060708L), written);
      assertEquals(0x0102, StoredKeys.partitionAt(buf, 0, written.length));
      assertEquals(-1, StoredKeys.partitionAt(buf, 0, 1));
      buf.clear();
      StoredKeys.writeStored(buf, 9, KEY, false, 0xABCD, 5);
      assertEquals(StoredKeys.storedLength(KEY.length, false), buf.readableBytes());
      assertArrayEquals(KEY, StoredKeys.readScannedKey(buf, StoredKeys.storedLength(KEY.length, false)));
      assertEquals(0, buf.readableBytes());
    } finally {
      buf.release();
    }
  }
}
