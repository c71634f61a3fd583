package org.sss.client.it;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;

import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.List;
import java.util.Map;
import java.util.TreeMap;
import java.util.stream.Stream;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;
import org.sss.client.BulkWriter;
import org.sss.client.MembershipView;
import org.sss.client.SssClient;
import org.sss.client.TableSpec;
import org.sss.client.cluster.LocalProcessCluster;
import org.sss.core.api.Pair;
import org.sss.core.api.Serdes;
import org.sss.core.cluster.ClusterSpec;
import org.sss.core.keys.PairTypes;
import org.sss.core.proto.DataType;

/**
 * A node whose data directory is lost (a disk replaced) and that comes back at once, before its
 * silence could be noticed: it must not serve its empty store as a copy in sync. Three server
 * processes keeping two copies; node 2 is killed, its directory deleted, and it is started
 * again within a second. Reads go on from the others, node 2 is decided out (its store is not
 * the one recorded), catches up, and afterwards every copy of every partition, read on its own
 * node, is the test's model, a table without a WAL included.
 */
class ReplacedStoreTest {
  private static final TableSpec TEXT = TableSpec.of(PairTypes.of(DataType.LONG, DataType.STRING));

  @TempDir
  Path dir;

  @Test
  void aNodeBackWithAnEmptyDisk_catchesUpBeforeItServes() throws Exception {
    LocalProcessCluster cluster = LocalProcessCluster.start(dir, 3, 0, 2, "384m");
    Map<Long, String> rows = new TreeMap<>();
    Map<Long, String> noWal = new TreeMap<>();
    try {
      ClusterSpec spec = cluster.spec();
      try (SssClient client = SssClient.connect(spec)) {
        client.createTable("rows", TEXT, false);
        client.createTable("nowal", TEXT.writeAheadLog(false), false);
        try (BulkWriter w = client.writer("rows", TEXT.types())) {
          for (long i = 0; i < 5000; i++) {
            w.put(Serdes.LONG.encodeKey(i), Serdes.STRING.encodeValue("row " + i));
            rows.put(i, "row " + i);
          }
        }
        List<Pair> pairs = new ArrayList<>();
        for (long i = 0; i < 500; i++) {
          pairs.add(new Pair(Serdes.LONG.encodeKey(i), Serdes.STRING.encodeValue("nowal " + i)));
          noWal.put(i, "nowal " + i);
        }
        client.putAll("nowal", TEXT.types(), pairs);
      }
      cluster.kill(2);
      deleteTree(dir.resolve("node-2").resolve("data"));
      cluster = LocalProcessCluster.start(dir, 0, 0, null); // back at once, on an empty store
      try (SssClient client = SssClient.connect(spec)) {
        // served by the others from the moment it is back; never an empty answer from node 2
        for (int i = 0; i < 20; i++) {
          assertEquals(rows.size(), client.count("rows"), "count " + i + " while node 2 catches up");
          Thread.sleep(100);
        }
        ReplicationTest.awaitView(client, MembershipView::whole, "node 2 caught up");
        assertFalse(client.view(2).out().contains(2));
        EveryCopy.assertEveryCopy(client, spec, "rows", rows, Serdes.STRING::decodeValue);
        EveryCopy.assertEveryCopy(client, spec, "nowal", noWal, Serdes.STRING::decodeValue);
        assertEquals(rows.size(), client.count("rows"));
      }
    } finally {
      cluster.stopAll();
    }
  }

  private static void deleteTree(Path root) throws Exception {
    try (Stream<Path> walk = Files.walk(root)) {
      for (Path p : walk.sorted(Comparator.reverseOrder()).toList()) {
        Files.delete(p);
      }
    }
  }
}
