package org.sss.kvs;

import java.util.Arrays;

/**
 * The last key a lane of sorted pairs took, in a buffer reused as keys grow: what the lane's
 * next key must be greater than, for the lane's file to stay in key order (no copy per pair
 * beyond the key's own bytes).
 */
final class LastKey {
  private byte[] key;
  private int length;

  /** Whether the lane has taken a key. */
  boolean isSet() {
    return key != null;
  }

  /** Whether {@code source[at, at + length)} may follow: the lane has no key yet, or it is greater. */
  boolean follows(byte[] source, int at, int keyLength) {
    return key == null || Arrays.compareUnsigned(source, at, at + keyLength, key, 0, length) > 0;
  }

  void set(byte[] source, int at, int keyLength) {
    if (key == null || key.length < keyLength) {
      key = new byte[Math.max(keyLength, 32)];
    }
    System.arraycopy(source, at, key, 0, keyLength);
    length = keyLength;
  }

  /** The key, copied to its length. */
  byte[] copy() {
    return Arrays.copyOf(key, length);
  }
}
