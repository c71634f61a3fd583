package org.sss.client;

import java.util.Collection;
import java.util.List;

/**
 * How to scan a table.
 *
 * @param keyPrefix  only keys whose encoding starts with these bytes (empty: all)
 * @param ordered    true for one global key order (each node merges its partitions, the client
 *                   merges the nodes); false for the fastest order, node chunks as they come
 * @param limit      stop after this many pairs (0: no limit)
 * @param chunkBytes bytes per chunk a node sends
 * @param partitions only the pairs of these partitions, ascending (empty: every partition); for
 *                   tools that move partitions between nodes
 */
public record ScanOptions(byte[] keyPrefix, boolean ordered, long limit, int chunkBytes, List<Integer> partitions) {
  public ScanOptions {
    partitions = List.copyOf(new java.util.TreeSet<>(partitions));
  }

  /** Options over every partition. */
  public ScanOptions(byte[] keyPrefix, boolean ordered, long limit, int chunkBytes) {
    this(keyPrefix, ordered, limit, chunkBytes, List.of());
  }

  /** Everything, in key order, 1 MiB chunks. */
  public static ScanOptions inKeyOrder() {
    return new ScanOptions(new byte[0], true, 0, 1 << 20);
  }

  /** Everything, in no particular order: the fastest full scan. */
  public static ScanOptions anyOrder() {
    return new ScanOptions(new byte[0], false, 0, 1 << 20);
  }

  public ScanOptions withPrefix(byte[] prefix) {
    return new ScanOptions(prefix, ordered, limit, chunkBytes, partitions);
  }

  public ScanOptions withLimit(long n) {
    return new ScanOptions(keyPrefix, ordered, n, chunkBytes, partitions);
  }

  /** Chunks of about {@code bytes} (the server caps them at 16 MiB; a larger pair travels alone). */
  public ScanOptions withChunkBytes(int bytes) {
    if (bytes <= 0) {
      throw new IllegalArgumentException("chunk bytes must be positive, got " + bytes);
    }
    return new ScanOptions(keyPrefix, ordered, limit, bytes, partitions);
  }

  /** Only the pairs of {@code only}'s partitions (numbers below the cluster's partition count). */
  public ScanOptions inPartitions(Collection<Integer> only) {
    if (only.isEmpty()) {
      throw new IllegalArgumentException("no partitions named: a scan of none would read nothing");
    }
    return new ScanOptions(keyPrefix, ordered, limit, chunkBytes, List.copyOf(only));
  }
}
