package org.sss.server.execution;

import java.util.ArrayDeque;
import java.util.HashMap;
import java.util.Map;

/**
 * Keeps the arrays of large values a combining buffer has finished with, to copy the next
 * values into.
 *
 * <p>A combining buffer must copy every {@code byte[]} value it holds, since the mapper may
 * reuse its array. Copying into a fresh array costs an allocation and, for values of kilobytes
 * and more, the zeroing of new memory and garbage collections that copy the held values once
 * more to the old generation: in the shuffle-intensive shape this was most of a combined job's
 * time. The reducer contract (values must be copied if kept) lets the buffer reuse an array
 * once the combiner has returned.
 *
 * <p>Arrays are pooled by exact length, since map output values are usually of a few sizes.
 * Small arrays are not pooled: the allocator hands them out faster than a pool would.
 * Not thread-safe: one per combining buffer.
 */
final class ArrayRecycler {
  /** Arrays shorter than this are allocated afresh. */
  static final int MIN_LENGTH = 1024;

  private final Map<Integer, ArrayDeque<byte[]>> free = new HashMap<>();
  private final long maxBytes;
  private long bytes;

  /** @param maxBytes the most bytes of arrays kept for reuse */
  ArrayRecycler(long maxBytes) {
    this.maxBytes = maxBytes;
  }

  /** A copy of {@code v}, in a recycled array when one of its length is free. */
  byte[] copy(byte[] v) {
    if (v.length >= MIN_LENGTH) {
      ArrayDeque<byte[]> same = free.get(v.length);
      byte[] a = same == null ? null : same.poll();
      if (a != null) {
        bytes -= a.length;
        System.arraycopy(v, 0, a, 0, v.length);
        return a;
      }
    }
    return v.clone();
  }

  /** Takes back an array nobody reads any more; kept if it is large and the pool has room. */
  void recycle(Object value) {
    if (value instanceof byte[] a && a.length >= MIN_LENGTH && bytes + a.length <= maxBytes) {
      free.computeIfAbsent(a.length, n -> new ArrayDeque<>()).push(a);
      bytes += a.length;
    }
  }

  /** Bytes of arrays kept for reuse. */
  long pooledBytes() {
    return bytes;
  }

  /** Lets every pooled array go. */
  void clear() {
    free.clear();
    bytes = 0;
  }
}
