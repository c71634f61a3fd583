package org.sss.core.keys;

import java.nio.charset.StandardCharsets;
import java.util.Arrays;

/**
 * Order-preserving, prefix-free key encodings for the built-in key types.
 *
 * <h2>Why</h2>
 * A node stores a table as one sorted RocksDB keyspace. Two properties of the encoding make
 * that keyspace useful:
 * <ul>
 *   <li><b>Order-preserving</b>: comparing encoded keys as unsigned bytes gives the natural
 *       order of the values, so one forward scan visits keys in order (sort, range scans).
 *   <li><b>Prefix-free</b>: no encoded key is a prefix of another, so anything appended after
 *       a key (the shuffle's uniquifier) cannot make two different keys collide or interleave:
 *       all stored entries of one key form one contiguous run.
 * </ul>
 *
 * <h2>Layouts</h2>
 * <pre>
 *   long   : 8 bytes big-endian with the sign bit flipped   (fixed width, hence prefix-free)
 *   string : UTF-8 bytes, escaped, then the terminator 00 01
 *   bytes  : the bytes, escaped, then the terminator 00 01
 *   escape : 00 becomes 00 FF; every other byte is itself
 * </pre>
 * The terminator {@code 00 01} sorts below every escaped byte ({@code 00 FF} and
 * {@code 01..FF}), so a shorter key sorts before its extensions, as in Java's own
 * {@code String.compareTo}. Strings compare by UTF-8 bytes, i.e. by code point, which differs
 * from {@code String.compareTo} only for characters outside the Basic Multilingual Plane.
 */
public final class KeyCodec {
  private static final byte ESCAPE = 0x00;
  private static final byte ESCAPED_ZERO = (byte) 0xFF;
  private static final byte TERMINATOR = 0x01;

  private KeyCodec() {}

  /** Encodes a long into 8 bytes whose unsigned order is the signed order of the values. */
  public static byte[] encodeLong(long value) {
    byte[] out = new byte[8];
    putLong(out, 0, value);
    return out;
  }

  /** Writes the 8-byte encoding of {@code value} at {@code offset}. */
  public static void putLong(byte[] out, int offset, long value) {
    long flipped = value ^ Long.MIN_VALUE;
    for (int i = 7; i >= 0; i--) {
      out[offset + i] = (byte) flipped;
      flipped >>>= 8;
    }
  }

  /** Decodes 8 bytes written by {@link #putLong}. */
  public static long decodeLong(byte[] in, int offset) {
    long v = 0;
    for (int i = 0; i < 8; i++) {
      v = (v << 8) | (in[offset + i] & 0xFF);
    }
    return v ^ Long.MIN_VALUE;
  }

  /** Decodes a whole 8-byte array. */
  public static long decodeLong(byte[] in) {
    if (in.length != 8) {
      throw new IllegalArgumentException("a long key is 8 bytes, got " + in.length);
    }
    return decodeLong(in, 0);
  }

  /** Encodes a string as escaped UTF-8 with a terminator. */
  public static byte[] encodeString(String value) {
    return encodeBytes(value.getBytes(StandardCharsets.UTF_8));
  }

  /** Decodes a whole encoded string. */
  public static String decodeString(byte[] in) {
    return new String(decodeBytes(in), StandardCharsets.UTF_8);
  }

  /** Encodes arbitrary bytes, escaped, with a terminator. */
  public static byte[] encodeBytes(byte[] value) {
    int zeros = 0;
    for (byte b : value) {
      if (b == 0) {
        zeros++;
      }
    }
    byte[] out = new byte[value.length + zeros + 2];
    int o = 0;
    for (byte b : value) {
      out[o++] = b;
      if (b == ESCAPE) {
        out[o++] = ESCAPED_ZERO;
      }
    }
    out[o++] = ESCAPE;
    out[o] = TERMINATOR;
    return out;
  }

  /** Decodes a whole encoded byte array. */
  public static byte[] decodeBytes(byte[] in) {
    int end = terminatedLength(in, 0, in.length);
    if (end != in.length) {
      throw new IllegalArgumentException("trailing bytes after an encoded key");
    }
    byte[] out = new byte[in.length];
    int o = 0;
    for (int i = 0; i < in.length - 2; i++) {
      out[o++] = in[i];
      if (in[i] == ESCAPE) {
        i++;
      }
    }
    return Arrays.copyOf(out, o);
  }

  /**
   * Returns the length of the escaped key that starts at {@code offset}, terminator included.
   *
   * @throws IllegalArgumentException when the bytes hold no valid terminated key
   */
  public static int terminatedLength(byte[] in, int offset, int limit) {
    int i = offset;
    while (i < limit) {
      if (in[i] == ESCAPE) {
        if (i + 1 >= limit) {
          break;
        }
        byte next = in[i + 1];
        if (next == TERMINATOR) {
          return i + 2 - offset;
        }
        if (next != ESCAPED_ZERO) {
          throw new IllegalArgumentException("bad escape 00 " + String.format("%02x", next));
        }
        i += 2;
      } else {
        i++;
      }
    }
    throw new IllegalArgumentException("encoded key has no terminator");
  }

  /** Compares two byte arrays as unsigned bytes, the order RocksDB's default comparator uses. */
  public static int compare(byte[] a, byte[] b) {
    return Arrays.compareUnsigned(a, b);
  }
}
