package org.sss.core.keys;

import io.netty.buffer.ByteBuf;
import java.util.Arrays;

/**
 * The layout of a key as a node stores it: the one place that writes, measures or takes apart
 * a stored key.
 *
 * <pre>
 *   | partition u16 | encoded key |                                   single-valued tables
 *   | partition u16 | encoded key | source u16 | sequence u64 |        multi-valued tables
 *   |<- PREFIX ---->|                |<------ UNIQUIFIER ----->|
 * </pre>
 *
 * The partition prefix makes a partition one contiguous key range, so a task scans exactly its
 * own. The uniquifier (who wrote the value, and that writer's sequence number) lets a key hold
 * many values; since key encodings are prefix-free ({@link KeyCodec}), all values of one key are
 * adjacent in a sorted scan, which is what a reduce reads. Shuffled values carry the sending
 * node as source; values a client puts carry 0xFFFF and a sequence the owning node assigns.
 * Scans hand out keys without the partition prefix ("scanned keys").
 *
 * <p>The {@link ByteBuf} forms serve the wire paths (a stored key inside a pair block); the
 * store itself ({@code sss-kvs}) uses only the {@code byte[]} forms and compiles without Netty.
 */
public final class StoredKeys {
  /** Bytes of the partition prefix on every stored key. */
  public static final int PREFIX_BYTES = 2;
  /** Bytes of the uniquifier at the end of every stored key of a multi-valued table. */
  public static final int UNIQUIFIER_BYTES = 10;

  private StoredKeys() {}

  /** The key as a node stores it in a single-valued table: the partition, then the encoded key. */
  public static byte[] storedKey(int partition, byte[] key) {
    byte[] out = new byte[PREFIX_BYTES + key.length];
    writePrefix(out, 0, partition);
    System.arraycopy(key, 0, out, PREFIX_BYTES, key.length);
    return out;
  }

  /** Writes the partition prefix at {@code at}. */
  public static void writePrefix(byte[] target, int at, int partition) {
    target[at] = (byte) (partition >>> 8);
    target[at + 1] = (byte) partition;
  }

  /** The partition of a stored key. */
  public static int partitionOf(byte[] storedKey) {
    return ((storedKey[0] & 0xFF) << 8) | (storedKey[1] & 0xFF);
  }

  /** The partition of a stored key of {@code length} bytes, or -1 when it is too short to name one. */
  public static int partitionOrMinusOne(byte[] storedKey) {
    return storedKey.length < PREFIX_BYTES ? -1 : partitionOf(storedKey);
  }

  /** Length of the stored key of an encoded key of {@code keyLength} bytes. */
  public static int storedLength(int keyLength, boolean multiValued) {
    return PREFIX_BYTES + keyLength + suffixBytes(multiValued);
  }

  /** Length of the encoded key inside a stored key of {@code storedLength} bytes. */
  public static int keyLength(int storedLength, boolean multiValued) {
    return storedLength - PREFIX_BYTES - suffixBytes(multiValued);
  }

  /** Bytes after the encoded key: the uniquifier of a multi-valued table, else none. */
  public static int suffixBytes(boolean multiValued) {
    return multiValued ? UNIQUIFIER_BYTES : 0;
  }

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

  /** Whether {@code stored} is one value of the multi-valued key {@code storedKey} (it adds only a uniquifier). */
  public static boolean isValueOf(byte[] stored, byte[] storedKey) {
    return stored.length == storedKey.length + UNIQUIFIER_BYTES
        && Arrays.equals(stored, 0, storedKey.length, storedKey, 0, storedKey.length);
  }

  /** The encoded key of a stored key (no partition prefix, no uniquifier). */
  public static byte[] encodedKey(byte[] storedKey, boolean multiValued) {
    return Arrays.copyOfRange(storedKey, PREFIX_BYTES, storedKey.length - suffixBytes(multiValued));
  }

  /** Whether the stored key {@code stored} holds the encoded key {@code key}. */
  public static boolean holdsKey(byte[] stored, byte[] key, boolean multiValued) {
    int length = keyLength(stored.length, multiValued);
    return length == key.length && Arrays.equals(stored, PREFIX_BYTES, PREFIX_BYTES + length, key, 0, length);
  }

  /** A stored key as scans return it: without the partition prefix. */
  public static byte[] scannedKey(byte[] storedKey) {
    return Arrays.copyOfRange(storedKey, PREFIX_BYTES, storedKey.length);
  }

  /** A key as scans return it (partition prefix stripped) without the uniquifier. */
  public static byte[] withoutUniquifier(byte[] scannedKey, boolean multiValued) {
    return multiValued ? Arrays.copyOf(scannedKey, scannedKey.length - UNIQUIFIER_BYTES) : scannedKey;
  }

  /** Writes the stored key of {@code key} in {@code partition}, with the uniquifier when multi-valued. */
  public static void writeStored(ByteBuf out, int partition, byte[] key, boolean multiValued, int source, long sequence) {
    out.writeShort(partition);
    out.writeBytes(key);
    if (multiValued) {
      out.writeShort(source);
      out.writeLong(sequence);
    }
  }

  /** The partition of the stored key of {@code length} bytes at {@code in[at]}, or -1 when it is too short to name one. */
  public static int partitionAt(ByteBuf in, int at, int length) {
    return length < PREFIX_BYTES ? -1 : in.getUnsignedShort(at);
  }

  /** Reads a stored key of {@code storedLength} bytes and returns it as scans do (without the partition prefix). */
  public static byte[] readScannedKey(ByteBuf in, int storedLength) {
    in.skipBytes(PREFIX_BYTES);
    byte[] key = new byte[storedLength - PREFIX_BYTES];
    in.readBytes(key);
    return key;
  }
}
