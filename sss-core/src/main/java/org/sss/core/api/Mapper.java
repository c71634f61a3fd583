package org.sss.core.api;

/**
 * Turns each input pair into zero or more output pairs. One instance per task (a partition of
 * the input table); a task calls {@link #setup}, then {@link #map} for every pair of its
 * partition in key order, then {@link #cleanup}. Instances are created by class name with a
 * public no-argument constructor, on the node that holds the data.
 *
 * <p>An exception thrown by any method fails the job; its stack trace reaches the client.
 */
public interface Mapper<KI, VI, KO, VO> {
  default void setup(TaskContext context) throws Exception {}

  void map(KI key, VI value, Emitter<KO, VO> out) throws Exception;

  /** Called after the last pair; may emit (e.g. in-mapper aggregates). */
  default void cleanup(Emitter<KO, VO> out) throws Exception {}

  /** Emits every pair as it is: a job that only moves data (a load, a copy into other options). */
  final class Identity<K, V> implements Mapper<K, V, K, V> {
    @Override
    public void map(K key, V value, Emitter<K, V> out) {
      out.emit(key, value);
    }
  }
}
