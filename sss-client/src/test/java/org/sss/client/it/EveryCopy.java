package org.sss.client.it;

import static org.junit.jupiter.api.Assertions.assertEquals;

import java.util.Map;
import java.util.TreeMap;
import java.util.concurrent.TimeUnit;
import java.util.function.Function;
import org.sss.client.SssClient;
import org.sss.client.internal.ClientInternals;
import org.sss.client.internal.NodeChannels;
import org.sss.core.api.Serdes;
import org.sss.core.cluster.ClusterSpec;
import org.sss.core.cluster.PartitionMap;
import org.sss.core.proto.ErrorCode;
import org.sss.core.proto.Request;
import org.sss.core.proto.Response;
import org.sss.core.proto.ScanNext;
import org.sss.core.proto.ScanOpen;
import org.sss.core.keys.StoredKeys;
import org.sss.core.transport.Connection;
import org.sss.core.transport.Frame;
import org.sss.core.transport.NodeUnavailableException;
import org.sss.core.transport.PairBlock;

/**
 * Reads every copy of every partition of a table on its own node (a raw scan standing in for
 * the leader) and checks it against a model: copies that differ would give answers that depend
 * on which copy a reader reaches.
 */
public final class EveryCopy {
  private EveryCopy() {}

  /** {@code model}: the table's pairs by long key; {@code decode} reads a stored value. */
  public static <V> void assertEveryCopy(SssClient client, ClusterSpec spec, String table, Map<Long, V> model,
                                  Function<byte[], V> decode) {
    assertEveryCopy(client, spec, table, model, decode, p -> true);
  }

  /** The same, for the partitions {@code checked} accepts only. */
  public static <V> void assertEveryCopy(SssClient client, ClusterSpec spec, String table, Map<Long, V> model,
                                  Function<byte[], V> decode, java.util.function.IntPredicate checked) {
    for (int p = 0; p < spec.partitionMap().partitions(); p++) {
      if (!checked.test(p)) {
        continue;
      }
      Map<Long, V> expected = new TreeMap<>();
      for (Map.Entry<Long, V> e : model.entrySet()) {
        if (spec.partitionMap().partitionOf(Serdes.LONG.encodeKey(e.getKey())) == p) {
          expected.put(e.getKey(), e.getValue());
        }
      }
      for (int node : spec.placement().replicasOf(p)) {
        Map<Long, V> held = new TreeMap<>();
        var c = ClientInternals.channels(client).get(node);
        var r = openServed(c, table, p, node);
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

  /**
   * Opens a scan of one copy once its node serves. The members decide a node up before the node
   * itself has applied that decision; until it has, it answers NOT_SERVING (and readers go to
   * another copy), so the check waits for that, not for a time.
   */
  private static Frame<Response> openServed(Connection c, String table, int partition, int node) {
    long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(30);
    while (true) {
      try {
        return NodeChannels.await(c.call(Request.newBuilder().setScanOpen(ScanOpen.newBuilder().setTable(table)
            .addPartitions(partition).setStandIn(true).setChunkBytes(1 << 20))), SssClient.DEFAULT_TIMEOUT);
      } catch (NodeUnavailableException e) {
        if (e.code() != ErrorCode.NOT_SERVING || System.nanoTime() > deadline) {
          throw e;
        }
        try {
          Thread.sleep(50);
        } catch (InterruptedException interrupted) {
          Thread.currentThread().interrupt();
          throw e;
        }
      }
    }
  }
}
