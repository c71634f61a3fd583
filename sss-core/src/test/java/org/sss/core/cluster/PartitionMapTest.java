package org.sss.core.cluster;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNotEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import com.google.common.hash.Hashing;
import java.nio.charset.StandardCharsets;
import java.util.List;
import java.util.Random;
import org.junit.jupiter.api.Test;
import org.sss.core.keys.KeyCodec;

class PartitionMapTest {

  @Test
  void partitionOf_isWithinRangeForManyPartitionCounts() {
    Random rnd = new Random(1);
    for (int p : new int[] {1, 2, 3, 7, 24, 256, 1000, PartitionMap.MAX_PARTITIONS}) {
      PartitionMap map = PartitionMap.roundRobin(p, 1);
      for (int i = 0; i < 2_000; i++) {
        byte[] key = new byte[rnd.nextInt(20)];
        rnd.nextBytes(key);
        int part = map.partitionOf(key);
        assertTrue(part >= 0 && part < p, "partition " + part + " of " + p);
      }
    }
  }

  @Test
  void partitionOf_isDeterministicAcrossInstances() {
    PartitionMap a = PartitionMap.roundRobin(24, 3);
    PartitionMap b = PartitionMap.roundRobin(24, 3);
    Random rnd = new Random(2);
    for (int i = 0; i < 1_000; i++) {
      byte[] key = KeyCodec.encodeLong(rnd.nextLong());
      int first = a.partitionOf(key);
      assertEquals(first, a.partitionOf(key.clone()));
      assertEquals(first, b.partitionOf(key));
    }
  }

  @Test
  void partitionOf_isMurmur3OfTheKeyModP() {
    // Placement must match what any other client computes: murmur3_32 (seed 0), sign bit cleared, mod P.
    PartitionMap map = PartitionMap.roundRobin(24, 2);
    for (String s : new String[] {"", "a", "hello", "日本"}) {
      byte[] key = KeyCodec.encodeString(s);
      int h = Hashing.murmur3_32_fixed(0).hashBytes(key).asInt();
      assertEquals((h & 0x7fffffff) % 24, map.partitionOf(key), s);
    }
    // a known vector of MurmurHash3_x86_32, seed 0: "hello" -> 0x248bfa47
    assertEquals(0x248bfa47 % 1000, PartitionMap.roundRobin(1000, 1)
        .partitionOf("hello".getBytes(StandardCharsets.UTF_8)));
  }

  @Test
  void partitionOf_sliceEqualsWholeArray() {
    byte[] key = KeyCodec.encodeString("slice me");
    byte[] padded = new byte[key.length + 7];
    System.arraycopy(key, 0, padded, 3, key.length);
    PartitionMap map = PartitionMap.roundRobin(97, 1);
    assertEquals(map.partitionOf(key), map.partitionOf(padded, 3, key.length));
  }

  @Test
  void partitionOf_spreadsRandomKeysEvenly() {
    int partitions = 24;
    int keys = 100_000;
    PartitionMap map = PartitionMap.roundRobin(partitions, 3);
    Random rnd = new Random(3);
    int[] counts = new int[partitions];
    for (int i = 0; i < keys; i++) {
      counts[map.partitionOf(KeyCodec.encodeLong(rnd.nextLong()))]++;
    }
    assertSpread(counts, keys);
  }

  @Test
  void partitionOf_spreadsSequentialKeysEvenly() {
    // dense keys (0, 1, 2, ...) are the common case of generated data
    int partitions = 24;
    int keys = 100_000;
    PartitionMap map = PartitionMap.roundRobin(partitions, 3);
    int[] longCounts = new int[partitions];
    int[] stringCounts = new int[partitions];
    for (int i = 0; i < keys; i++) {
      longCounts[map.partitionOf(KeyCodec.encodeLong(i))]++;
      stringCounts[map.partitionOf(KeyCodec.encodeString("key-" + i))]++;
    }
    assertSpread(longCounts, keys);
    assertSpread(stringCounts, keys);
  }

  private static void assertSpread(int[] counts, int keys) {
    double mean = (double) keys / counts.length;
    for (int p = 0; p < counts.length; p++) {
      assertTrue(Math.abs(counts[p] - mean) <= 0.10 * mean,
          "partition " + p + " has " + counts[p] + " keys, mean " + mean);
    }
  }

  @Test
  void roundRobin_partitionPLivesOnNodePModN() {
    PartitionMap map = PartitionMap.roundRobin(10, 3);
    assertEquals(10, map.partitions());
    assertEquals(3, map.nodes());
    for (int p = 0; p < 10; p++) {
      assertEquals(p % 3, map.ownerOf(p));
    }
    assertEquals(List.of(0, 3, 6, 9), map.partitionsOf(0));
    assertEquals(List.of(1, 4, 7), map.partitionsOf(1));
    assertEquals(List.of(2, 5, 8), map.partitionsOf(2));
    assertEquals(List.of(), map.partitionsOf(3));
  }

  @Test
  void nodeOf_isOwnerOfPartitionOf() {
    PartitionMap map = PartitionMap.roundRobin(24, 5);
    for (int i = 0; i < 500; i++) {
      byte[] key = KeyCodec.encodeLong(i);
      assertEquals(map.ownerOf(map.partitionOf(key)), map.nodeOf(key));
    }
  }

  @Test
  void roundRobin_rejectsBadCounts() {
    assertThrows(IllegalArgumentException.class, () -> PartitionMap.roundRobin(8, 0));
    assertThrows(IllegalArgumentException.class, () -> PartitionMap.roundRobin(2, 3), "fewer partitions than nodes");
    assertThrows(IllegalArgumentException.class, () -> PartitionMap.roundRobin(PartitionMap.MAX_PARTITIONS + 1, 1));
    assertEquals(PartitionMap.MAX_PARTITIONS, PartitionMap.roundRobin(PartitionMap.MAX_PARTITIONS, 1).partitions());
  }

  @Test
  void of_acceptsExplicitOwnersAndCopiesThem() {
    int[] owners = {1, 1, 0, 2};
    PartitionMap map = PartitionMap.of(owners, 3);
    owners[0] = 2;
    assertEquals(1, map.ownerOf(0), "later changes to the array do not leak in");
    assertEquals(List.of(0, 1), map.partitionsOf(1));
    assertEquals("1,1,0,2", map.format());
  }

  @Test
  void of_rejectsNodeOwningNothing() {
    IllegalArgumentException e = assertThrows(IllegalArgumentException.class,
        () -> PartitionMap.of(new int[] {0, 0, 2, 2}, 3));
    assertTrue(e.getMessage().contains("node 1"), e.getMessage());
  }

  @Test
  void of_rejectsUnknownNodes() {
    IllegalArgumentException high = assertThrows(IllegalArgumentException.class,
        () -> PartitionMap.of(new int[] {0, 1, 2}, 2));
    assertTrue(high.getMessage().contains("unknown node 2"), high.getMessage());
    IllegalArgumentException negative = assertThrows(IllegalArgumentException.class,
        () -> PartitionMap.of(new int[] {0, -1, 1}, 2));
    assertTrue(negative.getMessage().contains("-1"), negative.getMessage());
  }

  @Test
  void format_listsOwnersInPartitionOrder() {
    assertEquals("0,1,2,0,1", PartitionMap.roundRobin(5, 3).format());
    assertEquals("0", PartitionMap.roundRobin(1, 1).format());
  }

  @Test
  void equals_comparesOwnersAndNodeCount() {
    assertEquals(PartitionMap.roundRobin(6, 2), PartitionMap.of(new int[] {0, 1, 0, 1, 0, 1}, 2));
    assertEquals(PartitionMap.roundRobin(6, 2).hashCode(), PartitionMap.of(new int[] {0, 1, 0, 1, 0, 1}, 2).hashCode());
    assertNotEquals(PartitionMap.roundRobin(6, 2), PartitionMap.of(new int[] {1, 0, 0, 1, 0, 1}, 2));
    assertNotEquals(PartitionMap.roundRobin(6, 2), PartitionMap.roundRobin(6, 3));
  }
}
