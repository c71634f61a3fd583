package org.sss.client.it;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;
import org.sss.client.SssClient;
import org.sss.client.TableSpec;
import org.sss.client.cluster.LocalProcessCluster;
import org.sss.client.internal.ClientInternals;
import org.sss.client.internal.WireTypes;
import org.sss.client.io.BulkIO;
import org.sss.core.api.Pair;
import org.sss.core.api.Serdes;
import org.sss.core.cluster.ClusterSpec;
import org.sss.core.transport.SssException;

/**
 * A table keeps the cluster's replication, which every writer sends: a create asking for another
 * is refused before it reaches a node, and a create that would complete a table some nodes hold
 * with another number of copies (left by a client with another cluster file) is refused too,
 * since the table's copies would then be written differently on different nodes.
 */
class TableReplicationContractTest {
  @TempDir
  Path dir;

  private static List<Pair> pairs(int n) {
    List<Pair> pairs = new ArrayList<>();
    for (long i = 1; i <= n; i++) {
      pairs.add(new Pair(Serdes.LONG.encodeKey(i), Serdes.STRING.encodeValue("v" + i)));
    }
    return pairs;
  }

  @Test
  void createAskingForOtherCopiesThanTheCluster_isRefusedBeforeAnyNode() throws Exception {
    LocalProcessCluster cluster = LocalProcessCluster.start(dir, 3, 0, 2, "512m");
    try (SssClient client = SssClient.connect(cluster.spec())) {
      TableSpec one = BulkIO.textTable().replication(1);
      IllegalArgumentException e = assertThrows(IllegalArgumentException.class,
          () -> client.createTable("scratch", one, false));
      assertEquals("a table keeps the cluster's replication (2), not 1", e.getMessage());
      assertTrue(client.listTables().isEmpty(), "no node got the table");
      client.createTable("scratch", BulkIO.textTable(), false);
      client.putAll("scratch", BulkIO.textTable().types(), pairs(100));
      assertEquals(100, client.count("scratch"));
    } finally {
      cluster.stopAll();
    }
  }

  @Test
  void completingCreate_refusesNodesHoldingTheTableWithOtherReplication() throws Exception {
    LocalProcessCluster cluster = LocalProcessCluster.start(dir, 3, 0, 2, "512m");
    try {
      ClusterSpec two = cluster.spec();
      ClusterSpec one = two.withReplication(1, two.locations()); // an old cluster file
      cluster.kill(2);
      try (SssClient old = SssClient.connect(one)) {
        // with node 2 down the create is refused before any node makes the table
        SssException refused = assertThrows(SssException.class, () -> old.createTable("t", BulkIO.textTable(), false));
        assertTrue(refused.getMessage().contains("nothing was created"), refused.getMessage());
        // what an older client, which created node by node, left behind: the table on nodes 0 and 1, one copy
        for (int node : new int[] {0, 1}) {
          org.sss.client.internal.NodeChannels.await(ClientInternals.channels(old).get(node).call(org.sss.core.proto.Request
              .newBuilder().setCreateTable(org.sss.core.proto.CreateTable.newBuilder().setTable("t")
                  .setOptions(WireTypes.toProto(BulkIO.textTable())))), SssClient.DEFAULT_TIMEOUT).release();
        }
      }
      cluster = LocalProcessCluster.start(dir, 0, 0, "512m"); // node 2 back
      try (SssClient client = SssClient.connect(two)) {
        SssException e = assertThrows(SssException.class, () -> client.createTable("t", BulkIO.textTable(), false));
        assertTrue(e.getMessage().contains("1 copy, but was asked for as key=long value=string, 2 copies"),
            e.getMessage());
      }
    } finally {
      cluster.stopAll();
    }
  }
}
