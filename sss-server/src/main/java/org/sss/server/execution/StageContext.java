package org.sss.server.execution;

import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicReference;
import java.util.concurrent.atomic.LongAdder;
import org.sss.core.api.Partitioner;
import org.sss.core.api.Reducer;
import org.sss.core.api.Serde;
import org.sss.core.api.TaskContext;
import org.sss.core.proto.StageSpec;
import org.sss.kvs.StoreTable;

/** Everything the tasks of one stage on one node share: user classes, counters, abort state. */
final class StageContext {
  final String jobId;
  final StageSpec spec;
  final int nodeId;
  final ClassLoader loader;
  /** The table the stage reads; null for a stage over files. */
  final StoreTable input;
  final StageShuffle shuffle;
  final Map<String, LongAdder> counters = new ConcurrentHashMap<>();
  final LongAdder recordsIn = new LongAdder();
  final LongAdder recordsOut = new LongAdder();
  final AtomicReference<Throwable> failure;
  final AtomicBoolean aborted;
  volatile String abortReason = "";

  StageContext(String jobId, StageSpec spec, int nodeId, ClassLoader loader, StoreTable input,
               StageShuffle shuffle, AtomicReference<Throwable> failure, AtomicBoolean aborted) {
    this.aborted = aborted;
    this.jobId = jobId;
    this.spec = spec;
    this.nodeId = nodeId;
    this.loader = loader;
    this.input = input;
    this.shuffle = shuffle;
    this.failure = failure;
  }

  @SuppressWarnings("unchecked")
  <T> Serde<T> serde(String className) {
    return UserClasses.create(loader, className, Serde.class);
  }

  Partitioner partitioner() {
    return spec.getPartitionerClass().isEmpty() ? new Partitioner.Hash()
        : UserClasses.create(loader, spec.getPartitionerClass(), Partitioner.class);
  }

  @SuppressWarnings("unchecked")
  <K, V> Reducer<K, V, K, V> combiner() {
    return spec.getCombinerClass().isEmpty() ? null
        : UserClasses.create(loader, spec.getCombinerClass(), Reducer.class);
  }

  /** True for a last stage that writes text part files instead of a table. */
  boolean writesFiles() {
    return spec.getOutputTable().isEmpty() && !spec.getOutputDir().isEmpty();
  }

  /** True when the stage must stop: aborted, or a task or send failed. */
  boolean stopping() {
    return aborted.get() || failure.get() != null;
  }

  TaskContext taskContext(int partition) {
    return new TaskContext() {
      @Override
      public Map<String, String> config() {
        return spec.getConfigMap();
      }

      @Override
      public Counter counter(String name) {
        LongAdder a = counters.computeIfAbsent(name, n -> new LongAdder());
        return a::add;
      }

      @Override
      public int nodeId() {
        return nodeId;
      }

      @Override
      public int partition() {
        return partition;
      }

      @Override
      public String inputFile() {
        return partition < spec.getInputSplitsCount() ? spec.getInputSplits(partition).getPath() : null;
      }

      @Override
      public long inputFileOffset() {
        return partition < spec.getInputSplitsCount() ? spec.getInputSplits(partition).getFileOffset() : -1;
      }
    };
  }

  /** Where a task runs, for error messages. */
  String where(String kind, int partition) {
    return kind + " task of job " + jobId + " stage " + spec.getIndex() + " (node " + nodeId
        + ", partition " + partition + ")";
  }

}
