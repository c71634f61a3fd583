package org.sss.core.api;

import java.util.Map;

/** What a task knows about where it runs, and where it counts things. */
public interface TaskContext {
  /** The job's configuration, as given to the job builder. */
  Map<String, String> config();

  /** A configuration value, or {@code dflt} when absent. */
  default String get(String key, String dflt) {
    return config().getOrDefault(key, dflt);
  }

  /** A user counter; counters are summed over all tasks and nodes and reported with the job. */
  Counter counter(String name);

  /**
   * The node this task runs on. Not always the partition's leader: in a map stage over a table
   * of two or more copies, a node done with its own tasks may run a waiting task of a partition
   * it holds a copy of. Output that depends on this number may differ between runs.
   */
  int nodeId();

  /**
   * The input partition this task processes; in a stage over text files, the index of its split
   * in the job's list of splits.
   */
  int partition();

  /**
   * In a stage over text files, the file this task's split is of (as Hadoop's
   * {@code FileSplit.getPath()}), absolute: for work that depends on the file. Null in a stage
   * over a table.
   */
  default String inputFile() {
    return null;
  }

  /**
   * In a stage over text files, where {@link #inputFile} starts in the job's input files taken
   * end to end in path order (the sizes of the files before it; 0 for the first, and for a job
   * over one file): a line's offset plus this is its offset in that concatenation, unique across
   * the files (see {@code org.sss.core.io.ConcatenatedOffsets}). -1 in a stage over a table.
   */
  default long inputFileOffset() {
    return -1;
  }

  /** Counts things; thread-safe. */
  interface Counter {
    void increment(long delta);

    default void increment() {
      increment(1);
    }
  }
}
