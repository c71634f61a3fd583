package org.sss.kvs;

import java.nio.ByteBuffer;
import java.util.List;

/**
 * Ranges one after another: a scan of several ranges that need not be merged. Closing it closes
 * every range and runs {@code release}, which gives back the snapshot and the table reference the
 * scan took for all of them.
 */
final class ConcatCursor implements StoreCursor {
  private final List<RangeReader> cursors;
  private final Runnable release;
  private int current;
  private boolean closed;

  ConcatCursor(List<RangeReader> cursors, Runnable release) {
    this.cursors = cursors;
    this.release = release;
    skipExhausted();
  }

  private void skipExhausted() {
    while (current < cursors.size() && !cursors.get(current).valid()) {
      cursors.get(current).checkStatus();
      current++;
    }
  }

  @Override
  public boolean valid() {
    return current < cursors.size();
  }

  @Override
  public byte[] key() {
    return cursors.get(current).key();
  }

  @Override
  public byte[] value() {
    return cursors.get(current).value();
  }

  @Override
  public int key(ByteBuffer target) {
    return cursors.get(current).key(target);
  }

  @Override
  public int value(ByteBuffer target) {
    return cursors.get(current).value(target);
  }

  @Override
  public void next() {
    cursors.get(current).next();
    skipExhausted();
  }

  @Override
  public void close() {
    if (!closed) {
      closed = true;
      cursors.forEach(RangeReader::close);
      release.run();
    }
  }
}
