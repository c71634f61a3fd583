package org.sss.kvs;

import java.nio.ByteBuffer;
import java.util.concurrent.locks.Lock;
import org.rocksdb.RocksDBException;
import org.rocksdb.WriteBatch;
import org.sss.core.proto.ErrorCode;

/**
 * An atomic batch of writes to one table ({@link StoreTable#newBatch}). Not thread-safe; one
 * writer fills it. Each call holds the table's lifecycle lock while it uses the handle, so a drop
 * can happen between calls (and the later calls refuse with {@link ErrorCode#NO_SUCH_TABLE}) but
 * never under one.
 */
public final class TableBatch implements AutoCloseable {
  private final StoreTable table;
  private final WriteBatch batch = new WriteBatch();
  private int count;

  TableBatch(StoreTable table) {
    this.table = table;
  }

  public void put(byte[] key, byte[] value) {
    Lock lock = table.use(); // after a drop the native handle may be freed: using it would crash the JVM
    try {
      batch.put(table.handle(), key, value);
      count++;
    } catch (RocksDBException e) {
      throw table.storageError("put", e);
    } finally {
      lock.unlock();
    }
  }

  /** Adds a pair from direct buffers without copying it onto the Java heap. */
  public void put(ByteBuffer key, ByteBuffer value) {
    Lock lock = table.use();
    try {
      batch.put(table.handle(), key, value);
      count++;
    } catch (RocksDBException e) {
      throw table.storageError("put", e);
    } finally {
      lock.unlock();
    }
  }

  public void delete(byte[] key) {
    Lock lock = table.use();
    try {
      batch.delete(table.handle(), key);
      count++;
    } catch (RocksDBException e) {
      throw table.storageError("delete", e);
    } finally {
      lock.unlock();
    }
  }

  /** Deletes every key in {@code [lower, upper)}. */
  public void deleteRange(byte[] lower, byte[] upper) {
    Lock lock = table.use();
    try {
      batch.deleteRange(table.handle(), lower, upper);
      count++;
    } catch (RocksDBException e) {
      throw table.storageError("delete a range", e);
    } finally {
      lock.unlock();
    }
  }

  public int count() {
    return count;
  }

  /**
   * Applies the batch: all of it or, on failure, none of it. Refused once the table is
   * dropped: RocksDB treats a write to a dropped column family as a fatal error that stops
   * every later write on the node.
   */
  public void commit() {
    table.sealRuns(); // earlier writes gathered in runs must not land after this batch
    Lock lock = table.use();
    try {
      table.db().write(table.writeOptions(), batch);
    } catch (RocksDBException e) {
      throw table.storageError("write", e);
    } finally {
      lock.unlock();
    }
  }

  @Override
  public void close() {
    batch.close();
  }
}
