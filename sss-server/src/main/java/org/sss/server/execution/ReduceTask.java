package org.sss.server.execution;

import java.util.ArrayList;
import java.util.Arrays;
import java.util.Iterator;
import java.util.List;
import java.util.NoSuchElementException;
import org.sss.core.api.Emitter;
import org.sss.core.api.Reducer;
import org.sss.core.api.Serde;
import org.sss.core.cluster.PartitionMap;
import org.sss.core.keys.StoredKeys;
import org.sss.kvs.KeyRanges;
import org.sss.kvs.StoreCursor;

/**
 * Reduces one partition of a multi-valued table.
 *
 * <h2>Grouping</h2>
 * The partition's stored keys are {@code partition | key | uniquifier}; one forward scan visits
 * them sorted, so all values of a key are adjacent. The task walks the cursor once: for each
 * run of equal keys it calls {@code reduce} with an iterable that reads values straight from
 * the cursor and ends where the key changes. Nothing but the current pair is held, so a key
 * with tens of millions of values reduces in constant heap. Values the reducer does not read
 * are skipped.
 */
final class ReduceTask<K, VI, KO, VO> implements Runnable {
  private final StageContext stage;
  private final int partition;
  private final BatchedCount recordsIn;
  /** The runner's part files in a last stage that writes files; null when the output is shuffled. */
  private final TaskOutput<KO, VO> files;

  ReduceTask(StageContext stage, int partition, TaskOutput<KO, VO> files) {
    this.stage = stage;
    this.partition = partition;
    this.recordsIn = new BatchedCount(stage.recordsIn);
    this.files = files;
  }

  @Override
  @SuppressWarnings("unchecked")
  public void run() {
    var spec = stage.spec;
    Reducer<K, VI, KO, VO> reducer;
    Serde<K> inKey;
    Serde<VI> inValue;
    Serde<KO> outKey;
    Serde<VO> outValue;
    try {
      reducer = UserClasses.create(stage.loader, spec.getFunctionClass(), Reducer.class);
      inKey = stage.serde(spec.getInputKeySerde());
      inValue = stage.serde(spec.getInputValueSerde());
      outKey = stage.serde(spec.getOutputKeySerde());
      outValue = stage.serde(spec.getOutputValueSerde());
    } catch (RuntimeException e) {
      throw new UserCodeException(stage.where("reduce", partition), e);
    }
    if (files != null) {
      reduce(reducer, inKey, inValue, files.emitter(partition), () -> { }, () -> { }, files::taskDone);
      return;
    }
    ShuffleWriter writer = new ShuffleWriter(stage.shuffle, stage.partitioner());
    BatchedCount recordsOut = new BatchedCount(stage.recordsOut);
    Emitter<KO, VO> emitter = (k, v) -> {
      recordsOut.increment();
      try {
        writer.write(outKey.encodeKey(k), outValue.encodeValue(v));
      } catch (InterruptedException e) {
        Thread.currentThread().interrupt();
        throw new StageAborted();
      }
    };
    reduce(reducer, inKey, inValue, emitter, () -> {
      try {
        writer.finish();
      } catch (InterruptedException e) {
        Thread.currentThread().interrupt();
        throw new StageAborted();
      }
    }, writer::discard, recordsOut::flush);
  }

  /**
   * Reduces the partition into {@code emitter}; {@code finish} runs after the reducer's
   * cleanup, {@code discard} after a failure, {@code done} in every case.
   */
  private void reduce(Reducer<K, VI, KO, VO> reducer, Serde<K> inKey, Serde<VI> inValue, Emitter<KO, VO> emitter,
                      Runnable finish, Runnable discard, Runnable done) {
    boolean multiValued = stage.spec.getInputMultiValued();
    List<byte[][]> ranges = new ArrayList<>();
    ranges.add(KeyRanges.partition(partition, new byte[0]));
    boolean ok = false;
    try (StoreCursor cursor = stage.input.scanRanges(ranges, false)) {
      reducer.setup(stage.taskContext(partition));
      Group group = new Group(cursor, multiValued);
      while (group.start()) {
        if (stage.stopping()) { // two volatile reads a key: an abort stops the task at its next key
          throw new StageAborted();
        }
        K key = inKey.decodeKey(group.key);
        reducer.reduce(key, () -> new Iterator<VI>() {
          @Override
          public boolean hasNext() {
            if (stage.stopping()) {
              throw new StageAborted(); // a reducer looping over a hot key stops at its next value
            }
            return group.hasValue();
          }

          @Override
          public VI next() {
            if (!group.hasValue()) {
              throw new NoSuchElementException();
            }
            return inValue.decodeValue(group.takeValue());
          }
        }, emitter);
        group.skipRest();
      }
      reducer.cleanup(emitter);
      finish.run();
      ok = true;
    } catch (StageAborted | TextPartOutput.WriteFailed e) {
      throw e;
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
      throw new StageAborted();
    } catch (Throwable e) {
      if (stage.aborted.get()) {
        throw new StageAborted(); // user code that wrapped the abort's interrupt: not its own failure
      }
      throw new UserCodeException(stage.where("reduce", partition), e);
    } finally {
      recordsIn.flush();
      if (!ok) {
        discard.run();
      }
      try {
        done.run();
      } catch (RuntimeException e) {
        if (ok) {
          throw e;
        } // else the task's own failure is the one to report
      }
    }
  }

  /** Walks the cursor one key group at a time. */
  private final class Group {
    private final StoreCursor cursor;
    private final boolean multiValued;
    byte[] key;
    private byte[] currentStored;
    private boolean pending;

    Group(StoreCursor cursor, boolean multiValued) {
      this.cursor = cursor;
      this.multiValued = multiValued;
    }

    /** Moves to the next key; false at the end of the partition. */
    boolean start() {
      if (!cursor.valid()) {
        return false;
      }
      currentStored = cursor.key();
      key = StoredKeys.encodedKey(currentStored, multiValued);
      pending = true;
      return true;
    }

    boolean hasValue() {
      if (pending) {
        return true;
      }
      if (!cursor.valid()) {
        return false;
      }
      byte[] stored = cursor.key();
      if (!sameKey(stored)) {
        return false;
      }
      pending = true;
      return true;
    }

    byte[] takeValue() {
      byte[] v = cursor.value();
      recordsIn.increment();
      pending = false;
      cursor.next();
      return v;
    }

    void skipRest() {
      while (hasValue()) {
        pending = false;
        recordsIn.increment();
        cursor.next();
      }
    }

    private boolean sameKey(byte[] stored) {
      return StoredKeys.holdsKey(stored, key, multiValued);
    }
  }
}
