package org.sss.core.transport;

/**
 * Unsigned LEB128 varints of 32-bit lengths, the one encoding of lengths SSS writes: in pair
 * blocks on the wire and in the store's packed batches (RocksDB's write-batch records use the
 * same encoding, so a pair block's lengths are already those of a batch record).
 *
 * <p>These forms work on arrays the store wrote itself ({@code sss-kvs} runs without Netty);
 * the wire's forms, which read untrusted input and check it, are {@link PairBlock#writeVarint}
 * and {@link PairBlock#readVarint}, in the same encoding.
 */
public final class Varints {
  private Varints() {}

  /** Bytes the varint of {@code value} takes. */
  public static int size(int value) {
    int size = 1;
    while ((value & ~0x7F) != 0) {
      size++;
      value >>>= 7;
    }
    return size;
  }

  /** Writes the varint of {@code value} at {@code at}; returns the position after it. */
  public static int put(byte[] target, int at, int value) {
    while ((value & ~0x7F) != 0) {
      target[at++] = (byte) ((value & 0x7F) | 0x80);
      value >>>= 7;
    }
    target[at++] = (byte) value;
    return at;
  }

  /** The varint at {@code at}. */
  public static int get(byte[] source, int at) {
    int value = 0;
    for (int shift = 0; ; shift += 7) {
      byte b = source[at++];
      value |= (b & 0x7F) << shift;
      if (b >= 0) {
        return value;
      }
    }
  }

  /** The position after the varint at {@code at}. */
  public static int skip(byte[] source, int at) {
    while (source[at] < 0) {
      at++;
    }
    return at + 1;
  }
}
