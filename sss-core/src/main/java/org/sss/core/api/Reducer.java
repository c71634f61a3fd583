package org.sss.core.api;

/**
 * Combines all values of one key. A task calls {@link #reduce} once per key of its partition,
 * in key order.
 *
 * <p><b>Values are a stream</b>: the iterable reads from the store as it goes, so a key with
 * millions of values reduces in bounded memory; it can be iterated once, and values must be
 * copied if kept.
 *
 * <p><b>As a combiner</b> (run on map output before the shuffle) a reducer may run zero, one
 * or several times on any subset of a key's values, and its output may be combined again. It
 * must therefore emit the key it was given, unchanged, with values of the map output's type,
 * and be associative and commutative (a sum, a max, a set union — not an average). Its input
 * values are only valid until {@code reduce} returns: the engine reuses their arrays.
 */
public interface Reducer<K, VI, KO, VO> {
  default void setup(TaskContext context) throws Exception {}

  void reduce(K key, Iterable<VI> values, Emitter<KO, VO> out) throws Exception;

  default void cleanup(Emitter<KO, VO> out) throws Exception {}
}
