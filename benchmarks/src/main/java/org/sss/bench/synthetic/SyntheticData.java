package org.sss.bench.synthetic;

import java.util.Arrays;
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
 * Mappers sum {@link #inputDigest}(key, CRC32C of its value) over every input pair they read;
 * reducers count the raw values they received (directly or inside combined ones) and sum their
 * checksums. Both sums go to job counters and must equal what {@link Expected} computes from the
 * parameters alone.
 *
 * <h2>Per-key proof</h2>
 * An output value may be one byte, too short to carry what its key received. So every reduce
 * call also folds {@link #groupDigest}(key, values, checksum sum) of the group it received into
 * the counter {@link #REDUCE_DIGEST} (a wrapping sum), and counts itself in {@link #REDUCE_KEYS}.
 * The digest is a non-linear 64-bit hash: a key missing a value, holding another key's value, or
 * reduced in two calls changes the sum (a split gives H(k,c1,s1) + H(k,c2,s2), not H(k,c1+c2,s1+s2)),
 * except with probability about 2^-64. The output itself is checked key by key ({@link Observed}).
 */
public final class SyntheticData {
  public static final byte RAW = 0;
  public static final byte COMBINED = 1;

  /** Counter names, the same on both engines. */
  public static final String INPUT_RECORDS = "input.records";
  public static final String INPUT_CRC = "input.crc";
  public static final String REDUCE_VALUES = "reduce.values";
  public static final String REDUCE_CRC = "reduce.crc";
  /** Reduce calls (groups), summed over all reducers. */
  public static final String REDUCE_KEYS = "reduce.keys";
  /** The wrapping sum of {@link #groupDigest} over all reduce calls. */
  public static final String REDUCE_DIGEST = "reduce.digest";
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
      return Arrays.copyOf(longest, length);
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

  /** SplitMix64's finalizer: every input bit affects every output bit. */
  static long mix(long z) {
    z = (z ^ (z >>> 30)) * 0xBF58476D1CE4E5B9L;
    z = (z ^ (z >>> 27)) * 0x94D049BB133111EBL;
    return z ^ (z >>> 31);
  }

  /**
   * The digest of one input pair as a map call reads it: its key and its value's CRC32C. Summed
   * over the map calls, it equals the reference's sum only if every key was read with its own
   * value: a sum of the values' checksums alone holds when values are handed to the wrong keys
   * (every value still read once), and the map output, which depends on the key only, would not
   * show it either.
   */
  public static long inputDigest(long key, long crc) {
    return mix(mix(key ^ 0x2545F4914F6CDD1DL) + crc);
  }

  /** The digest of one reduce call's group: its key, how many raw values it held, and their checksum sum. */
  public static long groupDigest(long key, long count, long crcSum) {
    return mix(mix(mix(key ^ 0x5DEECE66DL) ^ count) + crcSum);
  }

  /**
   * A hash of one value (its CRC32C and length); summed per key, it compares multisets of values
   * without keeping them.
   */
  public static long valueHash(byte[] value, int off, int len) {
    return mix(crc(value, off, len) ^ ((long) len << 32));
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
    private final Fault fault;
    /** Made at the first call: a task without input pairs never needs it. */
    private byte[] value;

    public MapLogic(long initialKeyCount, long mapoutKeyCount, long unique, int inputLength, int valueLength,
                    Fault fault) {
      this.initialKeyCount = initialKeyCount;
      this.mapoutKeyCount = mapoutKeyCount;
      this.unique = unique;
      this.inputLength = inputLength;
      this.valueLength = valueLength;
      this.fault = fault;
    }

    /**
     * Emits the map call's pairs; returns the input pair's {@link #inputDigest} (key and value
     * checksum). The value array is reused.
     */
    public long map(long key, byte[] in, int off, int len, PairSink out) throws Exception {
      if (len != inputLength) {
        throw new IllegalStateException("input key " + key + " has a value of " + len + " bytes, expected " + inputLength);
      }
      long crc = crc(in, off, len);
      if (fault == Fault.SWAPPED_INPUT && (key == 0 || key == 1) && initialKeyCount > 1) {
        byte[] other = Arrays.copyOfRange(in, off, off + len);
        fillInput(other, key ^ 1); // the other key's value: the same pattern, the other key in its header
        crc = crc(other, 0, len);
      }
      if (value == null) {
        value = pattern(valueLength);
      }
      long g = SyntheticParams.firstPairOf(key, initialKeyCount, mapoutKeyCount);
      long n = SyntheticParams.pairsOf(key, initialKeyCount, mapoutKeyCount);
      for (long j = 0; j < n; j++, g++) {
        if (j == 0 && key == Fault.KEY && fault == Fault.MISSING_VALUE) {
          continue;
        }
        fillRaw(value, g);
        out.emit(g % unique, value);
      }
      return inputDigest(key, crc);
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

  /**
   * The reducer, engine-neutral: one output value per group (the values of one reduce call),
   * carrying what the group received, and the totals that go to the job's counters (values,
   * their checksum sum, groups, and the sum of the groups' {@link #groupDigest}s). Call
   * {@link #start}, {@link #add} for every value, then {@link #finish}; the output array is reused.
   */
  public static final class ReduceLogic {
    /**
     * Where {@link Fault#SPLIT_GROUP} cuts key 0's group: a multiple of 256, so that a one-byte
     * output of the second part (the low byte of its count) equals the whole group's.
     */
    public static final int SPLIT_AT = 256;
    private final byte[] value;
    private final Fault fault;
    private final Aggregate acc = new Aggregate();
    private long key;
    private long added;
    /** Totals over every group finished so far. */
    public long values;
    public long crcSum;
    public long groups;
    public long digest;

    public ReduceLogic(int outputLength, Fault fault) {
      this.value = pattern(outputLength);
      this.fault = fault;
    }

    public void start(long key) {
      this.key = key;
      this.added = 0;
      acc.reset();
    }

    public void add(byte[] v, int off, int len, PairSink out) throws Exception {
      acc.add(v, off, len);
      if (++added == SPLIT_AT && key == Fault.KEY && fault == Fault.SPLIT_GROUP) {
        finish(out); // the values so far end as a group of their own; the rest make another
      }
    }

    /** Ends the group: emits its output and counts it. */
    public void finish(PairSink out) throws Exception {
      values += acc.count;
      crcSum += acc.crcSum;
      groups++;
      digest += groupDigest(key, acc.count, acc.crcSum);
      fillOutput(value, key, acc.count, acc.crcSum);
      acc.reset();
      out.emit(key, value);
    }
  }

  /** Where engine-neutral logic sends pairs. */
  @FunctionalInterface
  public interface PairSink {
    void emit(long key, byte[] value) throws Exception;
  }

}
