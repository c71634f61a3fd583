package org.sss.bench.synthetic;

import java.util.Locale;

/**
 * One point of the synthetic benchmark: the paper's Table 1 parameters, all fixed.
 *
 * <p>The shape: {@code initialKeyCount} input pairs (keys {@code 0..initialKeyCount-1}, values of
 * {@code initialValueLength} bytes); each map call emits {@code mapoutKeyCount/initialKeyCount}
 * pairs of {@code mapoutValueLength} bytes. The g-th intermediate pair overall (map call i emits
 * g = i*m .. i*m+m-1) has key {@code g mod mapoutUniqueKeyCount}, so every unique key receives
 * exactly {@code mapoutKeyCount/mapoutUniqueKeyCount} values, and each map call spreads its pairs
 * evenly over the keys (the paper's "(mapoutKeyCount/initialKeyCount)/mapoutUniqueKeyCount pairs
 * per key" whenever that divides). When there are fewer intermediate pairs than input pairs (the
 * read-intensive shape: 256 pairs from up to 65536 inputs), every (initialKeyCount/mapoutKeyCount)-th
 * map call emits one pair. The reducer emits one value of {@code reduceoutValueLength} bytes per
 * key it receives.
 */
public record SyntheticParams(String workload, int nodes, int threadsPerNode, long initialKeyCount,
                              int initialValueLength, long mapoutKeyCount, int mapoutValueLength,
                              long mapoutUniqueKeyCount, int reduceoutValueLength,
                              PartitionMethod partitionMethod, boolean combinerEnabled, int combiningFactor) {

  /** Largest single value: SSS nodes refuse values over 32 MiB and frames over 64 MiB by default. */
  public static final int MAX_VALUE_LENGTH = 16 << 20;
  /** A combined intermediate value carries a marker, a count and a checksum. */
  public static final int MIN_COMBINED_VALUE_LENGTH = 17;

  /** Where intermediate keys go. */
  public enum PartitionMethod {
    /** By hash: keys spread evenly over the reducers (the only one Hadoop can do). */
    AVERAGE,
    /** Every key to a reducer on the node that emitted it: no network in the shuffle. */
    LOCAL,
    /** Every key to the next node: an all-to-all exchange where nothing stays local. */
    SHIFTED;

    public String label() {
      return name().toLowerCase(Locale.ROOT);
    }

    public static PartitionMethod parse(String s) {
      for (PartitionMethod m : values()) {
        if (m.label().equals(s.trim().toLowerCase(Locale.ROOT))) {
          return m;
        }
      }
      throw new IllegalArgumentException("partitionMethod must be average, local or shifted, got '" + s + "'");
    }
  }

  /** Intermediate pairs each map call emits (0 when there are fewer pairs than map calls). */
  public long pairsPerMapCall() {
    return mapoutKeyCount / initialKeyCount;
  }

  /** How many intermediate pairs map call {@code i} emits, for any of the two shapes. */
  public static long pairsOf(long i, long initialKeyCount, long mapoutKeyCount) {
    if (mapoutKeyCount >= initialKeyCount) {
      return mapoutKeyCount / initialKeyCount;
    }
    return i % (initialKeyCount / mapoutKeyCount) == 0 ? 1 : 0;
  }

  /** The index g of the first intermediate pair map call {@code i} emits. */
  public static long firstPairOf(long i, long initialKeyCount, long mapoutKeyCount) {
    if (mapoutKeyCount >= initialKeyCount) {
      return i * (mapoutKeyCount / initialKeyCount);
    }
    return i / (initialKeyCount / mapoutKeyCount);
  }

  /** Intermediate values each unique key receives in total. */
  public long valuesPerKey() {
    return mapoutKeyCount / mapoutUniqueKeyCount;
  }

  public long inputBytes() {
    return initialKeyCount * initialValueLength;
  }

  public long intermediateBytes() {
    return mapoutKeyCount * mapoutValueLength;
  }

  public long outputBytes() {
    return mapoutUniqueKeyCount * reduceoutValueLength;
  }

  /** Checks the parameters are consistent; the message names the offending ones. */
  public void validate() {
    positive("nodes", nodes);
    positive("threadsPerNode", threadsPerNode);
    positive("initialKeyCount", initialKeyCount);
    positive("initialValueLength", initialValueLength);
    positive("mapoutKeyCount", mapoutKeyCount);
    positive("mapoutValueLength", mapoutValueLength);
    positive("mapoutUniqueKeyCount", mapoutUniqueKeyCount);
    positive("reduceoutValueLength", reduceoutValueLength);
    if (mapoutKeyCount % initialKeyCount != 0 && initialKeyCount % mapoutKeyCount != 0) {
      throw new IllegalArgumentException("mapoutKeyCount (" + mapoutKeyCount + ") and initialKeyCount ("
          + initialKeyCount + ") do not divide: every map call must emit the same number of pairs (or every k-th one pair)");
    }
    if (mapoutKeyCount % mapoutUniqueKeyCount != 0) {
      throw new IllegalArgumentException("mapoutKeyCount (" + mapoutKeyCount + ") is not a multiple of mapoutUniqueKeyCount ("
          + mapoutUniqueKeyCount + "): every unique key must receive the same number of values");
    }
    maxLength("initialValueLength", initialValueLength);
    maxLength("mapoutValueLength", mapoutValueLength);
    maxLength("reduceoutValueLength", reduceoutValueLength);
    if (combinerEnabled) {
      if (combiningFactor < 2) {
        throw new IllegalArgumentException("combiningFactor must be at least 2 when combinerEnabled=true, got " + combiningFactor);
      }
      if (mapoutValueLength < MIN_COMBINED_VALUE_LENGTH) {
        throw new IllegalArgumentException("combinerEnabled=true needs mapoutValueLength >= " + MIN_COMBINED_VALUE_LENGTH
            + " (a combined value carries a count and a checksum), got " + mapoutValueLength);
      }
    }
    if (initialKeyCount > Integer.MAX_VALUE || mapoutUniqueKeyCount > (1 << 26)) {
      throw new IllegalArgumentException("initialKeyCount must be below 2^31 and mapoutUniqueKeyCount at most 2^26");
    }
  }

  private static void positive(String name, long v) {
    if (v < 1) {
      throw new IllegalArgumentException(name + " must be at least 1, got " + v);
    }
  }

  private static void maxLength(String name, int v) {
    if (v > MAX_VALUE_LENGTH) {
      throw new IllegalArgumentException(name + " (" + v + " bytes) exceeds the largest value the benchmark sends, "
          + Sizes.format(MAX_VALUE_LENGTH) + " (SSS nodes refuse values over 32 MiB): raise the key count or lower totalBytes");
    }
  }

  /** A one-line description. */
  public String describe() {
    return String.format("nodes=%d threads/node=%d input %d x %s, mapout %d x %s over %d keys, reduceout %s, %s%s",
        nodes, threadsPerNode, initialKeyCount, Sizes.format(initialValueLength), mapoutKeyCount,
        Sizes.format(mapoutValueLength), mapoutUniqueKeyCount, Sizes.format(reduceoutValueLength),
        partitionMethod.label(), combinerEnabled ? ", combiner factor " + combiningFactor : "");
  }
}
