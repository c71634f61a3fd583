package org.sss.server.execution;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertSame;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.lang.reflect.Field;
import java.util.ArrayDeque;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.HashMap;
import java.util.IdentityHashMap;
import java.util.List;
import java.util.Map;
import java.util.Random;
import org.junit.jupiter.api.Test;
import org.sss.core.api.Emitter;
import org.sss.core.api.Reducer;
import org.sss.core.api.Serdes;

/** Scratch: tries to break the combining buffer's table, runs and accounting. */
class SkepticCombiningTest {
  private static Object field(Object o, String name) throws Exception {
    Class<?> c = o.getClass();
    while (c != null) {
      try {
        Field f = c.getDeclaredField(name);
        f.setAccessible(true);
        return f.get(o);
      } catch (NoSuchFieldException e) {
        c = c.getSuperclass();
      }
    }
    throw new NoSuchFieldException(name);
  }

  /** held, heldBytes and the pool agree with what the groups hold. */
  @SuppressWarnings("unchecked")
  static void checkInvariants(CombiningBuffer<?, ?> buffer) throws Exception {
    long held = (long) field(buffer, "held");
    long heldBytes = (long) field(buffer, "heldBytes");
    GroupTable<HeldValues<Object>> groups = (GroupTable<HeldValues<Object>>) field(buffer, "groups");
    long[] count = {0};
    long[] bytes = {0};
    Map<Object, Boolean> heldArrays = new IdentityHashMap<>();
    List<String> problems = new ArrayList<>();
    groups.forEach((k, g) -> {
      long gb = 0;
      int n = 0;
      for (Object v : g) {
        gb += CombiningBuffer.sizeOf(v);
        n++;
        if (v instanceof byte[] a && a.length >= ArrayRecycler.MIN_LENGTH && heldArrays.put(a, true) != null) {
          // the same array twice in groups: only fine if nothing recycles it twice
          problems.add("array held twice under " + k);
        }
      }
      if (n != g.size()) {
        problems.add("size " + g.size() + " but iterates " + n);
      }
      long recorded;
      try {
        recorded = (long) field(g, "bytes");
      } catch (Exception e) {
        throw new RuntimeException(e);
      }
      if (recorded != gb) {
        problems.add("group bytes " + recorded + " vs " + gb + " for " + k);
      }
      count[0] += n;
      bytes[0] += CombiningBuffer.GROUP_BYTES + CombiningBuffer.sizeOf(k) + gb;
    });
    assertEquals(List.of(), problems);
    assertEquals(count[0], held, "held");
    assertEquals(bytes[0], heldBytes, "heldBytes");
    ArrayRecycler arrays = (ArrayRecycler) field(buffer, "arrays");
    if (arrays != null) {
      Map<Integer, ArrayDeque<byte[]>> free = (Map<Integer, ArrayDeque<byte[]>>) field(arrays, "free");
      Map<Object, Boolean> pooled = new IdentityHashMap<>();
      long pooledBytes = 0;
      for (ArrayDeque<byte[]> d : free.values()) {
        for (byte[] a : d) {
          assertTrue(pooled.put(a, true) == null, "array pooled twice");
          assertFalse(heldArrays.containsKey(a), "a held array is pooled");
          pooledBytes += a.length;
        }
      }
      assertEquals(pooledBytes, arrays.pooledBytes());
    }
  }

  /**
   * A combiner preserving the sum of its values, in many shapes: one value, two, none (sum 0),
   * its inputs unchanged (same references), one constant object many times; it may iterate
   * twice, or stop early and re-iterate.
   */
  static final class Chaotic<K> implements Reducer<K, Long, K, Long> {
    static final Long BIG = 1000L; // one object, not cached by Long.valueOf
    final Random random = new Random(5);
    long calls;

    @Override
    public void reduce(K key, Iterable<Long> values, Emitter<K, Long> out) {
      calls++;
      int shape = random.nextInt(7);
      if (shape == 1 || shape == 6) { // two passes must agree, reference by reference
        List<Long> first = new ArrayList<>();
        for (Long v : values) {
          first.add(v);
        }
        int i = 0;
        for (Long v : values) {
          assertSame(first.get(i++), v);
        }
        assertEquals(first.size(), i);
      }
      if (shape == 2) { // peek at the first only, then a full pass
        values.iterator().next();
      }
      long sum = 0;
      int n = 0;
      for (Long v : values) {
        sum += v;
        n++;
      }
      assertTrue(n >= 1, "combiner given no values");
      switch (shape) {
        case 3 -> { // two values
          out.emit(key, sum - BIG);
          out.emit(key, BIG);
        }
        case 4 -> { // none when the sum is zero
          if (sum != 0) {
            out.emit(key, sum);
          }
        }
        case 5 -> { // the inputs unchanged
          for (Long v : values) {
            out.emit(key, v);
          }
        }
        case 6 -> { // a run of one constant object, and the rest
          long k = Math.floorMod(sum, 3L) + 1;
          for (long j = 0; j < k; j++) {
            out.emit(key, BIG);
          }
          out.emit(key, sum - k * BIG);
        }
        default -> out.emit(key, sum);
      }
    }
  }

  private static Long value(Random random, Long last) {
    int p = random.nextInt(10);
    if (p < 4) {
      return Chaotic.BIG; // a constant object: runs
    }
    if (p < 6) {
      return last; // the previous object again
    }
    if (p < 7) {
      return Long.valueOf(1); // cached: one object
    }
    return Long.valueOf(random.nextInt(5001) - 2500 + 100_000); // fresh objects
  }

  @Test
  void longKeysWithOneHashCodeAndAChaoticCombiner() throws Exception {
    Map<Long, Long> sums = new HashMap<>();
    PairWriter summing = (k, v) -> sums.merge(Serdes.LONG.decodeKey(k), Serdes.LONG.decodeValue(v), Long::sum);
    Chaotic<Long> combiner = new Chaotic<>();
    CombiningBuffer<Long, Long> buffer = new CombiningBuffer<>(combiner, Serdes.LONG, Serdes.LONG, summing, 3_000);
    Map<Long, Long> model = new HashMap<>();
    Random random = new Random(9);
    Long last = Chaotic.BIG;
    for (int i = 0; i < 300_000; i++) {
      long a = random.nextInt(i < 150_000 ? 200 : 3000);
      long key = random.nextBoolean() ? (a << 32) | a : a; // (a<<32)|a all hash to 0: one probe cluster
      Long v = value(random, last);
      last = v;
      model.merge(key, v, Long::sum);
      buffer.add(Long.valueOf(key), v);
      if (i % 101 == 0) {
        checkInvariants(buffer);
      }
    }
    checkInvariants(buffer);
    buffer.flush();
    checkInvariants(buffer);
    Map<Long, Long> nonZero = new HashMap<>(model);
    nonZero.values().removeIf(x -> x == 0);
    Map<Long, Long> got = new HashMap<>(sums);
    got.values().removeIf(x -> x == 0);
    assertEquals(nonZero, got);
    assertFalse(buffer.bypassed());
    assertTrue(combiner.calls > 1000);
  }

  @Test
  void byteArrayKeysChaotic() throws Exception {
    Map<String, Long> sums = new HashMap<>();
    PairWriter summing = (k, v) ->
        sums.merge(Arrays.toString(Serdes.BYTES.decodeKey(k)), Serdes.LONG.decodeValue(v), Long::sum);
    CombiningBuffer<byte[], Long> buffer = new CombiningBuffer<>(new Chaotic<>(), Serdes.BYTES, Serdes.LONG, summing, 2_000);
    Map<String, Long> model = new HashMap<>();
    Random random = new Random(13);
    Long last = Chaotic.BIG;
    byte[] reused = new byte[4];
    for (int i = 0; i < 200_000; i++) {
      int k = random.nextInt(700);
      reused[0] = (byte) k;
      reused[1] = (byte) (k >> 8);
      Long v = value(random, last);
      last = v;
      model.merge(Arrays.toString(reused), v, Long::sum);
      buffer.add(reused, v);
      if (i % 97 == 0) {
        checkInvariants(buffer);
      }
    }
    buffer.flush();
    model.values().removeIf(x -> x == 0);
    sums.values().removeIf(x -> x == 0);
    assertEquals(model, sums);
  }

  /** byte[] values: sums by position, combined in many shapes; emits the same array object many times in a row. */
  static final class ByteChaos implements Reducer<Long, byte[], Long, byte[]> {
    final Random random = new Random(3);
    byte[] out;

    @Override
    public void reduce(Long key, Iterable<byte[]> values, Emitter<Long, byte[]> emitter) {
      int shape = random.nextInt(4);
      if (shape == 0) { // unchanged inputs
        for (byte[] v : values) {
          emitter.emit(key, v);
        }
        return;
      }
      byte[] sum = null;
      for (byte[] v : values) {
        if (sum == null) {
          sum = out != null && out.length == v.length ? out : new byte[v.length];
          Arrays.fill(sum, (byte) 0);
        }
        for (int i = 0; i < v.length; i++) {
          sum[i] += v[i];
        }
      }
      out = sum;
      if (shape == 1) { // the sum, then a zero array: the same output object emitted twice
        emitter.emit(key, sum);
        byte[] zero = new byte[sum.length];
        emitter.emit(key, zero);
        emitter.emit(key, zero);
      } else {
        emitter.emit(key, sum);
      }
    }
  }

  @Test
  void byteArrayValuesRunsAndRecycling() throws Exception {
    Map<Long, byte[]> sums = new HashMap<>();
    PairWriter summing = (k, v) -> {
      byte[] s = sums.computeIfAbsent(Serdes.LONG.decodeKey(k), x -> new byte[v.length]);
      for (int i = 0; i < v.length; i++) {
        s[i] += v[i];
      }
    };
    CombiningBuffer<Long, byte[]> buffer = new CombiningBuffer<>(new ByteChaos(), Serdes.LONG, Serdes.BYTES, summing, 500);
    Map<Long, byte[]> model = new HashMap<>();
    Random random = new Random(17);
    byte[] constant = new byte[2048];
    random.nextBytes(constant);
    byte[] bigConstant = new byte[100 << 10];
    random.nextBytes(bigConstant);
    byte[] reused = new byte[2048];
    byte[] bigReused = new byte[100 << 10];
    for (int i = 0; i < 30_000; i++) {
      long key = random.nextInt(40);
      boolean big = key % 8 == 0;
      byte[] v;
      int p = random.nextInt(3);
      if (p == 0) {
        v = big ? bigConstant : constant; // the same object many times in a row
      } else {
        v = big ? bigReused : reused;
        v[random.nextInt(v.length)] = (byte) random.nextInt();
        v[0]++;
      }
      byte[] m = model.computeIfAbsent(key, x -> new byte[v.length]);
      for (int j = 0; j < v.length; j++) {
        m[j] += v[j];
      }
      buffer.add(key, v);
      if (i % 7 == 0) {
        checkInvariants(buffer);
      }
    }
    buffer.flush();
    checkInvariants(buffer);
    assertEquals(model.keySet(), sums.keySet());
    for (long k : model.keySet()) {
      assertArrayEquals(model.get(k), sums.get(k), "key " + k);
    }
  }

  @Test
  void stringKeysConstantValueWordCount() throws Exception {
    Map<String, Long> sums = new HashMap<>();
    PairWriter summing = (k, v) -> sums.merge(Serdes.STRING.decodeKey(k), Serdes.LONG.decodeValue(v), Long::sum);
    CombiningBuffer<String, Long> buffer = new CombiningBuffer<>(new Chaotic<>(), Serdes.STRING, Serdes.LONG, summing,
        MapTask.COMBINE_BUDGET);
    Map<String, Long> model = new HashMap<>();
    Random random = new Random(21);
    Long one = 1L;
    for (int i = 0; i < 2_000_000; i++) {
      String key = "w" + random.nextInt(i < 1_000_000 ? 100 : 1_500_000);
      model.merge(key, one, Long::sum);
      buffer.add(new String(key), one);
      if (i % 100_003 == 0) {
        checkInvariants(buffer);
      }
    }
    buffer.flush();
    assertEquals(model, sums);
  }

  /**
   * Packed pairs (src << 32 | dst, graph edges) of small ids: Long.hashCode is src ^ dst, so
   * 512 x 512 keys share 512 hash codes. HashMap chains (and treeifies, Long is Comparable);
   * linear probing merges them into one cluster of every key, and each insert walks it.
   */
  @Test
  void packedPairKeysAgainstAHashMap() {
    int n = 512;
    long t0 = System.nanoTime();
    Map<Object, Object> map = new HashMap<>();
    for (long i = 0; i < n; i++) {
      for (long j = 0; j < n; j++) {
        Long key = (i << 32) | j;
        if (map.get(key) == null) {
          map.put(key, key);
        }
      }
    }
    long mapNanos = System.nanoTime() - t0;
    t0 = System.nanoTime();
    GroupTable<Object> table = new GroupTable<>();
    for (long i = 0; i < n; i++) {
      for (long j = 0; j < n; j++) {
        Long key = (i << 32) | j;
        if (table.get(key) == null) {
          table.putNew(key, key);
        }
      }
    }
    long tableNanos = System.nanoTime() - t0;
    System.out.printf("packed pairs %d keys: HashMap %d ms, GroupTable %d ms%n", n * n, mapNanos / 1_000_000,
        tableNanos / 1_000_000);
    assertEquals(map.size(), table.size());
    assertTrue(tableNanos < 20 * mapNanos + 200_000_000L,
        "GroupTable " + tableNanos / 1_000_000 + " ms vs HashMap " + mapNanos / 1_000_000 + " ms");
  }

  @Test
  void packedPairKeysThroughTheBuffer() throws Exception {
    int n = 512;
    long[] pairs = {0};
    CombiningBuffer<Long, Long> buffer = new CombiningBuffer<>((k, vs, out) -> {
      long s = 0;
      for (long v : vs) {
        s += v;
      }
      out.emit(k, s);
    }, Serdes.LONG, Serdes.LONG, (k, v) -> pairs[0]++, MapTask.COMBINE_BUDGET);
    long t0 = System.nanoTime();
    for (int round = 0; round < 2; round++) {
      for (long i = 0; i < n; i++) {
        for (long j = 0; j < n; j++) {
          buffer.add((i << 32) | j, 1L);
        }
      }
    }
    buffer.flush();
    long ms = (System.nanoTime() - t0) / 1_000_000;
    System.out.printf("buffer, packed pairs %d keys x2: %d ms, %d pairs written%n", n * n, ms, pairs[0]);
    assertTrue(ms < 3_000, "took " + ms + " ms");
  }
}
