package org.sss.core.api;

import org.sss.core.cluster.PartitionMap;

/**
 * Chooses the partition (and so the node) of an emitted key. The default hashes the key; a
 * partitioner sees the partition map and the emitting node, so placements such as "the same
 * node" or "the next node" are expressible. Must be deterministic for a given key and source
 * node. Instances are created by class name with a public no-argument constructor.
 */
public interface Partitioner {
  /**
   * @param encodedKey the key's encoded bytes
   * @param map        partitions and their owners
   * @param sourceNode the node emitting the pair
   * @return a partition in {@code [0, map.partitions())}
   */
  int partition(byte[] encodedKey, PartitionMap map, int sourceNode);

  /** Hash partitioning: the partition the key would have if stored by a client. */
  final class Hash implements Partitioner {
    @Override
    public int partition(byte[] encodedKey, PartitionMap map, int sourceNode) {
      return map.partitionOf(encodedKey);
    }
  }
}
