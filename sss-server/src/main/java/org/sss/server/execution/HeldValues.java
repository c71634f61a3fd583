package org.sss.server.execution;

import java.util.Arrays;
import java.util.Iterator;
import java.util.List;
import java.util.NoSuchElementException;

/**
 * The values a combining buffer holds for one key, in the order they were added, with the
 * latest run of one and the same object kept as the object and a count.
 *
 * <h2>Why runs</h2>
 * Many mappers emit one constant value object per pair (WordCount's {@code 1}): every add of
 * it to a list stores a reference into an array, with the garbage collector's card mark, for
 * each of a hundred million pairs. A run costs one comparison and an increment (a run is
 * bounded by the buffer's count of held values, far below {@code int}'s range). Iteration yields exactly the references that were added, in order, so a
 * combiner sees what it would see in a list; only the same object added twice in a row is
 * merged, never two equal ones (a mutable value is copied when added, so its copies differ).
 *
 * <p>Not thread-safe. A combining buffer's group extends it with its own counts, so that one
 * object, one memory access after the table, holds everything an add touches.
 */
class HeldValues<V> implements Iterable<V> {
  private static final Object[] NONE = {};
  /** The values before the current run, in {@code earlier[0..earlierSize)}; no list object to reach through. */
  private Object[] earlier = NONE;
  private int earlierSize;
  private V repeated;
  private int repeats;

  final void add(V value) {
    if (repeats > 0 && value == repeated) {
      repeats++;
      return;
    }
    endRun();
    repeated = value;
    repeats = 1;
  }

  final void addAll(List<V> values) {
    for (V v : values) {
      add(v);
    }
  }

  private void endRun() {
    if (earlierSize + repeats > earlier.length) {
      earlier = Arrays.copyOf(earlier, Math.max(4, Math.max(earlierSize + repeats, 2 * earlier.length)));
    }
    for (int i = 0; i < repeats; i++) {
      earlier[earlierSize++] = repeated;
    }
    repeated = null;
    repeats = 0;
  }

  /** Removes the value added last. */
  final void removeLast() {
    if (repeats > 0) {
      if (--repeats == 0) {
        repeated = null;
      }
    } else {
      earlier[--earlierSize] = null;
    }
  }

  final int size() {
    return earlierSize + repeats;
  }

  /** Forgets every value, keeping the array for the next ones. */
  final void clear() {
    Arrays.fill(earlier, 0, earlierSize, null);
    earlierSize = 0;
    repeated = null;
    repeats = 0;
  }

  @Override
  public final Iterator<V> iterator() {
    return new Iterator<>() {
      private int next;

      @Override
      public boolean hasNext() {
        return next < earlierSize + repeats;
      }

      @Override
      @SuppressWarnings("unchecked")
      public V next() {
        if (!hasNext()) {
          throw new NoSuchElementException();
        }
        int i = next++;
        return i < earlierSize ? (V) earlier[i] : repeated;
      }
    };
  }
}
