package org.sss.kvs;

import java.nio.ByteBuffer;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.PriorityQueue;

/**
 * Ranges merged into one ascending order of the key after the 2-byte partition prefix:
 * partitions hold disjoint keys, so this is the table's key order on this node. Closing it
 * closes every range and runs {@code release}, as {@link ConcatCursor} does.
 */
final class MergingCursor implements StoreCursor {
  private final List<RangeReader> live = new ArrayList<>();
  private final List<RangeReader> all;
  private final Runnable release;
  private final PriorityQueue<Head> heap;
  private Head top;
  private boolean closed;

  private record Head(RangeReader cursor, byte[] key) {}

  MergingCursor(List<RangeReader> cursors, Runnable release) {
    this.all = cursors;
    this.release = release;
    this.heap = new PriorityQueue<>(Math.max(1, cursors.size()),
        (a, b) -> Arrays.compareUnsigned(a.key, 2, a.key.length, b.key, 2, b.key.length));
    for (RangeReader c : cursors) {
      if (c.valid()) {
        heap.add(new Head(c, c.key()));
        live.add(c);
      } else {
        c.checkStatus();
      }
    }
    top = heap.poll();
  }

  @Override
  public boolean valid() {
    return top != null;
  }

  @Override
  public byte[] key() {
    return top.key;
  }

  @Override
  public byte[] value() {
    return top.cursor.value();
  }

  @Override
  public int value(ByteBuffer target) {
    return top.cursor.value(target);
  }

  @Override
  public void next() {
    RangeReader c = top.cursor;
    c.next();
    if (c.valid()) {
      heap.add(new Head(c, c.key()));
    } else {
      c.checkStatus();
    }
    top = heap.poll();
  }

  @Override
  public void close() {
    if (!closed) {
      closed = true;
      all.forEach(RangeReader::close);
      release.run();
    }
  }
}
