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
 *
 * <p>With replication the map may also list every partition's copies ({@link #withCopies}),
 * as a rebalanced cluster's file does ({@code partition.copies}); without that list the copies
 * are computed from the owners ({@link ReplicaPlacement}). A listed placement is part of the
 * layout: nodes and clients that disagree on it refuse each other.
 */
public final class PartitionMap {
  /** Stored keys carry the partition in two bytes. */
  public static final int MAX_PARTITIONS = 65_535;

  private static final HashFunction HASH = Hashing.murmur3_32_fixed();

  private final int[] ownerOfPartition;
  private final int nodeCount;
  /** Each partition's copies, its owner first; null when computed from the owners. */
  private final int[][] copies;

  private PartitionMap(int[] ownerOfPartition, int nodeCount, int[][] copies) {
    this.ownerOfPartition = ownerOfPartition;
    this.nodeCount = nodeCount;
    this.copies = copies;
  }

  private PartitionMap(int[] ownerOfPartition, int nodeCount) {
    this(ownerOfPartition, nodeCount, null);
  }

  /**
   * This map with each partition's copies listed: {@code copies[p]} names distinct nodes, the
   * first of them partition p's owner, and every partition lists as many.
   */
  public PartitionMap withCopies(int[][] copies) {
    if (copies.length != ownerOfPartition.length) {
      throw new IllegalArgumentException("copies listed for " + copies.length + " partitions, but there are "
          + ownerOfPartition.length);
    }
    int[][] own = new int[copies.length][];
    for (int p = 0; p < copies.length; p++) {
      int[] c = copies[p];
      if (c.length == 0 || c.length != copies[0].length) {
        throw new IllegalArgumentException("partition " + p + " lists " + c.length + " copies, partition 0 lists "
            + copies[0].length + ": every partition keeps as many");
      }
      if (c[0] != ownerOfPartition[p]) {
        throw new IllegalArgumentException("partition " + p + "'s first copy is on node " + c[0]
            + " but the map gives the partition to node " + ownerOfPartition[p]);
      }
      for (int i = 0; i < c.length; i++) {
        if (c[i] < 0 || c[i] >= nodeCount) {
          throw new IllegalArgumentException("partition " + p + " has a copy on unknown node " + c[i]);
        }
        for (int j = 0; j < i; j++) {
          if (c[j] == c[i]) {
            throw new IllegalArgumentException("partition " + p + " lists node " + c[i] + " twice");
          }
        }
      }
      own[p] = c.clone();
    }
    return new PartitionMap(ownerOfPartition, nodeCount, own);
  }

  /** Whether the copies are listed ({@link #withCopies}) rather than computed. */
  public boolean listsCopies() {
    return copies != null;
  }

  /** The nodes holding partition {@code p}'s copies, its owner first, as listed; only when {@link #listsCopies}. */
  public int[] listedCopies(int p) {
    if (copies == null) {
      throw new IllegalStateException("this map lists no copies");
    }
    return copies[p].clone();
  }

  /** Parses {@link #formatCopies}'s text: partitions separated by commas, a partition's nodes by slashes. */
  public PartitionMap withCopies(String text) {
    String[] parts = text.split(",", -1);
    int[][] out = new int[parts.length][];
    for (int p = 0; p < parts.length; p++) {
      String[] nodes = parts[p].trim().split("/", -1);
      out[p] = new int[nodes.length];
      for (int i = 0; i < nodes.length; i++) {
        try {
          out[p][i] = Integer.parseInt(nodes[i].trim());
        } catch (NumberFormatException e) {
          throw new IllegalArgumentException("partition " + p + "'s copies '" + parts[p] + "' are not node numbers"
              + " separated by '/'");
        }
      }
    }
    return withCopies(out);
  }

  /** The listed copies as stored in cluster files ({@code partition.copies}), e.g. {@code 0/1,1/2,2/0}. */
  public String formatCopies() {
    if (copies == null) {
      throw new IllegalStateException("this map lists no copies");
    }
    StringBuilder sb = new StringBuilder();
    for (int p = 0; p < copies.length; p++) {
      if (p > 0) {
        sb.append(',');
      }
      for (int i = 0; i < copies[p].length; i++) {
        if (i > 0) {
          sb.append('/');
        }
        sb.append(copies[p][i]);
      }
    }
    return sb.toString();
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
    String text = format() + "/" + nodeCount + (copies == null ? "" : "/copies=" + formatCopies());
    String digest = com.google.common.hash.Hashing.sha256()
        .hashString(text, StandardCharsets.UTF_8).toString();
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
        && Arrays.equals(m.ownerOfPartition, ownerOfPartition) && Arrays.deepEquals(m.copies, copies);
  }

  @Override
  public int hashCode() {
    return (Arrays.hashCode(ownerOfPartition) * 31 + nodeCount) * 31 + Arrays.deepHashCode(copies);
  }
}
