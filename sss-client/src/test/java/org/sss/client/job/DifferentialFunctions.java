package org.sss.client.job;

import java.nio.ByteBuffer;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import org.sss.core.api.Emitter;
import org.sss.core.api.Mapper;
import org.sss.core.api.Reducer;
import org.sss.core.api.TaskContext;

/**
 * The user functions of differential jobs. Each works on any built-in serde's type and is
 * configured per stage through the job's configuration ({@code s<stage>.<name>}); a function
 * learns its stage from its class ({@code Map0}..{@code Map3}, {@code Reduce0}..{@code Reduce3}),
 * since a task's context does not name the stage.
 *
 * <p>Every output depends only on the input pair (a mapper) or on the key and the multiset of
 * its values (a reducer), never on order, partition or node — so that the engine's result is
 * comparable with the in-memory reference's, which runs these same classes.
 */
public final class DifferentialFunctions {
  static final int MAX_STAGES = 4;
  /** In the message of every exception thrown on purpose. */
  static final String FAILURE_MARKER = "difftest: failing on purpose";

  /** How a function derives its output keys. */
  enum KeyMode {
    /** The input key, converted to the output type. */
    SAME,
    /** A hash of the input key into {@code keys} values, so that keys repeat. */
    HASH
  }

  /** How a mapper derives its output values. */
  enum ValueMode {
    /** A hash of the input value; strings and arrays are empty now and then. */
    DERIVED,
    /** The first output carries the input value (converted), big values included. */
    PASS,
    /** Small numbers or one-token multisets, which {@link #merge} combines. */
    TOKEN
  }

  /** What a reducer computes over a key's values. */
  enum Aggregate {
    COUNT,
    /** The wrapping sum of the values' fingerprints. */
    DIGEST,
    /** The smallest value by its encoding (unsigned bytes). */
    MIN,
    /** {@link #merge} of all values: needs {@link ValueMode#TOKEN} input. */
    MERGE
  }

  private DifferentialFunctions() {}

  @SuppressWarnings("rawtypes")
  static Class<? extends Mapper> mapper(int stage) {
    return List.of(Map0.class, Map1.class, Map2.class, Map3.class).get(stage);
  }

  @SuppressWarnings("rawtypes")
  static Class<? extends Reducer> reducer(int stage) {
    return List.of(Reduce0.class, Reduce1.class, Reduce2.class, Reduce3.class).get(stage);
  }

  static String key(int stage, String name) {
    return "s" + stage + "." + name;
  }

  /** Counter of a map stage: input pairs seen. */
  static String mappedCounter(int stage) {
    return key(stage, "mapped");
  }

  /** Counter of a reduce stage: keys reduced. */
  static String keysCounter(int stage) {
    return key(stage, "keys");
  }

  /** Counter of a reduce stage: values reduced. */
  static String valuesCounter(int stage) {
    return key(stage, "values");
  }

  /**
   * Combines two values of one type: numbers add up, strings and arrays are sorted multisets
   * of tokens (comma-separated, or 8 bytes each) that merge. Associative and commutative.
   */
  static Object merge(Object a, Object b) {
    if (a instanceof Long x) {
      return x + (Long) b;
    } else if (a instanceof Integer x) {
      return x + (Integer) b;
    } else if (a instanceof Double x) {
      return x + (Double) b;
    } else if (a instanceof String x) {
      List<String> tokens = new ArrayList<>(Arrays.asList(x.split(",")));
      tokens.addAll(Arrays.asList(((String) b).split(",")));
      tokens.sort(null);
      return String.join(",", tokens);
    }
    byte[] x = (byte[]) a;
    byte[] y = (byte[]) b;
    long[] tokens = new long[(x.length + y.length) / 8];
    ByteBuffer.wrap(x).asLongBuffer().get(tokens, 0, x.length / 8);
    ByteBuffer.wrap(y).asLongBuffer().get(tokens, x.length / 8, y.length / 8);
    Arrays.sort(tokens);
    ByteBuffer out = ByteBuffer.allocate(tokens.length * 8);
    out.asLongBuffer().put(tokens);
    return out.array();
  }

  static Object copy(Object value) {
    return value instanceof byte[] b ? b.clone() : value;
  }

  /** What every function of a stage reads from the job's configuration. */
  abstract static class StageFunction {
    final int stage;
    DiffType outKey;
    DiffType outValue;
    KeyMode keyMode;
    int keys;
    long salt;
    long sleepMillis;
    Long failOn;

    StageFunction(int stage) {
      this.stage = stage;
    }

    void configure(TaskContext context) {
      outKey = DiffType.valueOf(get(context, "outKey"));
      outValue = DiffType.valueOf(get(context, "outValue"));
      keyMode = KeyMode.valueOf(get(context, "keyMode"));
      keys = Integer.parseInt(get(context, "keys"));
      salt = Long.parseLong(get(context, "salt"));
      sleepMillis = Long.parseLong(context.get(key(stage, "sleepMillis"), "0"));
      String f = context.get(key(stage, "failOn"), "");
      failOn = f.isEmpty() ? null : Long.parseLong(f);
    }

    String get(TaskContext context, String name) {
      String v = context.config().get(key(stage, name));
      if (v == null) {
        throw new IllegalStateException("no " + key(stage, name) + " in the job's configuration");
      }
      return v;
    }

    /** Sleeps if asked to, and throws on the record whose key has the configured fingerprint. */
    void beforeRecord(Object key) throws InterruptedException {
      if (sleepMillis > 0) {
        Thread.sleep(sleepMillis);
      }
      if (failOn != null && DiffType.fingerprint(key) == failOn) {
        throw new IllegalStateException(FAILURE_MARKER + " in stage " + stage + " on key fingerprint " + failOn);
      }
    }

    Object derivedKey(Object inKey, long inKeyFingerprint, int output) {
      if (keyMode == KeyMode.SAME && output == 0) {
        return outKey.convert(inKey);
      }
      return outKey.make(Math.floorMod(DiffType.mix(inKeyFingerprint, output, salt), (long) keys));
    }
  }

  /**
   * Emits {@code minOut} (default 0) to {@code maxOut} pairs per input pair; with {@code inMapper}, merges token values
   * per key and emits them in {@code cleanup} instead.
   */
  public abstract static class StageMapper extends StageFunction implements Mapper<Object, Object, Object, Object> {
    private ValueMode valueMode;
    private int minOut;
    private int maxOut;
    private boolean inMapper;
    private TaskContext.Counter mapped;
    private final Map<ByteBuffer, Object[]> aggregates = new LinkedHashMap<>();

    StageMapper(int stage) {
      super(stage);
    }

    @Override
    public void setup(TaskContext context) {
      configure(context);
      valueMode = ValueMode.valueOf(get(context, "valueMode"));
      minOut = Integer.parseInt(context.get(key(stage, "minOut"), "0"));
      maxOut = Integer.parseInt(get(context, "maxOut"));
      inMapper = Boolean.parseBoolean(get(context, "inMapper"));
      mapped = context.counter(mappedCounter(stage));
    }

    @Override
    public void map(Object key, Object value, Emitter<Object, Object> out) throws Exception {
      mapped.increment();
      beforeRecord(key);
      long kf = DiffType.fingerprint(key);
      long vf = DiffType.fingerprint(value);
      int count = minOut + (int) Math.floorMod(DiffType.mix(kf, vf, salt), (long) maxOut - minOut + 1);
      for (int j = 0; j < count; j++) {
        Object k = derivedKey(key, kf, j);
        Object v = switch (valueMode) {
          case PASS -> j == 0 ? outValue.convert(value) : outValue.make(DiffType.mix(vf, j, salt));
          case DERIVED -> outValue.make(DiffType.mix(vf, j, salt));
          case TOKEN -> outValue.token(Math.floorMod(DiffType.mix(vf, j, salt), 2001L) - 1000);
        };
        if (inMapper) {
          aggregates.merge(ByteBuffer.wrap(outKey.serde.encodeKey(k)), new Object[] {k, v},
              (a, b) -> new Object[] {a[0], merge(a[1], b[1])});
        } else {
          out.emit(k, v);
        }
      }
    }

    @Override
    public void cleanup(Emitter<Object, Object> out) {
      for (Object[] kv : aggregates.values()) {
        out.emit(kv[0], kv[1]);
      }
    }
  }

  /**
   * Computes an {@link Aggregate} per key and emits it under a derived key, plus up to
   * {@code maxOuts - 1} further pairs under other derived keys; drops about one key in eleven.
   */
  public abstract static class StageReducer extends StageFunction implements Reducer<Object, Object, Object, Object> {
    private Aggregate aggregate;
    private int maxOuts;
    private TaskContext.Counter keysSeen;
    private TaskContext.Counter valuesSeen;

    StageReducer(int stage) {
      super(stage);
    }

    @Override
    public void setup(TaskContext context) {
      configure(context);
      aggregate = Aggregate.valueOf(get(context, "aggregate"));
      maxOuts = Integer.parseInt(get(context, "maxOuts"));
      keysSeen = context.counter(keysCounter(stage));
      valuesSeen = context.counter(valuesCounter(stage));
    }

    @Override
    public void reduce(Object key, Iterable<Object> values, Emitter<Object, Object> out) throws Exception {
      keysSeen.increment();
      beforeRecord(key);
      long n = 0;
      long digest = 0;
      Object kept = null;
      byte[] keptEncoding = null;
      for (Object v : values) {
        n++;
        switch (aggregate) {
          case DIGEST -> digest += DiffType.fingerprint(v);
          case MIN -> {
            byte[] e = DiffType.of(v).serde.encodeValue(v);
            if (keptEncoding == null || Arrays.compareUnsigned(e, keptEncoding) < 0) {
              kept = copy(v);
              keptEncoding = e.clone();
            }
          }
          case MERGE -> kept = kept == null ? copy(v) : merge(kept, v);
          case COUNT -> { }
        }
      }
      valuesSeen.increment(n);
      Object result = switch (aggregate) {
        case COUNT -> n;
        case DIGEST -> digest;
        case MIN, MERGE -> kept;
      };
      long kf = DiffType.fingerprint(key);
      long r = DiffType.mix(kf, salt);
      if (Math.floorMod(r, 11L) == 0) {
        return;
      }
      int outs = 1 + (int) Math.floorMod(r >>> 8, (long) maxOuts);
      long rf = DiffType.fingerprint(result);
      for (int j = 0; j < outs; j++) {
        out.emit(derivedKey(key, kf, j), j == 0 ? outValue.convert(result) : outValue.make(DiffType.mix(rf, j)));
      }
    }
  }

  /** A combiner for {@link ValueMode#TOKEN} values: {@link #merge} of a key's values, same key. */
  public static final class MergeCombiner implements Reducer<Object, Object, Object, Object> {
    @Override
    public void reduce(Object key, Iterable<Object> values, Emitter<Object, Object> out) {
      Object merged = null;
      for (Object v : values) {
        merged = merged == null ? copy(v) : merge(merged, v);
      }
      if (merged != null) {
        out.emit(key, merged);
      }
    }
  }

  public static final class Map0 extends StageMapper {
    public Map0() {
      super(0);
    }
  }

  public static final class Map1 extends StageMapper {
    public Map1() {
      super(1);
    }
  }

  public static final class Map2 extends StageMapper {
    public Map2() {
      super(2);
    }
  }

  public static final class Map3 extends StageMapper {
    public Map3() {
      super(3);
    }
  }

  public static final class Reduce0 extends StageReducer {
    public Reduce0() {
      super(0);
    }
  }

  public static final class Reduce1 extends StageReducer {
    public Reduce1() {
      super(1);
    }
  }

  public static final class Reduce2 extends StageReducer {
    public Reduce2() {
      super(2);
    }
  }

  public static final class Reduce3 extends StageReducer {
    public Reduce3() {
      super(3);
    }
  }
}
