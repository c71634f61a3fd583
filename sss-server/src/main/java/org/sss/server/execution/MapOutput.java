package org.sss.server.execution;

import org.sss.core.api.Emitter;
import org.sss.core.api.Reducer;
import org.sss.core.api.Serde;

/**
 * Where the map tasks of one runner emit: one shuffle writer and, when the stage has a
 * combiner, one combining buffer, shared by every task the runner runs in the stage.
 *
 * <h2>Why one per runner, not one per task</h2>
 * A node splits its data into several partitions (8 by default) and runs them on fewer
 * runners. A combiner per partition can merge only the values one partition emits; with few
 * input pairs per partition (the shuffle-intensive shape: one input pair per partition, each
 * emitting a handful of keys) it merges nothing. Sharing the buffer across the runner's tasks
 * lets it merge everything the node's thread emits, as Hadoop's combiner merges a whole split,
 * with the same memory bound. Output is flushed once, when the runner has no task left.
 *
 * <p>Not thread-safe: one runner uses it, one task at a time.
 */
final class MapOutput<KO, VO> implements TaskOutput<KO, VO> {
  private final ShuffleWriter writer;
  private final CombiningBuffer<KO, VO> combiner;
  private final Serde<KO> keySerde;
  private final Serde<VO> valueSerde;
  private final BatchedCount recordsOut;
  private final StageContext stage;
  private final Emitter<KO, VO> emitter;
  private int partition;

  /**
   * The runner's output, created by its first task ({@code partition}); sets up the combiner
   * with that task's context.
   */
  MapOutput(StageContext stage, int partition) {
    this.stage = stage;
    this.partition = partition;
    Reducer<KO, VO, KO, VO> combinerFn;
    try {
      keySerde = stage.serde(stage.spec.getOutputKeySerde());
      valueSerde = stage.serde(stage.spec.getOutputValueSerde());
      combinerFn = stage.combiner();
      if (combinerFn != null) {
        combinerFn.setup(stage.taskContext(partition)); // a combiner is a Reducer: it gets its setup too
      }
    } catch (Exception e) {
      throw new UserCodeException(stage.where("map", partition), e);
    }
    writer = new ShuffleWriter(stage.shuffle, stage.partitioner());
    recordsOut = new BatchedCount(stage.recordsOut);
    combiner = combinerFn == null ? null
        : new CombiningBuffer<>(combinerFn, keySerde, valueSerde, writer, MapTask.COMBINE_BUDGET);
    emitter = this::emit;
  }

  @Override
  public Emitter<KO, VO> emitter(int taskPartition) {
    this.partition = taskPartition;
    if (combiner == null) { // a combiner's output mixes every task's keys anyway
      try {
        writer.startStream();
      } catch (InterruptedException e) {
        Thread.currentThread().interrupt();
        throw new StageAborted();
      } catch (RuntimeException e) {
        if (stage.stopping()) {
          throw new StageAborted(); // the output was dropped under an aborted stage: not a failure of its own
        }
        throw e;
      }
    }
    return emitter;
  }

  private void emit(KO k, VO v) {
    // a mapper emitting in a loop stops within a batch of pairs (checked once a batch: two
    // volatile reads per emitted pair were a few percent of a combined map stage)
    if (recordsOut.increment() && stage.stopping()) {
      throw new StageAborted();
    }
    try {
      if (combiner != null) {
        combiner.add(k, v);
      } else {
        writer.write(keySerde.encodeKey(k), valueSerde.encodeValue(v));
      }
    } catch (RuntimeException e) {
      if (stage.stopping()) {
        throw new StageAborted(); // e.g. the output dropped under an aborted stage
      }
      throw e;
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
      throw new StageAborted();
    } catch (Exception e) {
      throw new RuntimeException(e);
    }
  }

  /** Publishes the task's output count (progress). */
  @Override
  public void taskDone() {
    recordsOut.flush();
  }

  /** Combines what is held and sends everything: the runner has no task left. */
  @Override
  public void finish() {
    boolean sent = false;
    try {
      if (combiner != null) {
        combiner.flush();
      }
      writer.finish();
      sent = true;
    } catch (StageAborted e) {
      throw e;
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
      throw new StageAborted();
    } catch (Throwable e) {
      throw new UserCodeException(stage.where("combine", partition), e);
    } finally {
      if (!sent) {
        writer.discard(); // the buffers and the files being built: a combiner that threw leaves them
      }
      recordsOut.flush();
    }
  }

  /** Drops what is held after a failure. */
  @Override
  public void discard() {
    recordsOut.flush();
    writer.discard();
  }
}
