package org.sss.kvs;

import java.util.Arrays;
import org.sss.core.keys.StoredKeys;
import org.sss.core.transport.Varints;

/**
 * The one writer of bulk pairs into a table: the shuffle's local pairs, received shuffle
 * batches, and so a job's outputs and loads. Pairs are kept in the wire's pair-block form
 * ({@code | varint klen | key | varint vlen | value |}, {@code PairBlock}), the form they arrive
 * in, and handed to the table in one call.
 *
 * <h2>Why this form</h2>
 * A table that gathers sorted runs (the data between stages, a job's output until its commit:
 * {@link SortedRuns}) keeps the array as it is, and the run reads its pairs in place: a received
 * batch is copied once, in one piece, from the network buffer into this array, and nothing
 * re-encodes it. Only a table that writes through memtables needs RocksDB's serialized
 * {@code WriteBatch}, which {@link WriteBatchRep} makes from the block at the commit, so that the
 * batch still crosses into RocksDB in one JNI call rather than one per pair.
 * Not thread-safe.
 */
public final class PackedBatch {
  private final StoreTable table;
  private final int capacity;
  /** The writer whose pairs these are ({@link OrderedStreams}), or {@link OrderedStreams#NONE}. */
  private final long stream;
  /** Null until the first pair, and after a commit handed the array to the table until the next. */
  private byte[] rep;
  private int size;
  private int count;

  PackedBatch(StoreTable table, int capacity, long stream) {
    this.table = table;
    this.stream = stream;
    this.capacity = Math.max(64, capacity); // allocated with the first pair: a received block sizes its own
  }

  private void ensure(int more) {
    if (rep == null) {
      rep = new byte[Math.max(capacity, size + more)];
    } else if (size + more > rep.length) {
      rep = Arrays.copyOf(rep, Math.max(rep.length * 2, size + more));
    }
  }

  private void varint(int v) {
    size = Varints.put(rep, size, v);
  }

  /** Adds a pair given as a key and a value. */
  public void put(byte[] key, byte[] value) {
    ensure(key.length + value.length + 10);
    varint(key.length);
    System.arraycopy(key, 0, rep, size, key.length);
    size += key.length;
    varint(value.length);
    System.arraycopy(value, 0, rep, size, value.length);
    size += value.length;
    count++;
  }

  /**
   * Adds a pair whose stored key is {@code key} in {@code partition} followed by {@code suffix}
   * (a multi-valued table's uniquifier; {@link StoredKeys}), without building the stored key
   * first (the shuffle's local writes).
   */
  public void put(int partition, byte[] key, byte[] suffix, int suffixLength, byte[] value) {
    int keyLength = StoredKeys.PREFIX_BYTES + key.length + suffixLength;
    ensure(keyLength + value.length + 10);
    varint(keyLength);
    StoredKeys.writePrefix(rep, size, partition);
    size += StoredKeys.PREFIX_BYTES;
    System.arraycopy(key, 0, rep, size, key.length);
    size += key.length;
    System.arraycopy(suffix, 0, rep, size, suffixLength);
    size += suffixLength;
    varint(value.length);
    System.arraycopy(value, 0, rep, size, value.length);
    size += value.length;
    count++;
  }

  /**
   * Reserves room for a block of {@code pairs} packed pairs, {@code length} bytes in all (a
   * received batch, already checked pair by pair), and returns where in {@link #array} to copy
   * it. When the batch is empty so far, the array is sized to the block exactly, so that a
   * gathering table keeps it as it is.
   */
  public int reserveBlock(int length, int pairs) {
    if (rep == null || count == 0 && rep.length != length) {
      rep = new byte[Math.max(1, length)];
    } else {
      ensure(length);
    }
    int at = size;
    size += length;
    count += pairs;
    return at;
  }

  /** The array {@link #reserveBlock} positions refer to (valid until the next add). */
  public byte[] array() {
    return rep;
  }

  public int count() {
    return count;
  }

  /** Bytes of pairs added so far. */
  public int bytes() {
    return size;
  }

  /**
   * Writes the batch atomically in one call, then empties it for reuse. A table that gathers
   * its writes into sorted runs keeps the array itself when it is nearly full (the next pair
   * starts a new one), else a copy cut to size: a half-empty array would hold memory the run's
   * budget counts but no pair uses.
   */
  public void commit() {
    if (count == 0) {
      return;
    }
    // a gathering table keeps the array: one much larger than its pairs is copied first, unless
    // the table takes a stream's pairs into files (it copies what it gathers of a large array)
    boolean whole = stream != OrderedStreams.NONE && table.keepsStreams() || nearlyFull(rep, size);
    byte[] block = whole ? rep : Arrays.copyOf(rep, size);
    if (table.writePacked(block, size, count, stream) && block == rep) {
      rep = null;
    }
    size = 0;
    count = 0;
  }

  /**
   * The id of writer {@code writer} on node {@code node}, for {@link StoreTable#newPackedBatch(int, long)}:
   * a writer's pairs come in the order it wrote them. Writer 0 names none.
   */
  public static long stream(int node, int writer) {
    return OrderedStreams.id(node, writer);
  }

  /** Whether an array holding {@code size} bytes of pairs is kept as it is (else a copy of its pairs is). */
  static boolean nearlyFull(byte[] array, int size) {
    return array.length - size <= Math.max(4 << 10, size >>> 3);
  }

  /** The batch as a table that gathers sorted runs keeps it; this batch starts a new array. */
  SortedRuns.Batch take() {
    if (count == 0) {
      throw new IllegalStateException("an empty batch");
    }
    SortedRuns.Batch b = new SortedRuns.Batch(rep, size, count);
    rep = null;
    size = 0;
    count = 0;
    return b;
  }
}
