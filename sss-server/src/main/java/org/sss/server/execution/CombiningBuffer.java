package org.sss.server.execution;

import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.function.UnaryOperator;
import org.sss.core.api.Reducer;
import org.sss.core.api.Serde;
import org.sss.core.api.Serdes;

/**
 * Runs the combiner on a task's emitted pairs before they are shuffled.
 *
 * <h2>Objects, not bytes</h2>
 * Pairs are grouped by key <em>object</em> in a hash map, and encoded only when a group is
 * written out. A word-count-like job, where the combiner shrinks the output a thousandfold,
 * thus pays one hash lookup per emitted pair instead of an encoding, a copy and a decoding.
 * Keys and values of the built-in immutable types (long, int, double, string) are kept as
 * emitted; anything else is copied through its serde at emit time, so callers may reuse
 * mutable objects after {@code emit} returns, as the {@code Emitter} contract allows. Keys of
 * other types are grouped by their encoding, since their {@code equals} (a {@code byte[]}'s
 * identity, say) need not say whether two keys are the same.
 *
 * <h2>Memory</h2>
 * When one key has gathered {@link #EAGER_VALUES} values they are combined at once into
 * (usually) one, so a hot key never holds more than a few values. When the map holds more than
 * {@code maxHeld} values or about {@link #MAX_HELD_BYTES} of them (or the task ends), every
 * group is combined and written out, and the map starts empty. Memory is thus bounded whatever
 * the data size. When such a forced flush finds that combining merged (almost) nothing, the
 * buffer steps aside for the rest of the task's runner (see {@link #bypass}).
 *
 * <h2>Contract checks</h2>
 * A combiner must keep its key: output under any other key fails the task with a message
 * naming the combiner, rather than silently mis-grouping data.
 */
final class CombiningBuffer<K, V> {
  static final int EAGER_VALUES = 64;

  private final Reducer<K, V, K, V> combiner;
  private final Serde<K> keySerde;
  private final Serde<V> valueSerde;
  private final UnaryOperator<K> keyCopier;
  private final UnaryOperator<V> valueCopier;
  private final ShuffleWriter out;
  private final long maxHeld;
  private final boolean keysByValue;
  /** Group key: the key object itself, or a ByteBuffer over its encoding. */
  private final Map<Object, List<V>> groups = new HashMap<>();
  private final List<V> combined = new ArrayList<>(4);
  private long held;
  private long heldBytes;
  /** Flush when the held values are estimated at more than this (large values). */
  static final long MAX_HELD_BYTES = 64L << 20;
  private K combiningKey;
  /** Values added since the last flush, before any combining. */
  private long addedSinceFlush;
  /**
   * Set when a flush forced by the memory bound wrote at least 90% of what was added: the keys
   * do not repeat within the buffer's reach, so later pairs skip the combiner (which may run
   * zero times) and go straight to the shuffle. Shapes with few, huge values per key (four
   * 4 MiB values of a key in a 64 MiB bound) otherwise pay for a copy of every value and
   * merge nothing.
   */
  private boolean bypass;

  CombiningBuffer(Reducer<K, V, K, V> combiner, Serde<K> keySerde, Serde<V> valueSerde,
                  ShuffleWriter out, long maxHeld) {
    this.combiner = combiner;
    this.keySerde = keySerde;
    this.valueSerde = valueSerde;
    this.keyCopier = copier(keySerde, true);
    this.keysByValue = immutable(keySerde);
    this.valueCopier = copier(valueSerde, false);
    this.out = out;
    this.maxHeld = maxHeld;
  }

  /** Identity for immutable built-in types; a round trip through the serde otherwise. */
  private static boolean immutable(Serde<?> serde) {
    return serde instanceof Serdes.LongSerde || serde instanceof Serdes.StringSerde
        || serde instanceof Serdes.IntSerde || serde instanceof Serdes.DoubleSerde;
  }

  private static <T> UnaryOperator<T> copier(Serde<T> serde, boolean key) {
    if (immutable(serde)) {
      return UnaryOperator.identity();
    }
    return key ? t -> fresh(t, serde.decodeKey(serde.encodeKey(t))) : t -> fresh(t, serde.decodeValue(serde.encodeValue(t)));
  }

  /** The byte[] serde's round trip returns the caller's own array, which the caller may reuse: clone it. */
  @SuppressWarnings("unchecked")
  private static <T> T fresh(T original, T copy) {
    return copy == original && copy instanceof byte[] b ? (T) b.clone() : copy;
  }

  void add(K key, V value) throws Exception {
    if (bypass) {
      out.write(keySerde.encodeKey(key), valueSerde.encodeValue(value));
      return;
    }
    addedSinceFlush++;
    Object group = keysByValue ? key : java.nio.ByteBuffer.wrap(keySerde.encodeKey(key));
    List<V> values = groups.get(group);
    if (values == null) {
      values = new ArrayList<>(4);
      groups.put(keysByValue ? keyCopier.apply(key) : group, values);
    }
    values.add(valueCopier.apply(value));
    held++;
    heldBytes += sizeOf(value);
    if (values.size() >= EAGER_VALUES) {
      held -= values.size();
      List<V> result = combine(key, values);
      values.clear();
      values.addAll(result);
      held += values.size();
    }
    if (held > maxHeld || heldBytes > MAX_HELD_BYTES) {
      long added = addedSinceFlush;
      long written = flush();
      // a full buffer that merged (almost) nothing: combining only costs from here on
      bypass = written * 10 >= added * 9;
    }
  }

  /** A rough heap size of a value, so that large values flush the buffer early. */
  private static long sizeOf(Object v) {
    if (v instanceof byte[] b) {
      return 16L + b.length;
    }
    if (v instanceof String str) {
      return 40L + str.length();
    }
    return 16;
  }

  /** Combines every group and writes the results to the shuffle; returns the pairs written. */
  long flush() throws Exception {
    long written = 0;
    for (Map.Entry<Object, List<V>> e : groups.entrySet()) {
      K k = keyOf(e.getKey());
      List<V> values = e.getValue().size() > 1 ? combine(k, e.getValue()) : e.getValue();
      byte[] key = keysByValue ? keySerde.encodeKey(k) : ((java.nio.ByteBuffer) e.getKey()).array();
      for (V v : values) {
        out.write(key, valueSerde.encodeValue(v));
        written++;
      }
    }
    groups.clear();
    held = 0;
    heldBytes = 0;
    addedSinceFlush = 0;
    return written;
  }

  @SuppressWarnings("unchecked")
  private K keyOf(Object group) {
    return keysByValue ? (K) group : keySerde.decodeKey(((java.nio.ByteBuffer) group).array());
  }

  private List<V> combine(K key, List<V> values) throws Exception {
    combined.clear();
    combiningKey = key;
    combiner.reduce(key, values, this::collect);
    return new ArrayList<>(combined);
  }

  private void collect(K k, V v) {
    if (keysByValue ? !k.equals(combiningKey)
        : !java.util.Arrays.equals(keySerde.encodeKey(k), keySerde.encodeKey(combiningKey))) {
      throw new IllegalStateException("combiner " + combiner.getClass().getName()
          + " changed key " + combiningKey + " to " + k + "; a combiner must keep keys unchanged");
    }
    combined.add(valueCopier.apply(v));
  }
}
