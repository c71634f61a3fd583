package org.sss.core.keys;

import java.util.Arrays;
import java.util.SplittableRandom;
import java.util.function.Consumer;
import java.util.function.LongConsumer;
import org.openjdk.jmh.annotations.Benchmark;
import org.openjdk.jmh.annotations.OperationsPerInvocation;
import org.openjdk.jmh.annotations.Setup;
import org.openjdk.jmh.infra.Blackhole;
import org.sss.bench.jmh.HotPathBenchmark;
import org.sss.bench.jmh.JmhData;
import org.sss.core.api.Serdes;

/**
 * Key encoding: a map stage encodes every pair it emits (the key order-preserving, the value
 * plain), and a reduce stage takes every stored key apart, compares it with the last one to find
 * its key's group, and decodes each group's key. One operation is one pair.
 */
public class KeyCodecBenchmark extends HotPathBenchmark {
  /** Distinct keys of the reduce side: each holds {@code PAIRS / GROUPS} values. */
  static final int GROUPS = 10_000;

  String[] keys;
  Long[] counts;
  /** Stored keys of a multi-valued table in scan order (sorted), {@code PAIRS / GROUPS} per key. */
  byte[][] sortedStored;
  byte[][] sortedValues;

  @Setup
  public void setup() {
    JmhData.Pairs pairs = JmhData.pairs(JmhData.PAIRS, JmhData.SEED);
    keys = pairs.keys;
    SplittableRandom random = new SplittableRandom(JmhData.SEED);
    counts = new Long[JmhData.PAIRS];
    for (int i = 0; i < counts.length; i++) {
      counts[i] = 1 + (long) random.nextInt(1_000_000); // boxed here: the emitter hands objects over
    }
    // the reduce side: GROUPS keys, each with its values, as one partition's scan returns them
    sortedStored = new byte[JmhData.PAIRS][];
    sortedValues = new byte[JmhData.PAIRS][];
    for (int i = 0; i < JmhData.PAIRS; i++) {
      byte[] encoded = pairs.encoded[i % GROUPS];
      byte[] prefixed = new byte[2 + encoded.length]; // partition 0, then the encoded key
      System.arraycopy(encoded, 0, prefixed, 2, encoded.length);
      sortedStored[i] = StoredKeys.withUniquifier(prefixed, JmhData.SOURCE, i);
    }
    Arrays.sort(sortedStored, Arrays::compareUnsigned);
    for (int i = 0; i < JmhData.PAIRS; i++) {
      sortedValues[i] = Serdes.LONG.encodeValue(counts[i]);
    }
  }

  /** Every pair a mapper emits (without a combiner) or a combiner writes pays this before the shuffle sends it. */
  @Benchmark
  @OperationsPerInvocation(JmhData.PAIRS)
  public void encodePairs(Blackhole bh) {
    String[] k = keys;
    Long[] c = counts;
    for (int i = 0; i < k.length; i++) {
      bh.consume(Serdes.STRING.encodeKey(k[i]));
      bh.consume(Serdes.LONG.encodeValue(c[i]));
    }
  }

  /** Every pair a reducer reads pays this: its key found in or out of the current group, each group's key decoded. */
  @Benchmark
  @OperationsPerInvocation(JmhData.PAIRS)
  public long decodeSortedPairs(Blackhole bh) {
    return decodeSorted(sortedStored, sortedValues, bh::consume, bh::consume);
  }

  /** Walks sorted stored keys group by group; returns the groups. */
  static long decodeSorted(byte[][] stored, byte[][] values,
                           Consumer<String> keysOut, LongConsumer valuesOut) {
    byte[] previous = null;
    long groups = 0;
    for (int i = 0; i < stored.length; i++) {
      byte[] key = StoredKeys.encodedKey(stored[i], true);
      if (previous == null || KeyCodec.compare(previous, key) != 0) {
        keysOut.accept(Serdes.STRING.decodeKey(key));
        previous = key;
        groups++;
      }
      valuesOut.accept(Serdes.LONG.decodeValue(values[i]));
    }
    return groups;
  }
}
