package org.sss.server.execution;

import org.sss.core.api.Emitter;

/**
 * Where the tasks of one runner emit: the shuffle ({@link MapOutput}), or text part files
 * ({@link TextPartOutput}). A runner runs its tasks one at a time, so an output serves one task
 * at a time and needs no locking.
 */
interface TaskOutput<K, V> {
  /** What the task over {@code task} (a partition, or a split) emits into. */
  Emitter<K, V> emitter(int task);

  /** The task ended (either way). */
  void taskDone();

  /** The runner has no task left and none failed: everything held goes out. */
  void finish();

  /** The stage failed: what is held is dropped. */
  void discard();
}
