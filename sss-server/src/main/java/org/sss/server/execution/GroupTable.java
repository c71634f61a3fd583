package org.sss.server.execution;

import java.util.Arrays;
import java.util.Objects;

/**
 * The combining buffer's groups by key: an open-addressed table with linear probing, keys and
 * values in two parallel arrays, each key's hash beside them.
 *
 * <h2>Why not a {@code HashMap}</h2>
 * A map task hands every pair it emits to one lookup here (a hundred million in a WordCount of
 * 1 GiB). {@code HashMap}'s calls of {@code hashCode} and {@code equals} sit in the JDK's code,
 * shared by every map in the JVM, and in a server the compiler has seen many key classes there
 * (Netty's, RocksDB's, the protocol's); here they are this class's own call sites, which in a
 * job see its key class. A lookup also reaches the group from the slot, with no map entry
 * between them. With the group's values held as runs ({@link HeldValues}), a WordCount of the
 * 1 GiB RandomTextWriter file went from 5.35 to 4.62 s (medians of eleven alternated runs).
 *
 * <p>Keys are never removed one by one: {@link #clear} empties the table when the buffer is
 * flushed. Not thread-safe.
 */
final class GroupTable<G> {
  private static final int INITIAL_CAPACITY = 1024;

  private Object[] keys = new Object[INITIAL_CAPACITY];
  private Object[] groups = new Object[INITIAL_CAPACITY];
  private int[] hashes = new int[INITIAL_CAPACITY];
  private int size;

  /** The group of {@code key}, or null. */
  @SuppressWarnings("unchecked")
  G get(Object key) {
    int h = spread(key.hashCode());
    int mask = keys.length - 1;
    for (int i = h & mask; ; i = (i + 1) & mask) {
      Object k = keys[i];
      if (k == null) {
        return null;
      }
      if (hashes[i] == h && (k == key || k.equals(key))) {
        return (G) groups[i];
      }
    }
  }

  /** Adds a key known to be absent (a {@link #get} just returned null for it). */
  void putNew(Object key, G group) {
    if (2 * (size + 1) > keys.length) {
      grow();
    }
    insert(Objects.requireNonNull(key), group, spread(key.hashCode()));
    size++;
  }

  private void insert(Object key, Object group, int h) {
    int mask = keys.length - 1;
    int i = h & mask;
    while (keys[i] != null) {
      i = (i + 1) & mask;
    }
    keys[i] = key;
    groups[i] = group;
    hashes[i] = h;
  }

  private void grow() {
    Object[] oldKeys = keys;
    Object[] oldGroups = groups;
    int[] oldHashes = hashes;
    keys = new Object[2 * oldKeys.length];
    groups = new Object[2 * oldKeys.length];
    hashes = new int[2 * oldKeys.length];
    for (int i = 0; i < oldKeys.length; i++) {
      if (oldKeys[i] != null) {
        insert(oldKeys[i], oldGroups[i], oldHashes[i]);
      }
    }
  }

  /** Mixes the high bits in: string hashes of similar keys differ mostly there. */
  private static int spread(int h) {
    return h ^ (h >>> 16);
  }

  int size() {
    return size;
  }

  /** Visits every (key, group) in table order. */
  @SuppressWarnings("unchecked")
  <E extends Exception> void forEach(Visitor<G, E> visitor) throws E {
    for (int i = 0; i < keys.length; i++) {
      if (keys[i] != null) {
        visitor.visit(keys[i], (G) groups[i]);
      }
    }
  }

  /** Empties the table, keeping its capacity (as {@code HashMap.clear} does). */
  void clear() {
    Arrays.fill(keys, null);
    Arrays.fill(groups, null);
    size = 0;
  }

  /** What {@link #forEach} calls for each entry. */
  @FunctionalInterface
  interface Visitor<G, E extends Exception> {
    void visit(Object key, G group) throws E;
  }
}
