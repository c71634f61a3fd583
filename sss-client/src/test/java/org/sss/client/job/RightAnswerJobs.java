package org.sss.client.job;

import org.sss.core.api.Emitter;
import org.sss.core.api.Mapper;
import org.sss.core.api.TaskContext;

/** User functions of {@link RightAnswersTest}: public, with no-argument constructors. */
public final class RightAnswerJobs {
  private RightAnswerJobs() {}

  /**
   * On node 0, throws after a short while; elsewhere maps slowly, emitting ten pairs per row
   * under keys of its own (1000 + row): the stragglers of a failing job.
   */
  public static final class FailsOnNodeZeroSlowElsewhere implements Mapper<Long, String, Long, Long> {
    private int node;

    @Override
    public void setup(TaskContext context) {
      node = context.nodeId();
    }

    @Override
    public void map(Long key, String value, Emitter<Long, Long> out) throws InterruptedException {
      if (node == 0) {
        Thread.sleep(300);
        throw new IllegalStateException("node 0 fails on purpose");
      }
      Thread.sleep(3);
      for (int i = 0; i < 10; i++) {
        out.emit(1000 + key * 10 + i, 1L);
      }
    }
  }

  /** Throws on every row: a job that fails at once. */
  public static final class AlwaysFails implements Mapper<Long, String, Long, Long> {
    @Override
    public void map(Long key, String value, Emitter<Long, Long> out) {
      throw new IllegalStateException("fails on purpose");
    }
  }

  /** Emits every row under the one key "x". */
  public static final class AllUnderX implements Mapper<Long, String, String, Long> {
    @Override
    public void map(Long key, String value, Emitter<String, Long> out) {
      out.emit("x", key);
    }
  }

  /** (k, v) -> (k, v) over string keys and long values. */
  public static final class IdentityStringLong implements Mapper<String, Long, String, Long> {
    @Override
    public void map(String key, Long value, Emitter<String, Long> out) {
      out.emit(key, value);
    }
  }

  /** (n, v) -> (n / 4 as a double, n). */
  public static final class DoubleKeys implements Mapper<Long, String, Double, Long> {
    @Override
    public void map(Long key, String value, Emitter<Double, Long> out) {
      out.emit(key / 4.0, key);
    }
  }

  /** Emits one pair whose value is {@code value.bytes} long, per row, under the row's key. */
  public static final class HugeValue implements Mapper<Long, String, Long, byte[]> {
    private int bytes;

    @Override
    public void setup(TaskContext context) {
      bytes = Integer.parseInt(context.get("value.bytes", "1"));
    }

    @Override
    public void map(Long key, String value, Emitter<Long, byte[]> out) {
      out.emit(key, new byte[bytes]);
    }
  }
}
