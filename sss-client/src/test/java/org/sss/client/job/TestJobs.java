package org.sss.client.job;

import org.sss.core.api.Emitter;
import org.sss.core.api.Mapper;
import org.sss.core.api.Reducer;
import org.sss.core.api.TaskContext;

/** Small user functions for engine tests; public with no-arg constructors, as servers need. */
public final class TestJobs {
  private TestJobs() {}

  /** (n, v) -> (n mod 10, 1). */
  public static final class ModTen implements Mapper<Long, String, Long, Long> {
    @Override
    public void map(Long key, String value, Emitter<Long, Long> out) {
      out.emit(key % 10, 1L);
    }
  }

  /** Sums longs. */
  public static final class SumLongs implements Reducer<Long, Long, Long, Long> {
    @Override
    public void reduce(Long key, Iterable<Long> values, Emitter<Long, Long> out) {
      long s = 0;
      for (long v : values) {
        s += v;
      }
      out.emit(key, s);
    }
  }

  /** Counts values per key into a user counter too. */
  public static final class CountingSum implements Reducer<Long, Long, Long, Long> {
    private TaskContext.Counter keys;

    @Override
    public void setup(TaskContext context) {
      keys = context.counter("keys");
    }

    @Override
    public void reduce(Long key, Iterable<Long> values, Emitter<Long, Long> out) {
      long s = 0;
      for (long v : values) {
        s += v;
      }
      keys.increment();
      out.emit(key, s);
    }
  }

  /** Throws on the record whose key is 4242. */
  public static final class FailsOnRecord implements Mapper<Long, String, Long, Long> {
    @Override
    public void map(Long key, String value, Emitter<Long, Long> out) {
      if (key == 4242) {
        throw new IllegalStateException("bad record 4242");
      }
      out.emit(key % 10, 1L);
    }
  }

  /** Sums a key's values and emits the sum under key mod 3 (so that a following reduce has keys to group). */
  public static final class SumUnderKeyModThree implements Reducer<Long, Long, Long, Long> {
    @Override
    public void reduce(Long key, Iterable<Long> values, Emitter<Long, Long> out) {
      long s = 0;
      for (long v : values) {
        s += v;
      }
      out.emit(key % 3, s);
    }
  }

  /** Sums longs, but throws on key 7. */
  public static final class FailsOnKeySeven implements Reducer<Long, Long, Long, Long> {
    @Override
    public void reduce(Long key, Iterable<Long> values, Emitter<Long, Long> out) {
      if (key == 7) {
        throw new IllegalStateException("bad key 7");
      }
      long s = 0;
      for (long v : values) {
        s += v;
      }
      out.emit(key, s);
    }
  }

  /** (k, v) -> (k, v), but throws on key 7. */
  public static final class FailsOnKeySevenMap implements Mapper<Long, Long, Long, Long> {
    @Override
    public void map(Long key, Long value, Emitter<Long, Long> out) {
      if (key == 7) {
        throw new IllegalStateException("bad key 7");
      }
      out.emit(key, value);
    }
  }

  /** Sleeps a little per record, to keep a job running. */
  public static final class Slow implements Mapper<Long, String, Long, Long> {
    @Override
    public void map(Long key, String value, Emitter<Long, Long> out) throws InterruptedException {
      Thread.sleep(2);
      out.emit(key % 10, 1L);
    }
  }

  /** A combiner that breaks the contract by changing keys. */
  public static final class KeyChangingCombiner implements Reducer<Long, Long, Long, Long> {
    @Override
    public void reduce(Long key, Iterable<Long> values, Emitter<Long, Long> out) {
      long s = 0;
      for (long v : values) {
        s += v;
      }
      out.emit(key + 1000, s);
    }
  }

  /** (k, v) -> (k, v): identity map over long pairs. */
  public static final class IdentityLongs implements Mapper<Long, Long, Long, Long> {
    @Override
    public void map(Long key, Long value, Emitter<Long, Long> out) {
      out.emit(key, value);
    }
  }

  /** (k, v) -> (v mod 3, k): re-keys a count table. */
  public static final class ValueModThree implements Mapper<Long, Long, Long, Long> {
    @Override
    public void map(Long key, Long value, Emitter<Long, Long> out) {
      out.emit(value % 3, key);
    }
  }

  /** Emits {@code hot.values.per.row} pairs ("hot", 1) per input row: one key with a huge value list. */
  public static final class HotKey implements Mapper<Long, String, String, Long> {
    private long perRow;

    @Override
    public void setup(TaskContext context) {
      perRow = Long.parseLong(context.get("hot.values.per.row", "1000"));
    }

    @Override
    public void map(Long key, String value, Emitter<String, Long> out) {
      for (long i = 0; i < perRow; i++) {
        out.emit("hot", 1L);
      }
    }
  }

  /** Counts values per key without holding them. */
  public static final class CountValues implements Reducer<String, Long, String, Long> {
    @Override
    public void reduce(String key, Iterable<Long> values, Emitter<String, Long> out) {
      long n = 0;
      for (Long ignored : values) {
        n++;
      }
      out.emit(key, n);
    }
  }

  /** (n, v) -> (one of three byte-array keys, 1); a fresh array per emit. */
  public static final class ThreeByteKeys implements Mapper<Long, String, byte[], Long> {
    @Override
    public void map(Long key, String value, Emitter<byte[], Long> out) {
      out.emit(new byte[] {(byte) (key % 3), 7}, 1L);
    }
  }

  /** Sums longs under byte-array keys. */
  public static final class SumByBytes implements Reducer<byte[], Long, byte[], Long> {
    @Override
    public void reduce(byte[] key, Iterable<Long> values, Emitter<byte[], Long> out) {
      long s = 0;
      for (long v : values) {
        s += v;
      }
      out.emit(key.clone(), s);
    }
  }
}
