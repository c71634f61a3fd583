package org.sss.server.execution;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.util.ArrayList;
import java.util.Arrays;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Random;
import org.junit.jupiter.api.Test;
import org.sss.core.api.Emitter;
import org.sss.core.api.Reducer;
import org.sss.core.api.Serdes;
import org.sss.core.keys.KeyCodec;

/**
 * The combining buffer's bookkeeping with {@code byte[]} values: recycled arrays never leak a
 * value into another, large values are merged before the memory bound flushes them, and a
 * buffer whose keys never repeat steps aside.
 */
class CombiningBufferTest {
  /** Pairs the buffer wrote, by key. */
  private final Map<Long, List<byte[]>> written = new HashMap<>();
  private final PairWriter sink = (k, v) ->
      written.computeIfAbsent(KeyCodec.decodeLong(k, 0), x -> new ArrayList<>()).add(v.clone());

  /** Adds values byte by byte (mod 256): associative and commutative; reuses its output array. */
  static final class ByteSum implements Reducer<Long, byte[], Long, byte[]> {
    int calls;
    private byte[] out;

    @Override
    public void reduce(Long key, Iterable<byte[]> values, Emitter<Long, byte[]> emitter) {
      calls++;
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
      emitter.emit(key, sum);
    }
  }

  /** Emits every value it is given, unchanged: merges nothing. */
  static final class Identity implements Reducer<Long, byte[], Long, byte[]> {
    long valuesSeen;

    @Override
    public void reduce(Long key, Iterable<byte[]> values, Emitter<Long, byte[]> emitter) {
      for (byte[] v : values) {
        valuesSeen++;
        emitter.emit(key, v);
      }
    }
  }

  private static byte[] sumOf(List<byte[]> values, int length) {
    byte[] sum = new byte[length];
    for (byte[] v : values) {
      for (int i = 0; i < length; i++) {
        sum[i] += v[i];
      }
    }
    return sum;
  }

  @Test
  void recycledArraysKeepEveryKeysSumExact() throws Exception {
    int length = 4096;
    int keys = 16;
    ByteSum sum = new ByteSum();
    CombiningBuffer<Long, byte[]> buffer = new CombiningBuffer<>(sum, Serdes.LONG, Serdes.BYTES, sink, 1_000_000);
    Map<Long, List<byte[]>> emitted = new HashMap<>();
    Random random = new Random(7);
    byte[] reused = new byte[length]; // a mapper reusing its array, as the Emitter contract allows
    for (int i = 0; i < 20_000; i++) {
      long key = random.nextInt(keys);
      random.nextBytes(reused);
      emitted.computeIfAbsent(key, x -> new ArrayList<>()).add(reused.clone());
      buffer.add(key, reused);
    }
    buffer.flush();
    assertEquals(emitted.keySet(), written.keySet());
    for (long key : emitted.keySet()) {
      assertArrayEquals(sumOf(emitted.get(key), length), sumOf(written.get(key), length), "key " + key);
    }
    int pairs = written.values().stream().mapToInt(List::size).sum();
    assertTrue(pairs < 20_000 / 32, "merged to " + pairs + " pairs");
  }

  @Test
  void largeValuesAreMergedBeforeTheMemoryBoundForcesThemOut() throws Exception {
    int length = 1 << 20; // 1 MiB: 64 of them fill the buffer before any key has 64 values
    int keys = 16;
    CombiningBuffer<Long, byte[]> buffer = new CombiningBuffer<>(new ByteSum(), Serdes.LONG, Serdes.BYTES, sink, 1_000_000);
    byte[] value = new byte[length];
    List<byte[]> all = new ArrayList<>();
    for (int i = 0; i < 16 * keys; i++) {
      value[i % length] = (byte) i;
      value[(i * 7919) % length] ^= (byte) 0x5A;
      all.add(value.clone());
      buffer.add((long) (i % keys), value);
    }
    buffer.flush();
    assertFalse(buffer.bypassed());
    int pairs = written.values().stream().mapToInt(List::size).sum();
    assertEquals(keys, pairs, "one value per key");
    for (long key = 0; key < keys; key++) {
      List<byte[]> mine = new ArrayList<>();
      for (int i = (int) key; i < all.size(); i += keys) {
        mine.add(all.get(i));
      }
      assertArrayEquals(sumOf(mine, length), written.get(key).get(0), "key " + key);
    }
  }

  @Test
  void keysThatNeverRepeatMakeTheBufferStepAside() throws Exception {
    int length = 1 << 20;
    Identity identity = new Identity();
    CombiningBuffer<Long, byte[]> buffer = new CombiningBuffer<>(identity, Serdes.LONG, Serdes.BYTES, sink, 1_000_000);
    byte[] value = new byte[length];
    int n = 200;
    for (int i = 0; i < n; i++) {
      value[0] = (byte) i;
      buffer.add((long) i, value);
    }
    buffer.flush();
    assertTrue(buffer.bypassed());
    assertEquals(n, written.size());
    for (long key = 0; key < n; key++) {
      assertEquals(1, written.get(key).size());
      assertEquals((byte) key, written.get(key).get(0)[0]);
    }
    assertEquals(0, identity.valuesSeen, "single values are written without calling the combiner");
  }

  @Test
  void aCombinerThatMergesNothingCostsLinearWork() throws Exception {
    int length = 512 << 10; // two values of one key reach the eager-combine size
    Identity identity = new Identity();
    CombiningBuffer<Long, byte[]> buffer = new CombiningBuffer<>(identity, Serdes.LONG, Serdes.BYTES, sink, 1_000_000);
    byte[] value = new byte[length];
    int n = 50; // all of one key: 25 MiB, within the bound on heaps of 1 GiB and more
    for (int i = 0; i < n; i++) {
      value[1] = (byte) i;
      buffer.add(7L, value);
    }
    buffer.flush();
    assertEquals(n, written.get(7L).size());
    for (int i = 0; i < n; i++) {
      final int x = i;
      assertEquals(1, written.get(7L).stream().filter(v -> v[1] == (byte) x).count(), "value " + i);
    }
    assertTrue(identity.valuesSeen <= 4L * n, "combiner saw " + identity.valuesSeen + " values for " + n + " added");
  }

  @Test
  void hugeValuesOfKeysHoldingNothingGoStraightToTheShuffle() throws Exception {
    Identity identity = new Identity();
    CombiningBuffer<Long, byte[]> buffer = new CombiningBuffer<>(identity, Serdes.LONG, Serdes.BYTES, sink, 1_000_000);
    byte[] value = new byte[(int) CombiningBuffer.HUGE_VALUE_BYTES];
    for (int i = 0; i < 5; i++) {
      value[0] = (byte) i;
      buffer.add((long) (i % 2), value);
      assertEquals(i + 1, written.values().stream().mapToInt(List::size).sum(), "written at once, not held");
    }
    buffer.flush();
    assertEquals(3, written.get(0L).size());
    assertEquals(2, written.get(1L).size());
    assertEquals(0, identity.valuesSeen);
    assertEquals((byte) 4, written.get(0L).get(2)[0]);
  }

  @Test
  void theRecyclerReusesOnlyArraysOfTheSameLengthWithinItsBound() {
    ArrayRecycler recycler = new ArrayRecycler(3000);
    byte[] a = new byte[2000];
    recycler.recycle(a);
    recycler.recycle(new byte[2000]); // over the bound: dropped
    recycler.recycle(new byte[100]); // small: never pooled
    assertEquals(2000, recycler.pooledBytes());
    byte[] other = recycler.copy(new byte[1500]);
    assertFalse(other == a);
    byte[] src = new byte[2000];
    src[5] = 9;
    byte[] copy = recycler.copy(src);
    assertTrue(copy == a);
    assertEquals(9, copy[5]);
    assertEquals(0, recycler.pooledBytes());
  }

  /** Sums long values. */
  static final class LongSum implements Reducer<String, Long, String, Long> {
    @Override
    public void reduce(String key, Iterable<Long> values, Emitter<String, Long> emitter) {
      long sum = 0;
      for (long v : values) {
        sum += v;
      }
      emitter.emit(key, sum);
    }
  }

  /**
   * The memory bound counts keys and groups, not only values: distinct 1 KB keys with 8-byte
   * values must flush the buffer once about {@link CombiningBuffer#MAX_HELD_BYTES} of them are
   * held, not after a million of them (a gigabyte).
   */
  @Test
  void manyDistinctLargeKeysWithSmallValues_flushWithinTheByteBound() throws Exception {
    long[] writes = {0};
    long[] addedAtFirstWrite = {-1};
    long[] added = {0};
    PairWriter counting = (k, v) -> {
      if (writes[0]++ == 0) {
        addedAtFirstWrite[0] = added[0];
      }
    };
    CombiningBuffer<String, Long> buffer = new CombiningBuffer<>(new LongSum(), Serdes.STRING, Serdes.LONG, counting,
        MapTask.COMBINE_BUDGET);
    String pad = "k".repeat(1000);
    long keysInBound = CombiningBuffer.MAX_HELD_BYTES / 1000;
    for (long i = 0; i < 2 * keysInBound && writes[0] == 0; i++) {
      added[0]++;
      buffer.add(i + pad, 1L);
    }
    assertTrue(addedAtFirstWrite[0] > 0, "no flush after " + added[0] + " distinct 1 KB keys");
    assertTrue(addedAtFirstWrite[0] <= keysInBound, "flushed only after " + addedAtFirstWrite[0]
        + " keys of 1 KB; the bound is " + CombiningBuffer.MAX_HELD_BYTES + " bytes");
    buffer.flush();
    assertEquals(added[0], writes[0], "every key written once");
  }

  /**
   * Against a plain model: string keys (some with equal hash codes: "Aa" and "BB" collide, and
   * so does every string made of such pairs), drawn with a skew so that some keys take many
   * values and most few, with a value bound low enough that the buffer is flushed by it many
   * times before its last flush. Every key's sum must be exact and the written pairs per key at
   * most the forced flushes plus one.
   */
  @Test
  void stringKeysWithCollidingHashesSumExactlyAsAModel() throws Exception {
    Map<String, Long> model = new HashMap<>();
    Map<String, Long> sums = new HashMap<>();
    Map<String, Integer> pairsPerKey = new HashMap<>();
    long[] writtenBeforeTheLastFlush = {0};
    boolean[] lastFlush = {false};
    PairWriter summing = (k, v) -> {
      if (!lastFlush[0]) {
        writtenBeforeTheLastFlush[0]++;
      }
      String key = Serdes.STRING.decodeKey(k);
      sums.merge(key, Serdes.LONG.decodeValue(v), Long::sum);
      pairsPerKey.merge(key, 1, Integer::sum);
    };
    int maxHeld = 10_000; // 320 keys of up to 64 held values each pass it: the bound forces flushes
    CombiningBuffer<String, Long> buffer = new CombiningBuffer<>(new LongSum(), Serdes.STRING, Serdes.LONG, summing,
        maxHeld);
    String[] colliding = {"Aa", "BB"};
    Random random = new Random(42);
    int adds = 400_000;
    for (int i = 0; i < adds; i++) {
      String key;
      if (random.nextInt(4) == 0) {
        StringBuilder b = new StringBuilder("c");
        int bits = random.nextInt(64);
        for (int j = 0; j < 6; j++) {
          b.append(colliding[(bits >> j) & 1]); // 64 keys, one hash code
        }
        key = b.toString();
      } else {
        int r = random.nextInt(1 << 16);
        key = "k" + (r * (long) r >>> 24); // skewed: low numbers are drawn far more often
      }
      long value = random.nextInt(1000) - 500;
      model.merge(key, value, Long::sum);
      buffer.add(new String(key), value); // a fresh object, as a tokenizer emits
    }
    assertTrue(writtenBeforeTheLastFlush[0] > 0, "the value bound never forced a flush");
    lastFlush[0] = true;
    buffer.flush();
    assertEquals(model, sums);
    assertEquals(64, model.keySet().stream().filter(k -> k.startsWith("c")).count());
    int mostPairs = pairsPerKey.values().stream().mapToInt(Integer::intValue).max().orElse(0);
    assertTrue(mostPairs <= adds / maxHeld + 1, "a key was written " + mostPairs + " times");
  }

  /** Keys grouped by their encoding (byte[] keys, whose equals is identity) merge by content. */
  @Test
  void byteArrayKeysAreGroupedByContent() throws Exception {
    Map<String, Long> sums = new HashMap<>();
    long[] pairs = {0};
    PairWriter summing = (k, v) -> {
      pairs[0]++;
      sums.merge(Arrays.toString(Serdes.BYTES.decodeKey(k)), Serdes.LONG.decodeValue(v), Long::sum);
    };
    Reducer<byte[], Long, byte[], Long> sum = (key, values, out) -> {
      long total = 0;
      for (long v : values) {
        total += v;
      }
      out.emit(key, total);
    };
    CombiningBuffer<byte[], Long> buffer = new CombiningBuffer<>(sum, Serdes.BYTES, Serdes.LONG, summing, 1_000_000);
    Map<String, Long> model = new HashMap<>();
    Random random = new Random(7);
    byte[] reused = new byte[3];
    for (int i = 0; i < 100_000; i++) {
      int k = random.nextInt(5000);
      reused[0] = (byte) k;
      reused[1] = (byte) (k >> 8);
      reused[2] = 'x';
      String name = Arrays.toString(reused);
      model.merge(name, (long) i, Long::sum);
      buffer.add(reused, (long) i); // the mapper's own array, reused for every pair
    }
    buffer.flush();
    assertEquals(model, sums);
    assertEquals(model.size(), pairs[0], "one pair per distinct key: equal contents are one group");
  }

  /** Concatenates in the order given: associative, not commutative, so any reordering shows. */
  static final class Concat implements Reducer<String, String, String, String> {
    @Override
    public void reduce(String key, Iterable<String> values, Emitter<String, String> emitter) {
      StringBuilder b = new StringBuilder();
      for (String v : values) {
        b.append(v);
      }
      emitter.emit(key, b.toString());
    }
  }

  /**
   * Values are combined in the order they were emitted, whether a mapper emits one constant
   * object many times in a row (held as a run) or equal but distinct objects: each key's
   * output is the concatenation of its values in emission order, as a model computes it.
   */
  @Test
  void valuesReachTheCombinerInEmissionOrder() throws Exception {
    Map<String, StringBuilder> model = new HashMap<>();
    Map<String, StringBuilder> out = new HashMap<>();
    PairWriter concatenating = (k, v) ->
        out.computeIfAbsent(Serdes.STRING.decodeKey(k), x -> new StringBuilder()).append(Serdes.STRING.decodeValue(v));
    CombiningBuffer<String, String> buffer = new CombiningBuffer<>(new Concat(), Serdes.STRING, Serdes.STRING,
        concatenating, 5_000);
    String constant = "a";
    Random random = new Random(3);
    String last = constant;
    for (int i = 0; i < 200_000; i++) {
      String key = "k" + random.nextInt(50);
      int pick = random.nextInt(10);
      String value = pick < 6 ? constant : pick < 8 ? new String(constant) : pick < 9 ? last : String.valueOf((char) ('b' + random.nextInt(3)));
      last = value;
      model.computeIfAbsent(key, x -> new StringBuilder()).append(value);
      buffer.add(new String(key), value);
    }
    buffer.flush();
    assertEquals(model.keySet(), out.keySet());
    for (String key : model.keySet()) {
      assertEquals(model.get(key).toString(), out.get(key).toString(), "values of " + key);
    }
  }
}
