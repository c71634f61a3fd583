package org.sss.client.io;

import java.nio.charset.StandardCharsets;
import java.util.HexFormat;
import java.util.Locale;
import org.sss.client.TableSpec;
import org.sss.core.keys.KeyCodec;
import org.sss.core.keys.KeyType;
import org.sss.core.keys.StoredKeys;
import org.sss.core.proto.DataType;

/**
 * Prints a table's keys and values by its declared types, and never fails on a pair that does
 * not decode (written by an older writer, or by one that ignored the types): that pair prints as
 * raw bytes ({@code 0x} and hex) and is counted, so that data that exists can always be read
 * out, and the reader is told at the end how much of it did not match the table's types.
 */
public final class PairPrinter {
  private final DataType keyType;
  private final DataType valueType;
  private final boolean multiValued;
  private long undecodable;

  public PairPrinter(TableSpec table) {
    this.keyType = table.types().key();
    this.valueType = table.types().value();
    this.multiValued = table.multiValued();
  }

  /** A scanned key (partition prefix stripped; a multi-valued table's uniquifier still on) as text. */
  public String key(byte[] scannedKey) {
    byte[] key = scannedKey;
    try {
      key = StoredKeys.withoutUniquifier(scannedKey, multiValued);
      return KeyType.decodeKey(keyType, key);
    } catch (RuntimeException e) {
      undecodable++;
      return raw(key);
    }
  }

  /**
   * A scanned key as the bytes a dump writes: a string key as its stored bytes (also bytes that
   * are not UTF-8, which a decode would replace), any other as {@link #key}'s text.
   */
  public byte[] keyBytes(byte[] scannedKey) {
    if (keyType == DataType.STRING) {
      byte[] key = scannedKey;
      try {
        key = StoredKeys.withoutUniquifier(scannedKey, multiValued);
        return KeyCodec.decodeBytes(key);
      } catch (RuntimeException e) {
        undecodable++;
        return raw(key).getBytes(StandardCharsets.UTF_8);
      }
    }
    return key(scannedKey).getBytes(StandardCharsets.UTF_8);
  }

  /** A value as text. */
  public String value(byte[] value) {
    try {
      return KeyType.decodeValue(valueType, value);
    } catch (RuntimeException e) {
      undecodable++;
      return raw(value);
    }
  }

  private static String raw(byte[] bytes) {
    return "0x" + HexFormat.of().formatHex(bytes);
  }

  /** Keys and values that did not decode by the table's types so far. */
  public long undecodable() {
    return undecodable;
  }

  /** The closing warning, or null when everything decoded. */
  public String warning(String table) {
    return undecodable == 0 ? null : "warning: " + undecodable + " key(s) or value(s) of table '" + table
        + "' do not decode as key=" + name(keyType) + " value=" + name(valueType) + "; printed as raw bytes (0x...)";
  }

  private static String name(DataType t) {
    return t.name().toLowerCase(Locale.ROOT);
  }
}
