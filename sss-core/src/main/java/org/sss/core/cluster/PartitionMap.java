package org.sss.core.cluster;

import com.google.common.hash.HashFunction;
import com.google.common.hash.Hashing;
import java.nio.ByteBuffer;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;

/**
 * The partitioned key space: {@code partition = murmur3(keyBytes) mod P}, and which node owns
 * each partition.
 *
 * <p>P is fixed when a cluster is created. Virtual partitions (several per node) give every
 * node several units of parallel work and leave room to move partitions later: inside a node a
 * partition is one contiguous key range, because every stored key starts with its 2-byte
 * partition number.
 *
 * <p>The hash is Murmur3 (32-bit, x86 variant, seed 0) over the <em>encoded</em> key bytes, so
 * every client and server, in any language, agrees on placement without talking.
 */
public final class PartitionMap {
  /** Stored keys carry the partition in two bytes. */
  public static final int MAX_PARTITIONS = 65_535;

  private static final HashFunction HASH = Hashing.murmur3_32_fixed();

  private final int[] ownerOfPartition;
  private final int nodeCount;

  private PartitionMap(int[] ownerOfPartition, int nodeCount) {
    this.ownerOfPartition = ownerOfPartition;
    this.nodeCount = nodeCount;
  }

  /** Partitions dealt round-robin: partition p lives on node p mod N. */
  public static PartitionMap roundRobin(int partitions, int nodes) {
    checkCounts(partitions, nodes);
    int[] owners = new int[partitions];
    for (int p = 0; p < partitions; p++) {
      owners[p] = p % nodes;
    }
    return new PartitionMap(owners, nodes);
  }

  /** An explicit assignment; every node must own at least one partition. */
  public static PartitionMap of(int[] owners, int nodes) {
    checkCounts(owners.length, nodes);
    boolean[] seen = new boolean[nodes];
    for (int p = 0; p < owners.length; p++) {
      if (owners[p] < 0 || owners[p] >= nodes) {
        throw new IllegalArgumentException("partition " + p + " assigned to unknown node " + owners[p]);
      }
      seen[owners[p]] = true;
    }
    for (int n = 0; n < nodes; n++) {
      if (!seen[n]) {
        throw new IllegalArgumentException("node " + n + " owns no partition");
      }
    }
    return new PartitionMap(owners.clone(), nodes);
  }

  private static void checkCounts(int partitions, int nodes) {
    if (nodes < 1) {
      throw new IllegalArgumentException("a cluster needs at least one node");
    }
    if (partitions < nodes || partitions > MAX_PARTITIONS) {
      throw new IllegalArgumentException("partitions must be between the node count (" + nodes
          + ") and " + MAX_PARTITIONS + ", got " + partitions);
    }
  }

  /** The partition of an encoded key. */
  public int partitionOf(byte[] key) {
    return partitionOf(key, 0, key.length);
  }

  /** The partition of the encoded key in {@code key[offset, offset+length)}. */
  public int partitionOf(byte[] key, int offset, int length) {
    int h = HASH.hashBytes(key, offset, length).asInt();
    return (h & 0x7fff_ffff) % ownerOfPartition.length;
  }

  /**
   * What a key's placement depends on, in a few characters: the partition count and a digest of
   * which node owns each partition. Two cluster files with the same layout place every key alike.
   */
  public String layout() {
    String digest = com.google.common.hash.Hashing.sha256()
        .hashString(format() + "/" + nodeCount, StandardCharsets.UTF_8).toString();
    return "P=" + ownerOfPartition.length + ",map=" + digest.substring(0, 12);
  }

  /** The partition of the encoded key between the buffer's position and limit. */
  public int partitionOf(ByteBuffer key) {
    int h = HASH.hashBytes(key).asInt();
    return (h & 0x7fff_ffff) % ownerOfPartition.length;
  }

  /** The node that owns a partition. */
  public int ownerOf(int partition) {
    return ownerOfPartition[partition];
  }

  /** The node that owns an encoded key. */
  public int nodeOf(byte[] key) {
    return ownerOfPartition[partitionOf(key)];
  }

  public int partitions() {
    return ownerOfPartition.length;
  }

  public int nodes() {
    return nodeCount;
  }

  /** The partitions a node owns, ascending. */
  public List<Integer> partitionsOf(int node) {
    List<Integer> out = new ArrayList<>();
    for (int p = 0; p < ownerOfPartition.length; p++) {
      if (ownerOfPartition[p] == node) {
        out.add(p);
      }
    }
    return out;
  }

  /** The owners as a comma-separated list, as stored in cluster files. */
  public String format() {
    StringBuilder sb = new StringBuilder();
    for (int p = 0; p < ownerOfPartition.length; p++) {
      if (p > 0) {
        sb.append(',');
      }
      sb.append(ownerOfPartition[p]);
    }
    return sb.toString();
  }

  @Override
  public boolean equals(Object o) {
    return o instanceof PartitionMap m && m.nodeCount == nodeCount
        && Arrays.equals(m.ownerOfPartition, ownerOfPartition);
  }

  @Override
  public int hashCode() {
    return Arrays.hashCode(ownerOfPartition) * 31 + nodeCount;
  }
}
