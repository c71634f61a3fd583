package org.sss.client.it;

import static org.junit.jupiter.api.Assertions.assertEquals;

import java.util.Map;
import java.util.TreeMap;
import java.util.function.Function;
import org.sss.client.SssClient;
import org.sss.client.internal.ClientInternals;
import org.sss.client.internal.NodeChannels;
import org.sss.core.api.Serdes;
import org.sss.core.cluster.ClusterSpec;
import org.sss.core.cluster.PartitionMap;
import org.sss.core.proto.Request;
import org.sss.core.proto.ScanNext;
import org.sss.core.proto.ScanOpen;
import org.sss.core.transport.PairBlock;
import org.sss.core.keys.StoredKeys;

/**
 * Reads every copy of every partition of a table on its own node (a raw scan standing in for
 * the leader) and checks it against a model: copies that differ would give answers that depend
 * on which copy a reader reaches.
 */
final class EveryCopy {
  private EveryCopy() {}

  /** {@code model}: the table's pairs by long key; {@code decode} reads a stored value. */
  static <V> void assertEveryCopy(SssClient client, ClusterSpec spec, String table, Map<Long, V> model,
                                  Function<byte[], V> decode) {
    for (int p = 0; p < spec.partitionMap().partitions(); p++) {
      Map<Long, V> expected = new TreeMap<>();
      for (Map.Entry<Long, V> e : model.entrySet()) {
        if (spec.partitionMap().partitionOf(Serdes.LONG.encodeKey(e.getKey())) == p) {
          expected.put(e.getKey(), e.getValue());
        }
      }
      for (int node : spec.placement().replicasOf(p)) {
        Map<Long, V> held = new TreeMap<>();
        var c = ClientInternals.channels(client).get(node);
        var r = NodeChannels.await(c.call(Request.newBuilder().setScanOpen(ScanOpen.newBuilder().setTable(table)
            .addPartitions(p).setStandIn(true).setChunkBytes(1 << 20))), SssClient.DEFAULT_TIMEOUT);
        while (true) {
          PairBlock.forEach(r.body(), (k, v) -> held.put(Serdes.LONG.decodeKey(StoredKeys.scannedKey(k)), decode.apply(v)));
          long cursor = r.header().getScan().getCursor();
          boolean done = r.header().getScan().getDone() || cursor == 0;
          r.release();
          if (done) {
            break;
          }
          r = NodeChannels.await(c.call(Request.newBuilder().setScanNext(ScanNext.newBuilder().setCursor(cursor))),
              SssClient.DEFAULT_TIMEOUT);
        }
        assertEquals(expected, held, "partition " + p + " of '" + table + "' on node " + node);
      }
    }
  }
}
