package org.sss.server.store;

import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.atomic.AtomicLong;
import org.sss.core.keys.StoredKeys;
import org.sss.kvs.KeyRanges;
import org.sss.core.proto.ErrorCode;
import org.sss.kvs.StoreCursor;
import org.sss.kvs.StoreException;
import org.sss.kvs.StoreTable;

/**
 * Client reads and writes of a multi-valued table, whose stored keys end in a uniquifier
 * ({@link StoredKeys}): a put adds a value (the node gives it a uniquifier), a get returns
 * every value of the key, a delete removes them all. Without this a client's key would be
 * stored without the suffix every reader of the table expects.
 */
final class MultiValued {
  /** Source of client-written values: above every node index. */
  static final int CLIENT_SOURCE = 0xFFFF;
  /**
   * Sequences start from the clock at each start (a million per millisecond), so values
   * written after a restart never reuse a uniquifier of the values written before it.
   */
  private final AtomicLong sequence = new AtomicLong(System.currentTimeMillis() << 20);

  /** The stored key of a new value of {@code storedKey}. */
  byte[] withUniquifier(byte[] storedKey) {
    return StoredKeys.withUniquifier(storedKey, CLIENT_SOURCE, sequence.getAndIncrement());
  }

  /**
   * Every value of {@code storedKey} (without uniquifier), in stored order; refused when they
   * hold more than {@code budget} bytes, which one answer cannot carry.
   */
  static List<byte[]> values(StoreTable t, byte[] storedKey, long budget) {
    List<byte[]> out = new ArrayList<>();
    long bytes = 0;
    try (StoreCursor c = t.scan(storedKey, KeyRanges.successor(storedKey))) {
      for (; c.valid(); c.next()) {
        if (StoredKeys.isValueOf(c.key(), storedKey)) {
          byte[] v = c.value();
          bytes += v.length + 8;
          if (bytes > budget) {
            throw new StoreException(ErrorCode.VALUE_TOO_LARGE, "the key's values in table '" + t.name()
                + "' hold more than one answer may carry (" + budget + " bytes): read them with a scan of the key");
          }
          out.add(v);
        }
      }
    }
    return out;
  }

  /** The stored keys of every value of the given keys (without uniquifier). */
  static List<byte[]> storedKeys(StoreTable t, List<byte[]> storedKeys) {
    List<byte[]> out = new ArrayList<>();
    for (byte[] k : storedKeys) {
      try (StoreCursor c = t.scan(k, KeyRanges.successor(k))) {
        for (; c.valid(); c.next()) {
          byte[] stored = c.key();
          if (StoredKeys.isValueOf(stored, k)) {
            out.add(stored);
          }
        }
      }
    }
    return out;
  }
}
