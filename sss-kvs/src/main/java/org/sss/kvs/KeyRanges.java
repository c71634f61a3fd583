package org.sss.kvs;

import java.util.Arrays;
import org.sss.core.keys.StoredKeys;

/** Stored-key ranges: a partition, or the keys of a partition that start with a prefix. */
public final class KeyRanges {
  private KeyRanges() {}

  /** {@code [lower, upper)} covering every stored key of {@code partition} that starts with {@code keyPrefix}. */
  public static byte[][] partition(int partition, byte[] keyPrefix) {
    byte[] lower = StoredKeys.storedKey(partition, keyPrefix);
    return new byte[][] {lower, successor(lower)};
  }

  /**
   * The smallest key greater than every key that starts with {@code prefix}; null when there is
   * none (the prefix is all 0xFF).
   */
  public static byte[] successor(byte[] prefix) {
    int i = prefix.length - 1;
    while (i >= 0 && prefix[i] == (byte) 0xFF) {
      i--;
    }
    if (i < 0) {
      return null;
    }
    byte[] out = Arrays.copyOf(prefix, i + 1);
    out[i]++;
    return out;
  }
}
