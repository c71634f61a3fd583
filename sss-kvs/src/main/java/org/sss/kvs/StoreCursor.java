package org.sss.kvs;

/**
 * A forward cursor over stored pairs, RocksDB-iterator style: check {@link #valid()}, read
 * {@link #key()} and {@link #value()}, then {@link #next()}. Keys are stored keys, partition
 * prefix included. Must be closed; it pins a snapshot of the table.
 */
public interface StoreCursor extends AutoCloseable {
  boolean valid();

  byte[] key();

  byte[] value();

  void next();

  @Override
  void close();
}
