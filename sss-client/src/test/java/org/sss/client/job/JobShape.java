package org.sss.client.job;

import static org.sss.client.job.DifferentialFunctions.key;

import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Random;
import org.sss.client.job.DifferentialFunctions.Aggregate;
import org.sss.client.job.DifferentialFunctions.KeyMode;
import org.sss.client.job.DifferentialFunctions.ValueMode;

/**
 * A randomly generated job: its stages with their types, whether map stages combine, and how
 * each stage's function is configured; {@link #build} makes the {@link Job}, and
 * {@link ReferenceRunner} runs the same shape in memory.
 */
record JobShape(List<Stage> stages, Map<String, String> config, boolean multiValuedOutput,
                boolean keepIntermediate, boolean overwrite) {
  private static final DiffType[] TYPES = DiffType.values();
  private static final int[] KEY_SPACES = {1, 2, 3, 7, 20, 20, 50, 200, 1000};

  /** One stage: its index, kind, input and output types, and whether a combiner follows it. */
  record Stage(int index, boolean map, DiffType inKey, DiffType inValue, DiffType outKey, DiffType outValue,
               boolean combine) {}

  /** What a generated job may and must do. */
  record Constraints(int maxStages, boolean inputMultiValued, boolean multiValuedOutput, boolean bigValues) {}

  Stage last() {
    return stages.get(stages.size() - 1);
  }

  /**
   * A random shape over an input of the given types: 1 to {@code maxStages} map and reduce
   * stages in any order (a reduce first only over a multi-valued input).
   */
  static JobShape random(Random rng, DiffType inKey, DiffType inValue, Constraints c) {
    int n = 1 + rng.nextInt(c.maxStages());
    boolean[] map = new boolean[n];
    for (int i = 0; i < n; i++) {
      map[i] = i == 0 && !c.inputMultiValued() || rng.nextInt(100) < 55;
    }
    Map<String, String> config = new LinkedHashMap<>();
    List<Stage> stages = new ArrayList<>();
    DiffType k = inKey;
    DiffType v = inValue;
    boolean previousTokens = false;
    for (int i = 0; i < n; i++) {
      boolean carryBig = c.bigValues() && i == 0 && map[i] && rng.nextInt(10) < 7;
      DiffType outKey = rng.nextInt(3) == 0 ? k : pick(rng);
      DiffType outValue = carryBig ? (rng.nextBoolean() ? DiffType.STRING : DiffType.BYTES)
          : rng.nextInt(3) == 0 ? v : pick(rng);
      boolean combine = false;
      put(config, i, "outKey", outKey);
      put(config, i, "outValue", outValue);
      put(config, i, "keyMode", rng.nextInt(10) < 3 ? KeyMode.SAME : KeyMode.HASH);
      put(config, i, "keys", KEY_SPACES[rng.nextInt(KEY_SPACES.length)]);
      put(config, i, "salt", rng.nextLong());
      if (map[i]) {
        boolean beforeReduce = i + 1 < n && !map[i + 1];
        int roll = rng.nextInt(20);
        boolean tokens = beforeReduce && roll < 10 && !carryBig;
        combine = tokens && roll < 7;
        ValueMode mode = tokens ? ValueMode.TOKEN
            : carryBig || passes(v, outValue) && rng.nextBoolean() ? ValueMode.PASS : ValueMode.DERIVED;
        put(config, i, "valueMode", mode);
        put(config, i, "maxOut", 1 + rng.nextInt(3));
        put(config, i, "inMapper", tokens && rng.nextInt(3) == 0);
        previousTokens = tokens;
      } else {
        Aggregate[] plain = {Aggregate.COUNT, Aggregate.DIGEST, Aggregate.MIN};
        put(config, i, "aggregate", previousTokens ? Aggregate.MERGE : plain[rng.nextInt(plain.length)]);
        put(config, i, "maxOuts", 1 + rng.nextInt(3));
        previousTokens = false;
      }
      stages.add(new Stage(i, map[i], k, v, outKey, outValue, combine));
      k = outKey;
      v = outValue;
    }
    boolean mvOut = c.multiValuedOutput() || rng.nextBoolean();
    return new JobShape(List.copyOf(stages), config, mvOut, n > 1 && rng.nextInt(4) == 0, false);
  }

  /**
   * A map stage passing every pair on unchanged, then a reduce emitting each key's smallest
   * value under a hashed key of type {@code outKey}.
   */
  static JobShape carryThenMin(DiffType key, DiffType value, DiffType outKey, long salt) {
    Map<String, String> config = new LinkedHashMap<>();
    put(config, 0, "outKey", key);
    put(config, 0, "outValue", value);
    put(config, 0, "keyMode", KeyMode.SAME);
    put(config, 0, "keys", 1);
    put(config, 0, "salt", salt);
    put(config, 0, "valueMode", ValueMode.PASS);
    put(config, 0, "minOut", 1);
    put(config, 0, "maxOut", 1);
    put(config, 0, "inMapper", false);
    put(config, 1, "outKey", outKey);
    put(config, 1, "outValue", value);
    put(config, 1, "keyMode", KeyMode.HASH);
    put(config, 1, "keys", 1000);
    put(config, 1, "salt", salt);
    put(config, 1, "aggregate", Aggregate.MIN);
    put(config, 1, "maxOuts", 1);
    return new JobShape(List.of(new Stage(0, true, key, value, key, value, false),
        new Stage(1, false, key, value, outKey, value, false)), config, false, false, false);
  }

  private static boolean passes(DiffType from, DiffType to) {
    return from == to || !from.numeric() && !to.numeric();
  }

  private static DiffType pick(Random rng) {
    return TYPES[rng.nextInt(TYPES.length)];
  }

  private static void put(Map<String, String> config, int stage, String name, Object value) {
    config.put(key(stage, name), String.valueOf(value));
  }

  JobShape withOverwrite() {
    return new JobShape(stages, config, multiValuedOutput, keepIntermediate, true);
  }

  /** This shape with one more configuration entry of stage {@code stage}. */
  JobShape with(int stage, String name, Object value) {
    Map<String, String> c = new LinkedHashMap<>(config);
    put(c, stage, name, value);
    return new JobShape(stages, c, multiValuedOutput, keepIntermediate, overwrite);
  }

  /** This shape with stage {@code stage} sleeping per record and failing on one key. */
  JobShape failingAt(int stage, long keyFingerprint, long sleepMillis) {
    return with(stage, "failOn", keyFingerprint).with(stage, "sleepMillis", sleepMillis);
  }

  /** Whether a reduce stage sees every value its input holds (no combining before it). */
  boolean seesEveryValue(int reduceStage) {
    if (reduceStage == 0) {
      return true;
    }
    Stage before = stages.get(reduceStage - 1);
    return !before.combine() && !Boolean.parseBoolean(config.get(key(before.index(), "inMapper")));
  }

  /** Whether stage {@code i} emits {@link ValueMode#TOKEN} values, which may be combined. */
  boolean emitsTokens(int i) {
    return ValueMode.TOKEN.name().equals(config.get(key(i, "valueMode")));
  }

  Job build(String name, String input, String output) {
    Job.Builder b = Job.named(name).input(input, stages.get(0).inKey().serde, stages.get(0).inValue().serde);
    for (Stage s : stages) {
      if (s.map()) {
        b.map(DifferentialFunctions.mapper(s.index()), s.outKey().serde, s.outValue().serde);
      } else {
        b.reduce(DifferentialFunctions.reducer(s.index()), s.outKey().serde, s.outValue().serde);
      }
      if (s.combine()) {
        b.combine(DifferentialFunctions.MergeCombiner.class);
      }
    }
    b.output(output);
    if (multiValuedOutput) {
      b.multiValuedOutput();
    }
    if (keepIntermediate) {
      b.keepIntermediate();
    }
    if (overwrite) {
      b.overwrite();
    }
    config.forEach(b::config);
    return b.build();
  }

  @Override
  public String toString() {
    StringBuilder s = new StringBuilder("(" + stages.get(0).inKey() + "," + stages.get(0).inValue() + ")");
    for (Stage st : stages) {
      int i = st.index();
      s.append(" -> ").append(st.map() ? "map" : "reduce").append(i).append('[');
      if (st.map()) {
        s.append(config.get(key(i, "valueMode")));
        if (Boolean.parseBoolean(config.get(key(i, "inMapper")))) {
          s.append(" inMapper");
        }
        s.append(" out=").append(config.getOrDefault(key(i, "minOut"), "0")).append("..")
            .append(config.get(key(i, "maxOut")));
      } else {
        s.append(config.get(key(i, "aggregate"))).append(" outs<=").append(config.get(key(i, "maxOuts")));
      }
      s.append(" key=").append(config.get(key(i, "keyMode"))).append('/').append(config.get(key(i, "keys")));
      if (config.containsKey(key(i, "failOn"))) {
        s.append(" FAILS sleep=").append(config.get(key(i, "sleepMillis"))).append("ms");
      }
      s.append("](").append(st.outKey()).append(',').append(st.outValue()).append(')');
      if (st.combine()) {
        s.append("+combine");
      }
    }
    s.append(multiValuedOutput ? " multiValuedOutput" : " singleValuedOutput");
    if (keepIntermediate) {
      s.append(" keepIntermediate");
    }
    if (overwrite) {
      s.append(" overwrite");
    }
    return s.toString();
  }
}
