package org.sss.kvs;

import java.util.Arrays;
import org.sss.core.keys.StoredKeys;
import org.sss.core.transport.Varints;

/**
 * A write batch assembled in Java and handed to RocksDB in one call.
 *
 * <h2>Why</h2>
 * {@code WriteBatch.put} is a JNI call per pair; for the shuffle's small pairs the crossings
 * cost more than the write itself. RocksDB accepts a batch in its serialized form, so this
 * class writes that form directly into one growing array, and {@link #commit} crosses once.
 *
 * <h2>Layout (RocksDB's {@code WriteBatch} rep)</h2>
 * <pre>
 *   | sequence fixed64 LE (0) | count fixed32 LE | record ... |
 *   record = | 0x05 kTypeColumnFamilyValue | cf id varint32 | key len varint32 | key | value len varint32 | value |
 * </pre>
 * A packed pair ({@code | varint klen | key | varint vlen | value |}, the wire's block format)
 * is exactly the tail of a record, so received blocks are copied with a two-byte prefix per pair.
 * Not thread-safe.
 */
public final class PackedBatch {
  /** Bytes before the first record: sequence and count. */
  static final int HEADER = 12;
  /** The record type of a put into a column family. */
  static final byte TYPE_COLUMN_FAMILY_VALUE = 0x05;

  private final StoreTable table;
  private final int cfId;
  private final int capacity;
  /** Null after a commit handed the array to the table, until the next pair. */
  private byte[] rep;
  private int size = HEADER;
  private int count;

  PackedBatch(StoreTable table, int cfId, int capacity) {
    this.table = table;
    this.cfId = cfId;
    this.capacity = Math.max(HEADER + 64, capacity);
    this.rep = new byte[this.capacity];
  }

  private void ensure(int more) {
    if (rep == null) {
      rep = new byte[Math.max(capacity, size + more)];
    } else if (size + more > rep.length) {
      rep = Arrays.copyOf(rep, Math.max(rep.length * 2, size + more));
    }
  }

  private void varint(int v) {
    size = Varints.put(rep, size, v);
  }

  private void recordStart(int room) {
    ensure(room + 16);
    rep[size++] = TYPE_COLUMN_FAMILY_VALUE;
    varint(cfId);
  }

  /** Adds a pair given as a key and a value. */
  public void put(byte[] key, byte[] value) {
    recordStart(key.length + value.length + 10);
    varint(key.length);
    System.arraycopy(key, 0, rep, size, key.length);
    size += key.length;
    varint(value.length);
    System.arraycopy(value, 0, rep, size, value.length);
    size += value.length;
    count++;
  }

  /**
   * Adds a pair whose stored key is {@code key} in {@code partition} followed by {@code suffix}
   * (a multi-valued table's uniquifier; {@link StoredKeys}), without building the stored key
   * first (the shuffle's local writes).
   */
  public void put(int partition, byte[] key, byte[] suffix, int suffixLength, byte[] value) {
    int keyLength = StoredKeys.PREFIX_BYTES + key.length + suffixLength;
    recordStart(keyLength + value.length + 10);
    varint(keyLength);
    StoredKeys.writePrefix(rep, size, partition);
    size += StoredKeys.PREFIX_BYTES;
    System.arraycopy(key, 0, rep, size, key.length);
    size += key.length;
    System.arraycopy(suffix, 0, rep, size, suffixLength);
    size += suffixLength;
    varint(value.length);
    System.arraycopy(value, 0, rep, size, value.length);
    size += value.length;
    count++;
  }

  /**
   * Adds one pair already in packed form ({@code | varint klen | key | varint vlen | value |})
   * from {@code src[offset, offset + length)}.
   */
  public void putPacked(byte[] src, int offset, int length) {
    recordStart(length);
    System.arraycopy(src, offset, rep, size, length);
    size += length;
    count++;
  }

  /** Reserves room for a packed pair of {@code length} bytes and returns where to copy it. */
  public int reservePacked(int length) {
    recordStart(length);
    int at = size;
    size += length;
    count++;
    return at;
  }

  /** The array {@link #reservePacked} positions refer to (valid until the next add). */
  public byte[] array() {
    return rep;
  }

  public int count() {
    return count;
  }

  /** Bytes of pairs added so far (with their record overhead). */
  public int bytes() {
    return size - HEADER;
  }

  /**
   * Writes the batch atomically in one call, then empties it for reuse. A table that gathers
   * its writes into sorted runs keeps the array itself (no copy); the next pair starts a new one.
   */
  public void commit() {
    if (count == 0) {
      return;
    }
    sealHeader();
    // a gathering table keeps what it is given for as long as the run lives: the array itself
    // when it is nearly full, else a copy cut to size (a half-empty array would hold memory the
    // run's budget counts but no pair uses)
    boolean nearlyFull = rep.length - size <= Math.max(4 << 10, size >>> 3);
    if (table.writeSerialized(nearlyFull ? rep : Arrays.copyOf(rep, size), size) && nearlyFull) {
      rep = null;
    } else {
      Arrays.fill(rep, 0, HEADER, (byte) 0);
    }
    size = HEADER;
    count = 0;
  }

  /**
   * Makes room for {@code pairs} more packed pairs of {@code packedBytes} in all (a received
   * batch), so that they go in without growing the array and fill it: a gathering table then
   * keeps the array itself.
   */
  public void reserveFor(int packedBytes, int pairs) {
    // each record adds its type and the column family id; recordStart wants 16 bytes to spare.
    // A packed pair takes 2 bytes at least: a count beyond that is not believed
    int records = Math.min(pairs, packedBytes / 2);
    int needed = size + packedBytes + (1 + Varints.size(cfId)) * records + 16;
    if (rep == null) {
      rep = new byte[needed];
    } else if (rep.length < needed) {
      rep = Arrays.copyOf(rep, needed);
    }
  }

  /** The batch as a table that gathers sorted runs keeps it; this batch starts a new array. */
  SortedRuns.Batch take() {
    if (count == 0) {
      throw new IllegalStateException("an empty batch");
    }
    sealHeader();
    SortedRuns.Batch b = new SortedRuns.Batch(rep, size);
    rep = null;
    size = HEADER;
    count = 0;
    return b;
  }

  /** The pair count into the header: the batch is then {@code rep[0, size)} as RocksDB reads it. */
  private void sealHeader() {
    rep[8] = (byte) count;
    rep[9] = (byte) (count >>> 8);
    rep[10] = (byte) (count >>> 16);
    rep[11] = (byte) (count >>> 24);
  }
}
