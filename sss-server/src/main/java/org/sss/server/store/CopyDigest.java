package org.sss.server.store;

import com.google.common.hash.HashFunction;
import com.google.common.hash.Hashing;
import org.sss.core.keys.StoredKeys;
import org.sss.core.proto.PartitionDigest;
import org.sss.kvs.KeyRanges;
import org.sss.kvs.StoreCursor;
import org.sss.kvs.StoreTable;

/**
 * Sums up what this node's copy of one partition of a table holds, so that a client can compare
 * the copies of a partition without moving them: copies that differ give answers that depend on
 * which copy a reader reaches (a writer that died between sending a batch to one copy and to the
 * other leaves them so, as a failed write may).
 *
 * <p>The digest adds up a hash of each pair, so it does not depend on the order in which a copy
 * holds its pairs; a multi-valued table's pairs are hashed without their uniquifiers, since each
 * copy of a value a client put gives it a stored key of its own. Two copies holding the same
 * pairs thus have the same digest, and copies that differ have different ones but with a chance
 * of 2^-64 per difference.
 */
final class CopyDigest {
  private static final HashFunction HASH = Hashing.murmur3_128();

  private CopyDigest() {}

  /** Scans this node's copy of {@code partition} of {@code table} (stored pairs, and those gathered first). */
  static PartitionDigest of(StoreTable table, int partition) {
    boolean multiValued = table.options().getMultiValued();
    byte[][] range = KeyRanges.partition(partition, new byte[0]);
    long pairs = 0;
    long sum = 0;
    try (StoreCursor c = table.scan(range[0], range[1])) {
      for (; c.valid(); c.next()) {
        byte[] key = c.key();
        int keyLength = key.length - StoredKeys.suffixBytes(multiValued);
        byte[] value = c.value();
        sum += HASH.newHasher(keyLength + value.length + 8)
            .putInt(keyLength).putBytes(key, 0, keyLength).putBytes(value).hash().asLong();
        pairs++;
      }
    }
    return PartitionDigest.newBuilder().setPartition(partition).setPairs(pairs).setDigest(sum).build();
  }
}
