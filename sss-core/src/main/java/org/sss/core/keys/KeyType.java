package org.sss.core.keys;

import java.nio.charset.CharacterCodingException;
import java.nio.charset.CodingErrorAction;
import java.nio.charset.StandardCharsets;
import java.nio.ByteBuffer;
import java.util.HexFormat;
import java.util.Locale;
import org.sss.core.api.Serdes;
import org.sss.core.proto.DataType;

/**
 * Turns the text a user types or reads (command line, dumps) into stored bytes and back, for
 * each {@link DataType}. Keys use {@link KeyCodec}'s order-preserving encodings; values are
 * stored plainly (a long value as its 8 encoded bytes, a string as UTF-8, bytes as given).
 */
public final class KeyType {
  private KeyType() {}

  /** Encodes a key given as text. */
  public static byte[] encodeKey(DataType type, String text) {
    return switch (type) {
      case LONG -> KeyCodec.encodeLong(parseLong(text));
      case STRING -> KeyCodec.encodeString(text);
      case DOUBLE -> Serdes.DOUBLE.encodeKey(parseDouble(text));
      case OPAQUE -> parseOpaque(text);
      case BYTES, UNRECOGNIZED -> KeyCodec.encodeBytes(bytesOf(text));
    };
  }

  /** Decodes a stored key into text. */
  public static String decodeKey(DataType type, byte[] key) {
    return switch (type) {
      case LONG -> Long.toString(KeyCodec.decodeLong(key));
      case STRING -> KeyCodec.decodeString(key);
      case DOUBLE -> Double.toString(Serdes.DOUBLE.decodeKey(key));
      case OPAQUE -> hex(key);
      case BYTES, UNRECOGNIZED -> printable(KeyCodec.decodeBytes(key));
    };
  }

  /** Encodes a value given as text. */
  public static byte[] encodeValue(DataType type, String text) {
    return switch (type) {
      case LONG -> KeyCodec.encodeLong(parseLong(text));
      case DOUBLE -> Serdes.DOUBLE.encodeValue(parseDouble(text));
      case OPAQUE -> parseOpaque(text);
      case BYTES, UNRECOGNIZED -> bytesOf(text);
      case STRING -> text.getBytes(StandardCharsets.UTF_8);
    };
  }

  /** Decodes a stored value into text. */
  public static String decodeValue(DataType type, byte[] value) {
    return switch (type) {
      case LONG -> Long.toString(KeyCodec.decodeLong(value));
      case DOUBLE -> Double.toString(Serdes.DOUBLE.decodeValue(value));
      case STRING -> new String(value, StandardCharsets.UTF_8);
      case OPAQUE -> hex(value);
      case BYTES, UNRECOGNIZED -> printable(value);
    };
  }

  /** Parses a data type name as users write it (long, string, bytes). */
  public static DataType parse(String name) {
    return switch (name.toLowerCase(Locale.ROOT)) {
      case "long" -> DataType.LONG;
      case "string", "text" -> DataType.STRING;
      case "bytes" -> DataType.BYTES;
      case "double" -> DataType.DOUBLE;
      case "opaque" -> DataType.OPAQUE;
      default -> throw new IllegalArgumentException(
          "unknown data type '" + name + "' (expected long, double, string, bytes or opaque)");
    };
  }

  private static double parseDouble(String text) {
    try {
      return Double.parseDouble(text.trim());
    } catch (NumberFormatException e) {
      throw new IllegalArgumentException("not a double: '" + text + "'");
    }
  }

  /** Opaque bytes are typed as they print: {@code 0x} and hex. */
  private static byte[] parseOpaque(String text) {
    try {
      if (!text.startsWith("0x")) {
        throw new IllegalArgumentException("no 0x");
      }
      return HexFormat.of().parseHex(text.substring(2));
    } catch (IllegalArgumentException e) {
      throw new IllegalArgumentException("not opaque bytes in hex (0x...): '" + text + "'");
    }
  }

  /** Bytes of a bytes or opaque key or value, printed as {@link #decodeValue} prints them. */
  public static String printBytes(DataType type, byte[] bytes) {
    return type == DataType.OPAQUE ? hex(bytes) : printable(bytes);
  }

  private static String hex(byte[] bytes) {
    return "0x" + HexFormat.of().formatHex(bytes);
  }

  private static long parseLong(String text) {
    try {
      return Long.parseLong(text.trim());
    } catch (NumberFormatException e) {
      throw new IllegalArgumentException("not a long: '" + text + "'");
    }
  }

  /**
   * Bytes typed as text: {@code 0x} and hex are those bytes (what {@link #printable} prints for
   * bytes that are not text, or text that itself starts with {@code 0x}); anything else is its
   * UTF-8. So every printed bytes key or value types back to the same bytes.
   */
  private static byte[] bytesOf(String text) {
    if (text.startsWith("0x")) {
      try {
        return HexFormat.of().parseHex(text.substring(2));
      } catch (IllegalArgumentException notHex) {
        throw new IllegalArgumentException("'" + text + "' starts with 0x but is not hex: bytes that begin with"
            + " the text 0x are typed in hex too (0x3078...)");
      }
    }
    return text.getBytes(StandardCharsets.UTF_8);
  }

  /**
   * Valid UTF-8 prints as text; anything else as {@code 0x} and hex, and so does text that
   * itself starts with {@code 0x}, which would otherwise read as those hex bytes.
   */
  private static String printable(byte[] bytes) {
    if (bytes.length >= 2 && bytes[0] == '0' && bytes[1] == 'x') {
      return "0x" + HexFormat.of().formatHex(bytes);
    }
    try {
      return StandardCharsets.UTF_8.newDecoder()
          .onMalformedInput(CodingErrorAction.REPORT)
          .onUnmappableCharacter(CodingErrorAction.REPORT)
          .decode(ByteBuffer.wrap(bytes))
          .toString();
    } catch (CharacterCodingException e) {
      return "0x" + HexFormat.of().formatHex(bytes);
    }
  }
}
