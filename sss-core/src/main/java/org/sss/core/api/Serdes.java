package org.sss.core.api;

import java.nio.ByteBuffer;
import java.nio.charset.StandardCharsets;
import org.sss.core.keys.KeyCodec;
import org.sss.core.proto.DataType;

/**
 * The built-in serdes. Keys use {@link KeyCodec}'s order-preserving encodings; values are
 * plain (UTF-8 text, 8-byte longs, raw bytes), matching what {@code sss load} writes.
 */
public final class Serdes {
  public static final Serde<Long> LONG = new LongSerde();
  public static final Serde<Integer> INT = new IntSerde();
  public static final Serde<Double> DOUBLE = new DoubleSerde();
  public static final Serde<String> STRING = new StringSerde();
  public static final Serde<byte[]> BYTES = new BytesSerde();
  /** A string table's text as its bytes, undecoded ({@link StringBytesSerde}). */
  public static final Serde<byte[]> STRING_BYTES = new StringBytesSerde();

  private Serdes() {}

  /** Signed 64-bit integers. */
  public static final class LongSerde implements Serde<Long> {
    @Override
    public byte[] encodeKey(Long key) {
      return KeyCodec.encodeLong(key);
    }

    @Override
    public Long decodeKey(byte[] bytes) {
      return KeyCodec.decodeLong(bytes);
    }

    @Override
    public byte[] encodeValue(Long value) {
      return KeyCodec.encodeLong(value);
    }

    @Override
    public Long decodeValue(byte[] bytes) {
      return KeyCodec.decodeLong(bytes);
    }

    @Override
    public DataType dataType() {
      return DataType.LONG;
    }
  }

  /** Signed 32-bit integers (stored as longs, so tables of them print as longs). */
  public static final class IntSerde implements Serde<Integer> {
    @Override
    public byte[] encodeKey(Integer key) {
      return KeyCodec.encodeLong(key);
    }

    @Override
    public Integer decodeKey(byte[] bytes) {
      return Math.toIntExact(KeyCodec.decodeLong(bytes));
    }

    @Override
    public byte[] encodeValue(Integer value) {
      return KeyCodec.encodeLong(value);
    }

    @Override
    public Integer decodeValue(byte[] bytes) {
      return Math.toIntExact(KeyCodec.decodeLong(bytes));
    }

    @Override
    public DataType dataType() {
      return DataType.LONG;
    }
  }

  /**
   * Doubles. The key encoding flips the bits so that unsigned byte order is numeric order
   * (negative numbers invert all bits, positive ones only the sign), NaN sorting last.
   */
  public static final class DoubleSerde implements Serde<Double> {
    @Override
    public byte[] encodeKey(Double key) {
      long bits = Double.doubleToLongBits(key);
      bits = bits < 0 ? ~bits : bits | Long.MIN_VALUE;
      return ByteBuffer.allocate(8).putLong(bits).array();
    }

    @Override
    public Double decodeKey(byte[] bytes) {
      long bits = ByteBuffer.wrap(eight(bytes)).getLong();
      bits = bits < 0 ? bits & Long.MAX_VALUE : ~bits;
      return Double.longBitsToDouble(bits);
    }

    @Override
    public byte[] encodeValue(Double value) {
      return ByteBuffer.allocate(8).putDouble(value).array();
    }

    @Override
    public Double decodeValue(byte[] bytes) {
      return ByteBuffer.wrap(eight(bytes)).getDouble();
    }

    /** A double is 8 bytes, as a long is: other bytes are not one (and must not read as one). */
    private static byte[] eight(byte[] bytes) {
      if (bytes.length != 8) {
        throw new IllegalArgumentException("a double is 8 bytes, got " + bytes.length);
      }
      return bytes;
    }

    @Override
    public DataType dataType() {
      return DataType.DOUBLE;
    }
  }

  /** UTF-8 text. */
  public static final class StringSerde implements Serde<String> {
    @Override
    public byte[] encodeKey(String key) {
      return KeyCodec.encodeString(key);
    }

    @Override
    public String decodeKey(byte[] bytes) {
      return KeyCodec.decodeString(bytes);
    }

    @Override
    public byte[] encodeValue(String value) {
      return value.getBytes(StandardCharsets.UTF_8);
    }

    @Override
    public String decodeValue(byte[] bytes) {
      return new String(bytes, StandardCharsets.UTF_8);
    }

    @Override
    public DataType dataType() {
      return DataType.STRING;
    }
  }

  /**
   * Text kept as its stored bytes: a string table's values (or keys) as {@code byte[]}, never
   * decoded. Moving text through it keeps every byte, also of text that is not valid UTF-8,
   * which a decode into {@link String} would replace by U+FFFD.
   */
  public static final class StringBytesSerde implements Serde<byte[]> {
    @Override
    public byte[] encodeKey(byte[] key) {
      return KeyCodec.encodeBytes(key);
    }

    @Override
    public byte[] decodeKey(byte[] bytes) {
      return KeyCodec.decodeBytes(bytes);
    }

    @Override
    public byte[] encodeValue(byte[] value) {
      return value;
    }

    @Override
    public byte[] decodeValue(byte[] bytes) {
      return bytes;
    }

    @Override
    public DataType dataType() {
      return DataType.STRING;
    }
  }

  /** Raw bytes. */
  public static final class BytesSerde implements Serde<byte[]> {
    @Override
    public byte[] encodeKey(byte[] key) {
      return KeyCodec.encodeBytes(key);
    }

    @Override
    public byte[] decodeKey(byte[] bytes) {
      return KeyCodec.decodeBytes(bytes);
    }

    @Override
    public byte[] encodeValue(byte[] value) {
      return value;
    }

    @Override
    public byte[] decodeValue(byte[] bytes) {
      return bytes;
    }

    @Override
    public DataType dataType() {
      return DataType.BYTES;
    }
  }
}
