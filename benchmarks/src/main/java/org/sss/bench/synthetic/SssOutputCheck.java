package org.sss.bench.synthetic;

import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import org.sss.client.SssClient;
import org.sss.client.internal.ClientInternals;
import org.sss.client.internal.NodeChannels;
import org.sss.core.cluster.PartitionMap;
import org.sss.core.cluster.ReplicaPlacement;
import org.sss.core.keys.KeyCodec;
import org.sss.core.keys.StoredKeys;
import org.sss.core.proto.Request;
import org.sss.core.proto.Response;
import org.sss.core.proto.ScanNext;
import org.sss.core.proto.ScanOpen;
import org.sss.core.transport.Frame;
import org.sss.core.transport.PairBlock;

/**
 * Reads a synthetic run's output table back from SSS into {@link Observed}, two ways:
 * <ul>
 *   <li><b>every pair, where it is stored</b>: each node is asked for every partition, not only
 *       the ones it owns, and each stored key's partition prefix is checked: it must be the
 *       partition the key hashes to, on the node that owns that partition. A pair anywhere else
 *       is one no read by key finds (and a client's scan, which asks each node for its own
 *       partitions, might never show it). This holds for every placement: the partitioner of
 *       {@code local} and {@code shifted} places the map output; the reduce stage writes its
 *       output by hash (a multi-valued table there, one value per node that reduced the key);
 *   <li><b>a sample of keys by key</b> ({@link KeySample}): {@code multiGet} (single-valued
 *       output) or {@code getAll} (multi-valued), compared with the expected values exactly.
 *       Keys whose values exceed {@link #MAX_READ_BYTES} are left to the scan (one answer could
 *       not carry them).
 * </ul>
 */
final class SssOutputCheck {
  static final int CHUNK_BYTES = 1 << 20;
  static final long MAX_READ_BYTES = 16L << 20;
  static final Duration TIMEOUT = Duration.ofSeconds(120);

  private SssOutputCheck() {}

  /** Reads {@code table} into {@code seen}; returns the number of keys read by key. */
  static int read(SssClient client, String table, boolean multiValued, Expected expected, Observed seen) {
    PartitionMap map = client.spec().partitionMap();
    ReplicaPlacement placement = client.spec().placement();
    int copies = Math.max(1, client.tableStats(table).spec().replication());
    List<Integer> all = new ArrayList<>();
    for (int p = 0; p < map.partitions(); p++) {
      all.add(p);
    }
    for (int node = 0; node < map.nodes(); node++) {
      int here = node;
      forEachStored(client, node, table, all, (stored, value) -> {
        int partition = StoredKeys.partitionOf(stored);
        long key = KeyCodec.decodeLong(stored, StoredKeys.PREFIX_BYTES); // a multi-valued key's uniquifier follows
        int hashed = map.partitionOf(stored, StoredKeys.PREFIX_BYTES, 8);
        if (partition != hashed || !placement.holds(here, partition, copies)) {
          seen.problem(Observed.PLACEMENT, "key " + key + " in partition " + partition + " on node " + here
              + ", its hash names partition " + hashed + " on node(s) "
              + placement.replicasOf(hashed).subList(0, copies));
        } else if (map.ownerOf(partition) != here) {
          return; // another copy of a pair its leader holds: counted once, there
        }
        seen.addOutput(key, value, 0, value.length, expected.outputLength());
      });
    }
    return readByKey(client, table, multiValued, expected, seen);
  }

  private static int readByKey(SssClient client, String table, boolean multiValued, Expected expected,
                               Observed seen) {
    long perKey = (expected.groups() + expected.keys() - 1) / expected.keys(); // output values of a key, about
    long[] sample = KeySample.of(expected.keys(), perKey * expected.outputLength());
    List<Long> keys = new ArrayList<>();
    for (long k : sample) {
      if ((long) expected.outputsOf((int) k) * expected.outputLength() <= MAX_READ_BYTES) {
        keys.add(k);
      }
    }
    if (multiValued) {
      for (long k : keys) {
        seen.byKey(k, expected.valuesOf((int) k), client.getAll(table, KeyCodec.encodeLong(k)));
      }
      return keys.size();
    }
    int batch = (int) Math.max(1, MAX_READ_BYTES / (expected.outputLength() + 32L));
    for (int from = 0; from < keys.size(); from += batch) {
      List<Long> part = keys.subList(from, Math.min(keys.size(), from + batch));
      List<byte[]> got = client.multiGet(table, part.stream().map(KeyCodec::encodeLong).toList());
      for (int i = 0; i < part.size(); i++) {
        byte[] v = got.get(i);
        seen.byKey(part.get(i), expected.valuesOf((int) (long) part.get(i)), v == null ? List.of() : List.of(v));
      }
    }
    return keys.size();
  }

  /**
   * Every pair node {@code node} stores for {@code table} in {@code partitions}, with its stored
   * key (partition prefix first), read by a scan sent to that node alone.
   */
  static void forEachStored(SssClient client, int node, String table, List<Integer> partitions,
                            PairBlock.PairVisitor visitor) {
    Frame<Response> r = NodeChannels.await(ClientInternals.channels(client).get(node).call(Request.newBuilder()
        .setScanOpen(ScanOpen.newBuilder().setTable(table).addAllPartitions(partitions).setChunkBytes(CHUNK_BYTES))),
        TIMEOUT);
    while (true) {
      boolean done;
      long cursor;
      try {
        PairBlock.forEach(r.body().duplicate(), visitor);
        done = r.header().getScan().getDone();
        cursor = r.header().getScan().getCursor();
      } finally {
        r.release();
      }
      if (done) {
        return;
      }
      r = NodeChannels.await(ClientInternals.channels(client).get(node).call(Request.newBuilder()
          .setScanNext(ScanNext.newBuilder().setCursor(cursor))), TIMEOUT);
    }
  }
}
