package org.sss.server.execution;

/**
 * Pairs a map task's reader hands to the task thread at once: a table partition's pairs as they
 * are stored (encoded, for the task to decode with the job's serdes), or a text split's lines
 * already as the mapper takes them (offset, line) when their serde is a built-in one (a job's own
 * serde decodes on the task's thread, where its failure is the user's code's).
 *
 * <p>Why lines come decoded: a line went from the read buffer to a line array, to a copy of its
 * own with an 8-byte encoded key beside it, and then into a {@code String} on the task's thread:
 * three copies of every byte of the file, and four small arrays per line. Decoded by the reader,
 * it is copied once, into the {@code String} itself. Chunks are kept small ({@link #MAX_BYTES}):
 * the pairs that wait in the hand-over queues outlive young collections, and every collection
 * copies them (a WordCount of 1 GiB: 1 MiB chunks, four waiting, kept 30 MB alive per collection, 330 ms of
 * pauses in all; 256 KiB chunks, two waiting, with lines decoded: 14-24 MB and 180 ms).
 */
final class InputChunk {
  /** Pairs in a chunk at most. */
  static final int MAX_PAIRS = 2048;
  /** Bytes (keys and values, as read) in a chunk at most, give or take its last pair. */
  static final long MAX_BYTES = 256 << 10;

  final Object[] keys = new Object[MAX_PAIRS];
  final Object[] values = new Object[MAX_PAIRS];
  /** Whether the keys and values are the mapper's objects, not their encodings. */
  final boolean decoded;
  int size;
  private long bytes;

  InputChunk(boolean decoded) {
    this.decoded = decoded;
  }

  /** Adds a pair that took {@code pairBytes} as read; true when the chunk is full. */
  boolean add(Object key, Object value, long pairBytes) {
    keys[size] = key;
    values[size] = value;
    size++;
    bytes += pairBytes;
    return size == MAX_PAIRS || bytes >= MAX_BYTES;
  }
}
