package org.sss.bench.synthetic;

import java.util.Locale;

/**
 * A wrong answer the synthetic job can be made to produce on purpose, so that tests can show the
 * verification catches it. Only tests switch a fault on: the runners put its label into the job
 * configuration under {@link #CONFIG}, where the user code (mapper, reducer) reads it; a
 * misplacing partitioner is set by the runner itself. Every fault hits key {@link #KEY}, which
 * every shape has.
 */
public enum Fault {
  /** The correct job. */
  NONE,
  /** The map call of input key 0 drops its first pair: key 0 receives one value less. */
  MISSING_VALUE,
  /**
   * Key 0's group is reduced as two groups: the first {@link SyntheticData.ReduceLogic#SPLIT_AT}
   * values, then the rest, each with an output of its own (a shuffle that hands one key to two
   * reduce calls). The values and their checksums all still arrive, once each.
   */
  SPLIT_GROUP,
  /** Key 0's output is written into a partition (or Hadoop part file) its hash does not name. */
  WRONG_PARTITION,
  /**
   * The map calls of input keys 0 and 1 each read the other's value, as a reader that pairs keys
   * with the wrong values would hand them over: every value is still read once, so the sum of the
   * values' checksums holds, and the map output (which depends on the key only) is the right one.
   */
  SWAPPED_INPUT;

  /** The job configuration key that carries the fault to the tasks. */
  public static final String CONFIG = "synthetic.inject";
  /** The key every fault hits. */
  public static final long KEY = 0;

  public String label() {
    return name().toLowerCase(Locale.ROOT).replace('_', '-');
  }

  /** The fault a label names; empty or absent means {@link #NONE}. */
  public static Fault parse(String label) {
    if (label == null || label.isBlank()) {
      return NONE;
    }
    for (Fault f : values()) {
      if (f.label().equals(label.trim())) {
        return f;
      }
    }
    throw new IllegalArgumentException(CONFIG + " must be one of missing-value, split-group, wrong-partition, "
        + "swapped-input; got '" + label + "'");
  }
}
