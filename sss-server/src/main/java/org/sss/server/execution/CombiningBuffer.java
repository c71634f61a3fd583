package org.sss.server.execution;

import java.nio.ByteBuffer;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.function.UnaryOperator;
import org.sss.core.api.Reducer;
import org.sss.core.api.Serde;
import org.sss.core.api.Serdes;

/**
 * Runs the combiner on a task's emitted pairs before they are shuffled.
 *
 * <h2>Objects, not bytes</h2>
 * Pairs are grouped by key <em>object</em> in a {@link GroupTable}, and encoded only when a group is
 * written out. A word-count-like job, where the combiner shrinks the output a thousandfold,
 * thus pays one hash lookup per emitted pair instead of an encoding, a copy and a decoding.
 * Keys and values of the built-in immutable types (long, int, double, string) are kept as
 * emitted; anything else is copied through its serde at emit time, so callers may reuse
 * mutable objects after {@code emit} returns, as the {@code Emitter} contract allows. Keys of
 * other types are grouped by their encoding, since their {@code equals} (a {@code byte[]}'s
 * identity, say) need not say whether two keys are the same. {@code byte[]} values are copied
 * into arrays the buffer recycles once the combiner has consumed them ({@link ArrayRecycler}).
 *
 * <h2>Memory</h2>
 * A key's values are combined at once into (usually) one when the key has gathered
 * {@link #EAGER_VALUES} values, or at least two holding {@link #EAGER_GROUP_BYTES}: a hot key
 * never holds more than a few values, and keys with large values are combined before the
 * buffer's memory bound forces them out uncombined. The value that completes such a group is
 * handed to the combiner as emitted, uncopied: the combiner reads it before {@code emit}
 * returns, which saves a copy of every large value but a key's first. When the map holds more than
 * {@code maxHeld} values or about {@link #MAX_HELD_BYTES} of keys, values and bookkeeping (or the
 * task ends), every group is combined and written out, and the map starts empty. Memory is thus
 * bounded whatever the data size and whatever the sizes of keys and values. When such a forced flush finds that combining merged (almost) nothing, the
 * buffer steps aside for the rest of the task's runner (see {@link #bypass}).
 *
 * <h2>Contract checks</h2>
 * A combiner must keep its key: output under any other key fails the task with a message
 * naming the combiner, rather than silently mis-grouping data.
 */
final class CombiningBuffer<K, V> {
  static final int EAGER_VALUES = 64;
  /**
   * Flush when the held values are estimated at more than this (large values): 128 MiB, or a
   * 32nd of the heap when that is less. It must hold a value of each of a few dozen keys even
   * when values are megabytes (16 keys of 4 MiB), or the first flush finds nothing merged and
   * the buffer steps aside before any key's second value arrives.
   */
  static final long MAX_HELD_BYTES = Math.min(128L << 20, Runtime.getRuntime().maxMemory() / 32);
  /**
   * A value this large whose key holds nothing goes straight to the shuffle: holding it means
   * copying it, and a few such copies fill the buffer, which then flushes having merged nothing
   * (16 MiB values, one of each key per node, cost twice the uncombined job when held).
   */
  static final long HUGE_VALUE_BYTES = MAX_HELD_BYTES / 16;

  /** A key whose values hold this much is combined as soon as it has two. */
  static final long EAGER_GROUP_BYTES = 256 << 10;

  private final Reducer<K, V, K, V> combiner;
  private final Serde<K> keySerde;
  private final Serde<V> valueSerde;
  private final UnaryOperator<K> keyCopier;
  private final UnaryOperator<V> valueCopier;
  private final PairWriter out;
  private final long maxHeld;
  private final boolean keysByValue;
  /** Arrays of consumed values, when values are {@code byte[]}; null otherwise. */
  private final ArrayRecycler arrays;
  /** Group key: the key object itself, or a ByteBuffer over its encoding. */
  private final GroupTable<Group<V>> groups = new GroupTable<>();
  private final List<V> combined = new ArrayList<>(4);
  private long held;
  private long heldBytes;
  private K combiningKey;
  /** Values added since the last flush, before any combining. */
  private long addedSinceFlush;
  /**
   * Set when a flush forced by the memory bound wrote at least 90% of what was added: the keys
   * do not repeat within the buffer's reach, so later pairs skip the combiner (which may run
   * zero times) and go straight to the shuffle. Shapes with few, huge values per key (16 MiB
   * values, one of each key per node) otherwise pay for a copy of every value and merge
   * nothing.
   */
  private boolean bypass;

  /** One key's held values and their estimated size. */
  private static final class Group<V> extends HeldValues<V> {
    long bytes;
    /**
     * Values before the next eager combine may run: twice what the last one left, so a
     * combiner that merges little costs amortized constant work per value, not a pass over
     * the group at every add.
     */
    int combineAt = 2;
  }

  CombiningBuffer(Reducer<K, V, K, V> combiner, Serde<K> keySerde, Serde<V> valueSerde,
                  PairWriter out, long maxHeld) {
    this.combiner = combiner;
    this.keySerde = keySerde;
    this.valueSerde = valueSerde;
    this.keyCopier = copier(keySerde, true);
    this.keysByValue = immutable(keySerde);
    this.arrays = valueSerde instanceof Serdes.BytesSerde ? new ArrayRecycler(MAX_HELD_BYTES) : null;
    this.valueCopier = arrays != null ? this::recycledCopy : copier(valueSerde, false);
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

  @SuppressWarnings("unchecked")
  private V recycledCopy(V v) {
    return (V) arrays.copy((byte[]) v);
  }

  void add(K key, V value) throws Exception {
    if (bypass) {
      writeThrough(key, value);
      return;
    }
    Object groupKey = keysByValue ? key : ByteBuffer.wrap(keySerde.encodeKey(key));
    Group<V> group = groups.get(groupKey);
    long size = sizeOf(value);
    if (group == null) {
      if (size >= HUGE_VALUE_BYTES) {
        writeThrough(key, value);
        return;
      }
      group = newGroup(key, groupKey);
    }
    addedSinceFlush++;
    int n = group.size() + 1;
    boolean combineNow = n >= group.combineAt && (n >= EAGER_VALUES || group.bytes + size >= EAGER_GROUP_BYTES);
    // a value combined at once is read by the combiner before emit returns: no copy needed
    group.add(combineNow ? value : valueCopier.apply(value));
    group.bytes += size;
    held++;
    heldBytes += size;
    if (combineNow) {
      combineInPlace(key, group);
    }
    if (held > maxHeld || heldBytes > MAX_HELD_BYTES) {
      flushFull();
    }
  }

  /* The paths an add rarely takes are methods of their own, out of the common path's compiled code. */

  private void writeThrough(K key, V value) throws InterruptedException {
    out.write(keySerde.encodeKey(key), valueSerde.encodeValue(value));
  }

  private Group<V> newGroup(K key, Object groupKey) {
    Group<V> group = new Group<>();
    groups.putNew(keysByValue ? keyCopier.apply(key) : groupKey, group);
    // a group costs its key and its bookkeeping whatever its values weigh: many distinct
    // large keys with small values must flush the buffer as surely as large values do
    heldBytes += GROUP_BYTES + sizeOf(keysByValue ? key : groupKey);
    return group;
  }

  /** Flushes a buffer that reached its memory bound, and steps aside if that merged (almost) nothing. */
  private void flushFull() throws Exception {
    long added = addedSinceFlush;
    long written = flush();
    bypass = written * 10 >= added * 9;
    if (bypass && arrays != null) {
      arrays.clear();
    }
  }

  /**
   * Replaces a group's values by the combiner's output for them. The last value is the one just
   * emitted, uncopied: the caller's own object, which must never be recycled.
   */
  private void combineInPlace(K key, Group<V> group) throws Exception {
    List<V> result = combine(key, group);
    held -= group.size();
    heldBytes -= group.bytes;
    group.removeLast();
    recycleAll(group);
    group.clear();
    group.addAll(result);
    group.bytes = 0;
    for (V v : result) {
      group.bytes += sizeOf(v);
    }
    group.combineAt = Math.max(2, 2 * result.size());
    held += result.size();
    heldBytes += group.bytes;
  }

  private void recycleAll(Iterable<V> values) {
    if (arrays != null) {
      for (V v : values) {
        arrays.recycle(v);
      }
    }
  }

  /**
   * The heap a group holds besides its key and values: its share of the table's three arrays
   * (at most half full: 24), the group (40), its array of values (32) and, once the table has
   * moved its entries into a {@code HashMap} (keys sharing few hash codes), an entry there (40).
   */
  static final long GROUP_BYTES = 24 + 40 + 32 + 40;

  /**
   * A rough heap size of a key or value, so that large ones flush the buffer early; with its
   * reference from the array or table that holds it.
   */
  static long sizeOf(Object v) {
    if (v instanceof byte[] b) {
      return 24L + b.length;
    }
    if (v instanceof ByteBuffer bb) {
      return 72L + bb.capacity(); // the wrapper and its array
    }
    if (v instanceof String str) {
      return 48L + 2L * str.length(); // a string that is not Latin-1 takes two bytes a char
    }
    return 24;
  }

  /** Combines every group and writes the results to the shuffle; returns the pairs written. */
  long flush() throws Exception {
    long[] written = {0};
    groups.forEach((groupKey, group) -> {
      K k = keyOf(groupKey);
      HeldValues<V> held = group;
      Iterable<V> values = held.size() > 1 ? combine(k, held) : held;
      byte[] key = keysByValue ? keySerde.encodeKey(k) : ((ByteBuffer) groupKey).array();
      for (V v : values) {
        out.write(key, valueSerde.encodeValue(v));
        written[0]++;
      }
      recycleAll(held);
      if (values != held) {
        recycleAll(values);
      }
    });
    groups.clear();
    held = 0;
    heldBytes = 0;
    addedSinceFlush = 0;
    return written[0];
  }

  /** Whether later pairs skip the combiner (see {@link #bypass}). */
  boolean bypassed() {
    return bypass;
  }

  @SuppressWarnings("unchecked")
  private K keyOf(Object group) {
    return keysByValue ? (K) group : keySerde.decodeKey(((ByteBuffer) group).array());
  }

  private List<V> combine(K key, Iterable<V> values) throws Exception {
    combined.clear();
    combiningKey = key;
    combiner.reduce(key, values, this::collect);
    return new ArrayList<>(combined);
  }

  private void collect(K k, V v) {
    if (keysByValue ? !k.equals(combiningKey)
        : !Arrays.equals(keySerde.encodeKey(k), keySerde.encodeKey(combiningKey))) {
      throw new IllegalStateException("combiner " + combiner.getClass().getName()
          + " changed key " + combiningKey + " to " + k + "; a combiner must keep keys unchanged");
    }
    combined.add(valueCopier.apply(v));
  }
}
