package org.sss.core.keys;

import java.util.Arrays;
import org.sss.core.cluster.PartitionMap;

/**
 * The layout of a key as a node stores it.
 *
 * <pre>
 *   | partition u16 | encoded key |                                   single-valued tables
 *   | partition u16 | encoded key | source u16 | sequence u64 |        multi-valued tables
 * </pre>
 *
 * The partition prefix makes a partition one contiguous key range, so a task scans exactly its
 * own. The uniquifier (who wrote the value, and that writer's sequence number) lets a key hold
 * many values; since key encodings are prefix-free ({@link KeyCodec}), all values of one key are
 * adjacent in a sorted scan, which is what a reduce reads. Shuffled values carry the sending
 * node as source; values a client puts carry 0xFFFF and a sequence the owning node assigns.
 */
public final class StoredKeys {
  /** Bytes of the uniquifier at the end of every stored key of a multi-valued table. */
  public static final int UNIQUIFIER_BYTES = 10;

  private StoredKeys() {}

  /** {@code storedKey} followed by the uniquifier {@code source, sequence}. */
  public static byte[] withUniquifier(byte[] storedKey, int source, long sequence) {
    byte[] out = Arrays.copyOf(storedKey, storedKey.length + UNIQUIFIER_BYTES);
    writeUniquifier(out, storedKey.length, source, sequence);
    return out;
  }

  /** Writes the uniquifier {@code source, sequence} at {@code at}. */
  public static void writeUniquifier(byte[] target, int at, int source, long sequence) {
    target[at] = (byte) (source >>> 8);
    target[at + 1] = (byte) source;
    for (int i = 7; i >= 0; i--) {
      target[at + 2 + i] = (byte) sequence;
      sequence >>>= 8;
    }
  }

  /** Bytes after the encoded key: the uniquifier of a multi-valued table, else none. */
  public static int suffixBytes(boolean multiValued) {
    return multiValued ? UNIQUIFIER_BYTES : 0;
  }

  /** The encoded key of a stored key (no partition prefix, no uniquifier). */
  public static byte[] encodedKey(byte[] storedKey, boolean multiValued) {
    return Arrays.copyOfRange(storedKey, PartitionMap.PREFIX_BYTES, storedKey.length - suffixBytes(multiValued));
  }

  /** A key as scans return it (partition prefix stripped) without the uniquifier. */
  public static byte[] withoutUniquifier(byte[] scannedKey, boolean multiValued) {
    return multiValued ? Arrays.copyOf(scannedKey, scannedKey.length - UNIQUIFIER_BYTES) : scannedKey;
  }
}
