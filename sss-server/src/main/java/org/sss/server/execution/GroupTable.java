package org.sss.server.execution;

import java.util.Arrays;
import java.util.HashMap;
import java.util.Map;
import java.util.Objects;

/**
 * The combining buffer's groups by key: an open-addressed table with linear probing, keys and
 * groups in two parallel arrays, each key's hash code beside them.
 *
 * <h2>Why not a {@code HashMap}</h2>
 * A map task hands every pair it emits to one lookup here (a hundred million in a WordCount of
 * 1 GiB). {@code HashMap}'s calls of {@code hashCode} and {@code equals} sit in the JDK's code,
 * shared by every map in the JVM, and in a server the compiler has seen many key classes there
 * (Netty's, RocksDB's, the protocol's); here they are this class's own call sites, which in a
 * job see its key class. A lookup also reaches the group from the slot, with no map entry
 * between them. With the group's values held as runs ({@link HeldValues}), a WordCount of the
 * 1 GiB RandomTextWriter file went from 5.35 to 4.67 s (medians of ten and eleven alternated runs).
 *
 * <h2>Keys whose hash codes collide</h2>
 * A slot is chosen from the hash code multiplied by the golden ratio (its high bits), so codes
 * that differ only in their high bits, or by multiples of the table's size, still spread. Keys
 * that share one hash code cannot spread: packed pairs {@code src << 32 | dst} of small ids
 * (whose {@code Long.hashCode} is {@code src ^ dst}: 65,536 keys, 256 codes) or strings chosen
 * to collide would make one run of slots that every lookup walks, quadratic work in the keys.
 * {@code HashMap} chains such keys and keeps a long chain of comparable keys as a tree. So a
 * lookup or insert that walks more than {@link #MAX_PROBES} slots moves every entry into a
 * {@code HashMap}, which holds them until the next {@link #clear}: such a job combines at
 * {@code HashMap}'s speed, and every other keeps the table's.
 *
 * <p>Keys are never removed one by one: {@link #clear} empties the table when the buffer is
 * flushed. Not thread-safe.
 */
final class GroupTable<G> {
  private static final int INITIAL_CAPACITY = 1024;
  /**
   * Slots a lookup may walk before the table gives way to a {@code HashMap}. At most half full
   * with spread hash codes, a walk averages under three slots and one of a hundred is all but
   * impossible.
   */
  static final int MAX_PROBES = 100;

  private Object[] keys = new Object[INITIAL_CAPACITY];
  private Object[] groups = new Object[INITIAL_CAPACITY];
  private int[] hashes = new int[INITIAL_CAPACITY];
  /** 32 minus log2 of the capacity: a slot is the top bits of the spread hash code. */
  private int shift = 32 - Integer.numberOfTrailingZeros(INITIAL_CAPACITY);
  private int size;
  /** Every entry, once a walk grew too long; null while the table holds them. */
  private Map<Object, Object> chained;

  /** The group of {@code key}, or null. */
  @SuppressWarnings("unchecked")
  G get(Object key) {
    if (chained != null) {
      return (G) chained.get(key);
    }
    int h = key.hashCode();
    int mask = keys.length - 1;
    int probes = 0;
    for (int i = slot(h); ; i = (i + 1) & mask) {
      Object k = keys[i];
      if (k == null) {
        return null;
      }
      if (hashes[i] == h && (k == key || k.equals(key))) {
        return (G) groups[i];
      }
      if (++probes > MAX_PROBES) {
        chain();
        return (G) chained.get(key);
      }
    }
  }

  /** Adds a key known to be absent (a {@link #get} just returned null for it). */
  void putNew(Object key, G group) {
    Objects.requireNonNull(key);
    if (chained != null) {
      chained.put(key, group);
      return;
    }
    if (2 * (size + 1) > keys.length) {
      grow();
    }
    size++;
    if (insert(key, group, key.hashCode()) > MAX_PROBES) {
      chain();
    }
  }

  /** Puts an entry in the first free slot from its own; returns the slots walked. */
  private int insert(Object key, Object group, int h) {
    int mask = keys.length - 1;
    int i = slot(h);
    int probes = 0;
    while (keys[i] != null) {
      i = (i + 1) & mask;
      probes++;
    }
    keys[i] = key;
    groups[i] = group;
    hashes[i] = h;
    return probes;
  }

  private int slot(int h) {
    return (h * 0x9E3779B9) >>> shift;
  }

  private void grow() {
    Object[] oldKeys = keys;
    Object[] oldGroups = groups;
    int[] oldHashes = hashes;
    keys = new Object[2 * oldKeys.length];
    groups = new Object[2 * oldKeys.length];
    hashes = new int[2 * oldKeys.length];
    shift--;
    for (int i = 0; i < oldKeys.length; i++) {
      if (oldKeys[i] != null) {
        insert(oldKeys[i], oldGroups[i], oldHashes[i]);
      }
    }
  }

  /** Moves every entry into a {@code HashMap} and empties the slots. */
  private void chain() {
    chained = new HashMap<>(2 * size);
    for (int i = 0; i < keys.length; i++) {
      if (keys[i] != null) {
        chained.put(keys[i], groups[i]);
      }
    }
    Arrays.fill(keys, null);
    Arrays.fill(groups, null);
  }

  int size() {
    return chained != null ? chained.size() : size;
  }

  /** Whether the entries moved into a {@code HashMap} (see the class's comment). */
  boolean chained() {
    return chained != null;
  }

  /** Visits every (key, group): in slot order, or the {@code HashMap}'s. */
  @SuppressWarnings("unchecked")
  <E extends Exception> void forEach(Visitor<G, E> visitor) throws E {
    if (chained != null) {
      for (Map.Entry<Object, Object> e : chained.entrySet()) {
        visitor.visit(e.getKey(), (G) e.getValue());
      }
      return;
    }
    for (int i = 0; i < keys.length; i++) {
      if (keys[i] != null) {
        visitor.visit(keys[i], (G) groups[i]);
      }
    }
  }

  /** Empties the table, keeping its capacity (as {@code HashMap.clear} does), and gives up the {@code HashMap} if there was one. */
  void clear() {
    Arrays.fill(keys, null);
    Arrays.fill(groups, null);
    chained = null;
    size = 0;
  }

  /** What {@link #forEach} calls for each entry. */
  @FunctionalInterface
  interface Visitor<G, E extends Exception> {
    void visit(Object key, G group) throws E;
  }
}
