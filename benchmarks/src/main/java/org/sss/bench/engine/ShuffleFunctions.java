package org.sss.bench.engine;

import java.util.SplittableRandom;
import org.sss.core.api.Emitter;
import org.sss.core.api.Mapper;
import org.sss.core.api.Reducer;
import org.sss.core.api.TaskContext;

/** The user functions of the shuffle benchmark: pure data movement, verified by counters. */
public final class ShuffleFunctions {
  private ShuffleFunctions() {}

  /** The value every emit sends: {@code value.bytes} bytes of letters. */
  static byte[] value(TaskContext context) {
    byte[] value = new byte[Integer.parseInt(context.get("value.bytes", "100"))];
    for (int i = 0; i < value.length; i++) {
      value[i] = (byte) ('a' + i % 26);
    }
    return value;
  }

  /**
   * Emits {@code pairs.per.row} pairs per input row: random long keys (so every node sends to
   * every node) and values of {@code value.bytes} bytes.
   */
  public static final class Spray implements Mapper<Long, byte[], Long, byte[]> {
    private long perRow;
    private byte[] value;

    @Override
    public void setup(TaskContext context) {
      perRow = Long.parseLong(context.get("pairs.per.row", "1000"));
      value = value(context);
    }

    @Override
    public void map(Long row, byte[] ignored, Emitter<Long, byte[]> out) {
      SplittableRandom random = new SplittableRandom(row);
      for (long i = 0; i < perRow; i++) {
        out.emit(random.nextLong(), value);
      }
    }
  }

  /**
   * Emits {@code values.per.row} values of {@code value.bytes} bytes per input row, all under
   * key 0: one hot key whose values a single reduce call must stream.
   */
  public static final class OneKey implements Mapper<Long, byte[], Long, byte[]> {
    private long perRow;
    private byte[] value;

    @Override
    public void setup(TaskContext context) {
      perRow = Long.parseLong(context.get("values.per.row", "1"));
      value = value(context);
    }

    @Override
    public void map(Long row, byte[] ignored, Emitter<Long, byte[]> out) {
      for (long i = 0; i < perRow; i++) {
        out.emit(0L, value);
      }
    }
  }

  /** Counts values and their bytes into counters; emits nothing, so the reduce is a pure read. */
  public static final class CountOnly implements Reducer<Long, byte[], Long, byte[]> {
    private TaskContext.Counter values;
    private TaskContext.Counter bytes;

    @Override
    public void setup(TaskContext context) {
      values = context.counter("values");
      bytes = context.counter("value.bytes");
    }

    @Override
    public void reduce(Long key, Iterable<byte[]> in, Emitter<Long, byte[]> out) {
      long n = 0;
      long b = 0;
      for (byte[] v : in) {
        n++;
        b += v.length;
      }
      values.increment(n);
      bytes.increment(b);
    }
  }

  /** Does nothing: for the empty job. */
  public static final class Nothing implements Mapper<Long, byte[], Long, byte[]> {
    @Override
    public void map(Long key, byte[] value, Emitter<Long, byte[]> out) {}
  }

  /** Does nothing: for the empty job. */
  public static final class NothingReduced implements Reducer<Long, byte[], Long, byte[]> {
    @Override
    public void reduce(Long key, Iterable<byte[]> values, Emitter<Long, byte[]> out) {}
  }
}
