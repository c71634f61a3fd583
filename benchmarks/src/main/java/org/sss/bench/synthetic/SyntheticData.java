package org.sss.bench.synthetic;

import java.util.function.LongUnaryOperator;
import java.util.zip.CRC32C;

/**
 * The benchmark's data, identical for every engine, and the checks that prove a run did all its
 * work.
 *
 * <h2>Values</h2>
 * Every value is a fixed byte pattern with a small header, so generating it costs a copy:
 * <ul>
 *   <li>input value of key i: the pattern with i (little-endian) in its first 8 bytes;
 *   <li>raw intermediate value number g: byte 0 = {@link #RAW}, then g in the next 8 bytes;
 *   <li>combined intermediate value: byte 0 = {@link #COMBINED}, then the number of raw values it
 *       stands for and the sum of their CRC32C checksums (8 bytes each), then the pattern — the
 *       same length as a raw value, so the combiner shrinks the data by the number of values it
 *       merges;
 *   <li>output value of a key: the pattern with (values received, sum of their checksums, key),
 *       little-endian, in its first 24 bytes (truncated when shorter).
 * </ul>
 *
 * <h2>Proof of work</h2>
 * Mappers sum the CRC32C of every input value they read; reducers count the raw values they
 * received (directly or inside combined ones) and sum their checksums. Both sums go to job
 * counters and must equal what {@link Expected} computes from the parameters alone; the output
 * must hold exactly the expected pairs (count, value lengths, and a digest of every pair).
 */
public final class SyntheticData {
  public static final byte RAW = 0;
  public static final byte COMBINED = 1;

  /** Counter names, the same on both engines. */
  public static final String INPUT_RECORDS = "input.records";
  public static final String INPUT_CRC = "input.crc";
  public static final String REDUCE_VALUES = "reduce.values";
  public static final String REDUCE_CRC = "reduce.crc";
  public static final String REDUCE_KEYS = "reduce.keys";
  public static final String COMBINE_IN = "combine.in";
  public static final String COMBINE_OUT = "combine.out";

  private SyntheticData() {}

  /** The longest pattern made so far; a shorter one is its prefix. */
  private static volatile byte[] longestPattern = new byte[0];

  /**
   * The pattern every value starts from (byte i depends on i only). Copied from the longest
   * one made so far when it is long enough: tasks set up their buffers from it, and making a
   * 16 MiB pattern byte by byte in every task would cost more than the task's own work.
   */
  public static byte[] pattern(int length) {
    byte[] longest = longestPattern;
    if (longest.length >= length) {
      return java.util.Arrays.copyOf(longest, length);
    }
    byte[] b = new byte[length];
    for (int i = 0; i < length; i++) {
      b[i] = (byte) (i * 131 + 7 + (i >>> 11));
    }
    longestPattern = b.clone();
    return b;
  }

  static void putLongLE(byte[] b, int at, long v) {
    for (int i = 0; i < 8 && at + i < b.length; i++) {
      b[at + i] = (byte) (v >>> (8 * i));
    }
  }

  static long getLongLE(byte[] b, int at) {
    long v = 0;
    for (int i = 7; i >= 0; i--) {
      v = (v << 8) | (b[at + i] & 0xFF);
    }
    return v;
  }

  /** Turns a pattern buffer into input value i (only the header changes). */
  public static void fillInput(byte[] buf, long key) {
    putLongLE(buf, 0, key);
  }

  /** Turns a pattern buffer into raw intermediate value g. */
  public static void fillRaw(byte[] buf, long g) {
    buf[0] = RAW;
    putLongLE(buf, 1, g);
  }

  /** Turns a pattern buffer into a combined value. */
  public static void fillCombined(byte[] buf, long count, long crcSum) {
    buf[0] = COMBINED;
    putLongLE(buf, 1, count);
    putLongLE(buf, 9, crcSum);
  }

  /** Turns a pattern buffer into the output value of a key. */
  public static void fillOutput(byte[] buf, long key, long count, long crcSum) {
    putLongLE(buf, 0, count);
    putLongLE(buf, 8, crcSum);
    putLongLE(buf, 16, key);
  }

  public static long crc(byte[] b, int off, int len) {
    CRC32C c = new CRC32C();
    c.update(b, off, len);
    return c.getValue();
  }

  /** A digest of one output pair; digests are summed, so order does not matter. */
  public static long pairDigest(long key, byte[] value, int off, int len) {
    CRC32C c = new CRC32C();
    c.update(value, off, len);
    return c.getValue() * 0x9E3779B97F4A7C15L + key * 0xC2B2AE3D27D4EB4FL + len;
  }

  /** What a reducer (or combiner) accumulates for one key. */
  public static final class Aggregate {
    public long count;
    public long crcSum;

    /** Adds one intermediate value, raw or combined. */
    public void add(byte[] v, int off, int len) {
      if (len >= SyntheticParams.MIN_COMBINED_VALUE_LENGTH && v[off] == COMBINED) {
        count += getLongLE(v, off + 1);
        crcSum += getLongLE(v, off + 9);
      } else {
        count++;
        crcSum += crc(v, off, len);
      }
    }

    public void reset() {
      count = 0;
      crcSum = 0;
    }
  }

  /** The map function, engine-neutral: emits the pairs of one map call. */
  public static final class MapLogic {
    private final long initialKeyCount;
    private final long mapoutKeyCount;
    private final long unique;
    private final int inputLength;
    private final int valueLength;
    /** Made at the first call: a task without input pairs never needs it. */
    private byte[] value;

    public MapLogic(SyntheticParams p) {
      this(p.initialKeyCount(), p.mapoutKeyCount(), p.mapoutUniqueKeyCount(), p.initialValueLength(),
          p.mapoutValueLength());
    }

    public MapLogic(long initialKeyCount, long mapoutKeyCount, long unique, int inputLength, int valueLength) {
      this.initialKeyCount = initialKeyCount;
      this.mapoutKeyCount = mapoutKeyCount;
      this.unique = unique;
      this.inputLength = inputLength;
      this.valueLength = valueLength;
    }

    /** Emits the map call's pairs; returns the input value's checksum. The value array is reused. */
    public long map(long key, byte[] in, int off, int len, PairSink out) throws Exception {
      if (len != inputLength) {
        throw new IllegalStateException("input key " + key + " has a value of " + len + " bytes, expected " + inputLength);
      }
      long crc = crc(in, off, len);
      if (value == null) {
        value = pattern(valueLength);
      }
      long g = SyntheticParams.firstPairOf(key, initialKeyCount, mapoutKeyCount);
      long n = SyntheticParams.pairsOf(key, initialKeyCount, mapoutKeyCount);
      for (long j = 0; j < n; j++, g++) {
        fillRaw(value, g);
        out.emit(g % unique, value);
      }
      return crc;
    }
  }

  /**
   * The combiner, engine-neutral: merges a key's values in runs of {@code combiningFactor}, each
   * run into one combined value of the intermediate length, so a sorted run of n values shrinks to
   * ceil(n / combiningFactor). Engines may apply it several times, to values already combined.
   */
  public static final class CombineLogic {
    private final int factor;
    private final byte[] value;
    private final Aggregate acc = new Aggregate();

    public CombineLogic(int factor, int valueLength) {
      this.factor = factor;
      this.value = pattern(valueLength);
    }

    /** Feeds one value; emits a combined value when a run is complete. Returns values emitted. */
    public int add(long key, byte[] v, int off, int len, int inRun, PairSink out) throws Exception {
      acc.add(v, off, len);
      if (inRun + 1 == factor) {
        return flush(key, out);
      }
      return 0;
    }

    public int flush(long key, PairSink out) throws Exception {
      if (acc.count == 0 && acc.crcSum == 0) {
        return 0;
      }
      fillCombined(value, acc.count, acc.crcSum);
      acc.reset();
      out.emit(key, value);
      return 1;
    }

    public int factor() {
      return factor;
    }
  }

  /** The reducer's output value for a key, engine-neutral (the array is reused). */
  public static final class ReduceLogic {
    private final byte[] value;

    public ReduceLogic(int outputLength) {
      this.value = pattern(outputLength);
    }

    public byte[] output(long key, Aggregate a) {
      fillOutput(value, key, a.count, a.crcSum);
      return value;
    }
  }

  /** Where engine-neutral logic sends pairs. */
  @FunctionalInterface
  public interface PairSink {
    void emit(long key, byte[] value) throws Exception;
  }

  /** Everything a correct run must produce, computed from the parameters alone. */
  public record Expected(long inputRecords, long inputCrc, long values, long valueCrc, long outputPairs,
                         long outputDigest) {

    /**
     * @param sourceNode the node that stores input key i (for local and shifted placement,
     *                   where each node reduces its own part of a key); null for average
     * @param nodes      node count (used with sourceNode)
     */
    public static Expected compute(SyntheticParams p, LongUnaryOperator sourceNode, int nodes) {
      byte[] in = pattern(p.initialValueLength());
      long inputCrc = 0;
      for (long i = 0; i < p.initialKeyCount(); i++) {
        fillInput(in, i);
        inputCrc += crc(in, 0, in.length);
      }
      int groups = sourceNode == null ? 1 : nodes;
      int u = Math.toIntExact(p.mapoutUniqueKeyCount());
      long[][] count = new long[groups][u];
      long[][] sum = new long[groups][u];
      byte[] v = pattern(p.mapoutValueLength());
      long valueCrc = 0;
      for (long i = 0; i < p.initialKeyCount(); i++) {
        long m = SyntheticParams.pairsOf(i, p.initialKeyCount(), p.mapoutKeyCount());
        if (m == 0) {
          continue;
        }
        int grp = sourceNode == null ? 0 : (int) sourceNode.applyAsLong(i);
        long g = SyntheticParams.firstPairOf(i, p.initialKeyCount(), p.mapoutKeyCount());
        for (long j = 0; j < m; j++, g++) {
          fillRaw(v, g);
          long c = crc(v, 0, v.length);
          int k = (int) (g % u);
          count[grp][k]++;
          sum[grp][k] += c;
          valueCrc += c;
        }
      }
      byte[] out = pattern(p.reduceoutValueLength());
      long pairs = 0;
      long digest = 0;
      for (int grp = 0; grp < groups; grp++) {
        for (int k = 0; k < u; k++) {
          if (count[grp][k] > 0) {
            fillOutput(out, k, count[grp][k], sum[grp][k]);
            digest += pairDigest(k, out, 0, out.length);
            pairs++;
          }
        }
      }
      return new Expected(p.initialKeyCount(), inputCrc, p.mapoutKeyCount(), valueCrc, pairs, digest);
    }
  }

  /** What a run produced, to compare with {@link Expected}. */
  public static final class Observed {
    public long inputRecords;
    public long inputCrc;
    public long values;
    public long valueCrc;
    public long outputPairs;
    public long outputDigest;
    public long badLengths;

    public void addOutput(long key, byte[] value, int off, int len, int expectedLength) {
      outputPairs++;
      if (len != expectedLength) {
        badLengths++;
      }
      outputDigest += pairDigest(key, value, off, len);
    }

    /** Empty when everything matches; otherwise what differs. */
    public String compare(Expected e) {
      StringBuilder sb = new StringBuilder();
      check(sb, "input records", e.inputRecords(), inputRecords);
      check(sb, "input checksum", e.inputCrc(), inputCrc);
      check(sb, "intermediate values reduced", e.values(), values);
      check(sb, "intermediate checksum", e.valueCrc(), valueCrc);
      check(sb, "output pairs", e.outputPairs(), outputPairs);
      check(sb, "output values of the wrong length", 0, badLengths);
      check(sb, "output digest", e.outputDigest(), outputDigest);
      return sb.toString();
    }

    private static void check(StringBuilder sb, String what, long expected, long actual) {
      if (expected != actual) {
        sb.append(sb.length() == 0 ? "" : "; ").append(what).append(": expected ").append(expected)
            .append(", got ").append(actual);
      }
    }
  }
}
