package org.sss.kvs;

import java.util.ArrayList;
import java.util.List;
import org.rocksdb.ReadOptions;
import org.rocksdb.Snapshot;

/**
 * A table as it was at one moment, to be read by key later: for a writer that must know what keys
 * held before a change of its own (a node catching up, around an ingest). Holds a RocksDB snapshot
 * and a reference to the table until closed, so a drop meanwhile does not free the native handle
 * under it. See {@link StoreTable#pointInTime}.
 */
public final class PointInTime implements AutoCloseable {
  private final StoreTable table;
  private final Snapshot snapshot;
  private final ReadOptions read;
  private boolean closed;

  /** Takes over {@code snapshot} and a reference to {@code table} the caller has taken. */
  PointInTime(StoreTable table, Snapshot snapshot) {
    this.table = table;
    this.snapshot = snapshot;
    this.read = new ReadOptions().setSnapshot(snapshot);
  }

  /** What the keys held then; null for a key absent then, in request order. */
  public List<byte[]> multiGet(List<byte[]> keys) {
    if (closed) {
      throw new IllegalStateException("point in time already closed");
    }
    if (keys.isEmpty()) {
      return new ArrayList<>(); // RocksJava asserts a non-empty key list
    }
    return table.readMany(read, keys);
  }

  @Override
  public void close() {
    if (!closed) {
      closed = true;
      read.close();
      table.db().releaseSnapshot(snapshot);
      table.releaseReference();
    }
  }
}
