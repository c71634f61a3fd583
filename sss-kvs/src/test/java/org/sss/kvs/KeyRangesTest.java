package org.sss.kvs;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.util.Arrays;
import java.util.Random;
import org.junit.jupiter.api.Test;
import org.sss.core.cluster.PartitionMap;
import org.sss.core.keys.StoredKeys;

class KeyRangesTest {
  private static byte[] b(int... v) {
    byte[] out = new byte[v.length];
    for (int i = 0; i < v.length; i++) {
      out[i] = (byte) v[i];
    }
    return out;
  }

  @Test
  void successor_allFfOrEmptyIsNull() {
    assertNull(KeyRanges.successor(b()));
    assertNull(KeyRanges.successor(b(0xFF)));
    assertNull(KeyRanges.successor(b(0xFF, 0xFF, 0xFF)));
  }

  @Test
  void successor_incrementsLastByteBelowFfAndDropsTrailingFf() {
    assertArrayEquals(b(0x01), KeyRanges.successor(b(0x00)));
    assertArrayEquals(b(0x02), KeyRanges.successor(b(0x01)));
    assertArrayEquals(b(0xFF), KeyRanges.successor(b(0xFE)));
    assertArrayEquals(b(0x61, 0x63), KeyRanges.successor(b(0x61, 0x62)));
    assertArrayEquals(b(0x02), KeyRanges.successor(b(0x01, 0xFF, 0xFF)));
    assertArrayEquals(b(0x00, 0x80), KeyRanges.successor(b(0x00, 0x7F)));
  }

  @Test
  void successor_doesNotModifyItsInput() {
    byte[] in = b(0x10, 0xFF);
    KeyRanges.successor(in);
    assertArrayEquals(b(0x10, 0xFF), in);
  }

  @Test
  void successor_isAboveEveryExtensionAndTheSmallestSuch() {
    Random rnd = new Random(1);
    for (int i = 0; i < 5_000; i++) {
      byte[] prefix = new byte[1 + rnd.nextInt(4)];
      for (int j = 0; j < prefix.length; j++) {
        prefix[j] = rnd.nextInt(3) == 0 ? (byte) 0xFF : (byte) rnd.nextInt(256);
      }
      byte[] succ = KeyRanges.successor(prefix);
      byte[] extension = Arrays.copyOf(prefix, prefix.length + 3);
      Arrays.fill(extension, prefix.length, extension.length, (byte) 0xFF);
      if (succ == null) {
        for (byte x : prefix) {
          assertEquals((byte) 0xFF, x);
        }
        continue;
      }
      assertTrue(Arrays.compareUnsigned(prefix, succ) < 0);
      assertTrue(Arrays.compareUnsigned(extension, succ) < 0);
      // a key at or above the successor does not start with the prefix
      assertTrue(succ.length < prefix.length || !Arrays.equals(prefix, 0, prefix.length, succ, 0, prefix.length));
    }
  }

  @Test
  void partition_withoutPrefixCoversExactlyThePartition() {
    byte[][] r = KeyRanges.partition(0x0102, b());
    assertArrayEquals(b(0x01, 0x02), r[0]);
    assertArrayEquals(b(0x01, 0x03), r[1]);
    assertArrayEquals(StoredKeys.storedKey(0x00FF, new byte[0]), KeyRanges.partition(0x00FF, b())[0]);
    // 00 FF has successor 01: every stored key of partition 0x00FF is below it, partition 0x0100's are not
    assertArrayEquals(b(0x01), KeyRanges.partition(0x00FF, b())[1]);
  }

  @Test
  void partition_withPrefix() {
    byte[][] r = KeyRanges.partition(7, b(0x61, 0xFF));
    assertArrayEquals(b(0x00, 0x07, 0x61, 0xFF), r[0]);
    assertArrayEquals(b(0x00, 0x07, 0x62), r[1]);
  }

  @Test
  void partition_lastPartitionHasNoUpperBound() {
    byte[][] r = KeyRanges.partition(0xFFFF, b());
    assertArrayEquals(b(0xFF, 0xFF), r[0]);
    assertNull(r[1]);
    assertArrayEquals(b(0xFF, 0xFF, 0x00), KeyRanges.partition(0xFFFF, b(0x00))[0]);
    assertArrayEquals(b(0xFF, 0xFF, 0x01), KeyRanges.partition(0xFFFF, b(0x00))[1]);
  }
}
