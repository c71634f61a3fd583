package org.sss.kvs;

import java.nio.ByteBuffer;

/**
 * A forward cursor over stored pairs, RocksDB-iterator style: check {@link #valid()}, read
 * {@link #key()} and {@link #value()}, then {@link #next()}. Keys are stored keys, partition
 * prefix included. Must be closed; it pins a snapshot of the table.
 */
public interface StoreCursor extends AutoCloseable {
  boolean valid();

  byte[] key();

  byte[] value();

  /**
   * Copies the current key into {@code target}, starting at its position and stopping at its
   * limit, and returns the key's full length: when that exceeds {@code target.remaining()},
   * only the first {@code remaining()} bytes were copied. Copies straight from the store into
   * a direct buffer (no Java array); the position and limit of {@code target} may change.
   */
  default int key(ByteBuffer target) {
    return copyInto(key(), target);
  }

  /** Like {@link #key(ByteBuffer)}, for the current value. */
  default int value(ByteBuffer target) {
    return copyInto(value(), target);
  }

  private static int copyInto(byte[] bytes, ByteBuffer target) {
    target.put(target.position(), bytes, 0, Math.min(bytes.length, target.remaining()));
    return bytes.length;
  }

  void next();

  @Override
  void close();
}
