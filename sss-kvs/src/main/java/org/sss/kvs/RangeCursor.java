package org.sss.kvs;

import java.nio.ByteBuffer;
import org.rocksdb.ReadOptions;
import org.rocksdb.RocksDBException;
import org.rocksdb.RocksIterator;
import org.rocksdb.Slice;
import org.rocksdb.Snapshot;

/**
 * A cursor over one key range of a table in RocksDB, as of a snapshot. It takes no reference to
 * the table of its own: the scan that opens it ({@link StoreTable#scanRanges}) holds one for all
 * its ranges, so the native handle outlives the iterator even when the table is dropped meanwhile.
 */
final class RangeCursor implements RangeReader {
  private final StoreTable table;
  private final ReadOptions readOptions;
  private final Slice upperSlice;
  private final RocksIterator it;

  RangeCursor(StoreTable table, Snapshot snapshot, byte[] lower, byte[] upper, long readAhead) {
    this.table = table;
    readOptions = new ReadOptions().setSnapshot(snapshot).setFillCache(false).setReadaheadSize(readAhead);
    upperSlice = upper == null ? null : new Slice(upper);
    if (upperSlice != null) {
      readOptions.setIterateUpperBound(upperSlice);
    }
    it = table.db().newIterator(table.handle(), readOptions);
    if (lower == null) {
      it.seekToFirst();
    } else {
      it.seek(lower);
    }
  }

  @Override
  public boolean valid() {
    return it.isValid();
  }

  @Override
  public byte[] key() {
    return it.key();
  }

  @Override
  public byte[] value() {
    return it.value();
  }

  @Override
  public int key(ByteBuffer target) {
    return it.key(target);
  }

  @Override
  public int value(ByteBuffer target) {
    return it.value(target);
  }

  @Override
  public void next() {
    it.next();
  }

  @Override
  public void checkStatus() {
    try {
      it.status();
    } catch (RocksDBException e) {
      throw table.storageError("scan", e);
    }
  }

  @Override
  public void close() {
    it.close();
    readOptions.close();
    if (upperSlice != null) {
      upperSlice.close();
    }
  }
}
