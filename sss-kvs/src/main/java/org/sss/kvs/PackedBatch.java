package org.sss.kvs;

import java.util.Arrays;

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
  private static final int HEADER = 12;
  private static final byte TYPE_COLUMN_FAMILY_VALUE = 0x05;

  private final StoreTable table;
  private final int cfId;
  private byte[] rep;
  private int size = HEADER;
  private int count;

  PackedBatch(StoreTable table, int cfId, int capacity) {
    this.table = table;
    this.cfId = cfId;
    this.rep = new byte[Math.max(HEADER + 64, capacity)];
  }

  private void ensure(int more) {
    if (size + more > rep.length) {
      rep = Arrays.copyOf(rep, Math.max(rep.length * 2, size + more));
    }
  }

  private void varint(int v) {
    while ((v & ~0x7F) != 0) {
      rep[size++] = (byte) ((v & 0x7F) | 0x80);
      v >>>= 7;
    }
    rep[size++] = (byte) v;
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
   * Adds a pair whose stored key is {@code | partition u16 | key | suffix |} without building
   * the stored key first (the shuffle's local writes).
   */
  public void put(int partition, byte[] key, byte[] suffix, int suffixLength, byte[] value) {
    int keyLength = 2 + key.length + suffixLength;
    recordStart(keyLength + value.length + 10);
    varint(keyLength);
    rep[size++] = (byte) (partition >>> 8);
    rep[size++] = (byte) partition;
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

  /** Writes the batch atomically in one call, then empties it for reuse. */
  public void commit() {
    if (count == 0) {
      return;
    }
    rep[8] = (byte) count;
    rep[9] = (byte) (count >>> 8);
    rep[10] = (byte) (count >>> 16);
    rep[11] = (byte) (count >>> 24);
    table.writeSerialized(Arrays.copyOf(rep, size));
    Arrays.fill(rep, 0, HEADER, (byte) 0);
    size = HEADER;
    count = 0;
  }
}
