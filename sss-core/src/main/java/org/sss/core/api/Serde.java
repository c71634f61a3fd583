package org.sss.core.api;

import org.sss.core.proto.DataType;

/**
 * How a type travels and rests as bytes. Keys and values have different needs, so a serde has
 * two encodings:
 * <ul>
 *   <li>a <b>key</b> encoding that is order-preserving and prefix-free (compare encodings as
 *       unsigned bytes to compare values; no encoding is a prefix of another) — the store's
 *       sort order and the shuffle's grouping depend on it;
 *   <li>a <b>value</b> encoding that only has to round-trip, as compact as possible.
 * </ul>
 * Implementations must be stateless and have a public no-argument constructor: servers create
 * them by class name.
 */
public interface Serde<T> {
  byte[] encodeKey(T key);

  T decodeKey(byte[] bytes);

  byte[] encodeValue(T value);

  T decodeValue(byte[] bytes);

  /**
   * The type recorded for tables this serde writes, so that tools print them right: a user
   * type's bytes are in an encoding only this serde knows, so they are OPAQUE (printed as hex)
   * unless the serde says they are encoded as one of the built-in types.
   */
  default DataType dataType() {
    return DataType.OPAQUE;
  }
}
