package org.sss.core.api;

/**
 * Where a mapper or reducer sends its output. Emitted pairs are encoded at once, so the
 * objects may be reused by the caller after {@code emit} returns. May block when the shuffle
 * is backed up (backpressure).
 */
@FunctionalInterface
public interface Emitter<K, V> {
  void emit(K key, V value);
}
