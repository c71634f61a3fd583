package org.sss.core.transport;

import io.netty.buffer.ByteBuf;
import io.netty.handler.codec.CorruptedFrameException;

/**
 * Packs pairs into one buffer so that bulk data pays no per-pair protobuf cost.
 *
 * <pre>
 *   | key length varint | key bytes | value length varint | value bytes | ... repeated
 * </pre>
 *
 * Varints are unsigned LEB128 (the protobuf varint), at most 5 bytes for a 32-bit length.
 */
public final class PairBlock {
  private PairBlock() {}

  /** Appends one pair. */
  public static void write(ByteBuf out, byte[] key, byte[] value) {
    write(out, key, 0, key.length, value, 0, value.length);
  }

  /** Appends one pair given as array slices. */
  public static void write(ByteBuf out, byte[] key, int keyOff, int keyLen,
                           byte[] value, int valueOff, int valueLen) {
    writeVarint(out, keyLen);
    out.writeBytes(key, keyOff, keyLen);
    writeVarint(out, valueLen);
    out.writeBytes(value, valueOff, valueLen);
  }

  /** Bytes one pair takes in a block. */
  public static int encodedSize(int keyLength, int valueLength) {
    return Varints.size(keyLength) + keyLength + Varints.size(valueLength) + valueLength;
  }

  public static void writeVarint(ByteBuf out, int value) {
    while ((value & ~0x7F) != 0) {
      out.writeByte((value & 0x7F) | 0x80);
      value >>>= 7;
    }
    out.writeByte(value);
  }

  /** Reads a length of untrusted input: at most 5 bytes, and at most {@link Integer#MAX_VALUE}. */
  public static int readVarint(ByteBuf in) {
    int result = 0;
    for (int shift = 0; shift < 35; shift += 7) {
      if (!in.isReadable()) {
        throw new CorruptedFrameException("pair block ends inside a length");
      }
      byte b = in.readByte();
      result |= (b & 0x7F) << shift;
      if (b >= 0) {
        // a fifth byte above 0x07 sets bits 31 and up: negative, or bits the shift would drop
        if (shift == 28 && b > 0x07) {
          throw new CorruptedFrameException("length in pair block exceeds " + Integer.MAX_VALUE);
        }
        return result;
      }
    }
    throw new CorruptedFrameException("length varint longer than 5 bytes");
  }

  /**
   * Reads the length of the next field and checks it against the bytes left in the block; the
   * field itself is left unread.
   */
  public static int readLength(ByteBuf in) {
    int length = readVarint(in);
    if (length > in.readableBytes()) {
      throw new CorruptedFrameException("field of " + length + " bytes but only "
          + in.readableBytes() + " left in the pair block");
    }
    return length;
  }

  /** Reads one length-prefixed field as a new array; the length is checked against the block. */
  public static byte[] readField(ByteBuf in) {
    int length = readLength(in);
    byte[] out = new byte[length];
    in.readBytes(out);
    return out;
  }

  /** Calls {@code visitor} for every pair in the block, copying each key and value. */
  public static int forEach(ByteBuf in, PairVisitor visitor) {
    int n = 0;
    while (in.isReadable()) {
      byte[] key = readField(in);
      byte[] value = readField(in);
      visitor.accept(key, value);
      n++;
    }
    return n;
  }

  /** Receives pairs from a block. */
  @FunctionalInterface
  public interface PairVisitor {
    void accept(byte[] key, byte[] value);
  }
}
