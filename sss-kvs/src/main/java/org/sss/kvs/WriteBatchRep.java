package org.sss.kvs;

import org.sss.core.transport.Varints;

/**
 * RocksDB's serialized {@code WriteBatch} made from a block of packed pairs, so that a batch
 * written through memtables crosses into RocksDB in one JNI call ({@code new WriteBatch(rep)})
 * instead of one {@code put} per pair.
 *
 * <pre>
 *   | sequence fixed64 LE (0) | count fixed32 LE | record ... |
 *   record = | 0x05 kTypeColumnFamilyValue | cf id varint32 | key len varint32 | key | value len varint32 | value |
 * </pre>
 * A packed pair is exactly the tail of a record, so each is copied with its two-byte prefix
 * (more for column family ids from 128).
 */
final class WriteBatchRep {
  /** Bytes before the first record: sequence and count. */
  private static final int HEADER = 12;
  /** The record type of a put into a column family. */
  private static final byte TYPE_COLUMN_FAMILY_VALUE = 0x05;

  private WriteBatchRep() {}

  /** The serialized batch of the {@code count} packed pairs in {@code block[0, length)}, for column family {@code cfId}. */
  static byte[] of(byte[] block, int length, int count, int cfId) {
    int prefix = 1 + Varints.size(cfId);
    byte[] rep = new byte[HEADER + length + prefix * count];
    rep[8] = (byte) count;
    rep[9] = (byte) (count >>> 8);
    rep[10] = (byte) (count >>> 16);
    rep[11] = (byte) (count >>> 24);
    int out = HEADER;
    int at = 0;
    for (int i = 0; i < count; i++) {
      int keyLength = Varints.get(block, at);
      int valueAt = Varints.skip(block, at) + keyLength;
      int end = Varints.skip(block, valueAt) + Varints.get(block, valueAt);
      rep[out++] = TYPE_COLUMN_FAMILY_VALUE;
      out = Varints.put(rep, out, cfId);
      System.arraycopy(block, at, rep, out, end - at);
      out += end - at;
      at = end;
    }
    if (at != length || out != rep.length) {
      throw new IllegalStateException("a block of " + length + " bytes does not hold exactly " + count + " pairs");
    }
    return rep;
  }
}
