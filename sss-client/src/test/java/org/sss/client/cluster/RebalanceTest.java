package org.sss.client.cluster;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Random;
import java.util.TreeMap;
import java.util.concurrent.CopyOnWriteArrayList;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;
import org.sss.client.BulkWriter;
import org.sss.client.ScanOptions;
import org.sss.client.SssClient;
import org.sss.client.TableScan;
import org.sss.client.TableSpec;
import org.sss.client.it.EveryCopy;
import org.sss.core.api.Pair;
import org.sss.core.api.Serdes;
import org.sss.core.cluster.ClusterSpec;
import org.sss.core.cluster.Rebalancing;
import org.sss.core.keys.PairTypes;
import org.sss.core.keys.StoredKeys;
import org.sss.core.proto.DataType;

/**
 * Rebalancing on server processes keeping two copies: {@code cluster resize --nodes} with the
 * partition count kept moves only the partitions whose copies change, and afterwards every copy
 * of every partition, read on its own node, is the test's model (a table without a WAL and a
 * multi-valued one included), also after every node was killed; a node removed for good leaves
 * its data with the others; a rebalance that fails after the nodes took the new layout puts the
 * old one back whole.
 */
class RebalanceTest {
  private static final TableSpec TEXT = TableSpec.of(PairTypes.of(DataType.LONG, DataType.STRING));
  private static final TableSpec NO_WAL = TableSpec.of(PairTypes.of(DataType.LONG, DataType.STRING))
      .writeAheadLog(false);
  private static final TableSpec MULTI = TableSpec.of(PairTypes.of(DataType.LONG, DataType.LONG)).multiValued(true);

  @TempDir
  Path dir;

  private final Map<Long, String> text = new TreeMap<>();
  private final Map<Long, String> noWal = new TreeMap<>();
  private final Map<Long, List<Long>> multi = new TreeMap<>();

  /**
   * One cluster, filled once: a rebalance that fails after the nodes took the new layout puts the
   * old one back whole; then adding node 3 and removing it again, with every node killed in
   * between, leaves every copy the model.
   */
  @Test
  void aFailedRebalance_thenAddingAndRemovingANode_everyCopyIsTheModel() throws Exception {
    LocalProcessCluster cluster = LocalProcessCluster.start(dir, 3, 0, 2, "384m");
    try {
      fill(cluster.spec());
      ClusterSpec three = cluster.spec();

      // a failure once the nodes had moved: the old cluster runs again
      IllegalStateException injected = new IllegalStateException("injected once the nodes had moved");
      IllegalStateException failed = assertThrows(IllegalStateException.class, () -> ClusterResize.resize(dir, 4, 0,
          line -> { }, started -> {
            assertEquals(4, started.spec().nodeCount(), "the new shape ran, its moved partitions emptied");
            throw injected;
          }));
      assertEquals(injected, failed.getCause());
      assertTrue(failed.getMessage().contains("the old cluster runs again"), failed.getMessage());
      cluster = LocalProcessCluster.attach(dir);
      assertEquals(three, cluster.spec(), "the old cluster file is back");
      assertTables(three, "after the failed rebalance");
      try (var files = Files.list(dir)) {
        assertEquals(List.of("cluster.properties", "node-0", "node-1", "node-2", "resize.lock"),
            files.map(f -> f.getFileName().toString()).sorted().toList());
      }
      assertFalse(Files.exists(dir.resolve(ClusterResize.JOURNAL)));
      // an --undo from another process while a resize holds the cluster is refused, changing nothing
      try (ResizeLock held = ResizeLock.take(dir)) {
        IllegalStateException busy = assertThrows(IllegalStateException.class, () -> ClusterResize.undo(dir, l -> { }));
        assertTrue(busy.getMessage().contains("another resize"), busy.getMessage());
      }

      List<String> lines = new CopyOnWriteArrayList<>();
      cluster = ClusterResize.resize(dir, 4, 0, lines::add);
      ClusterSpec four = cluster.spec();
      assertEquals(4, four.nodeCount());
      assertEquals(three.partitionMap().partitions(), four.partitionMap().partitions(), "the partition count kept");
      assertEquals(2, four.replication());
      assertEquals(three.secret(), four.secret());
      assertEquals(four, ClusterSpec.load(dir.resolve("cluster.properties")));
      List<Integer> moved = Rebalancing.moved(three.placement(), four.placement());
      assertEquals(four.placement().partitionsHeldBy(3), moved, "only the partitions the new node took moved");
      assertTrue(lines.stream().anyMatch(l -> l.contains("moving " + moved.size() + " of 24 partitions")), lines.toString());
      assertTables(four, "after node 3 was added");
      for (int i = 0; i < 4; i++) {
        cluster.kill(i); // every copy is on disk: the table without a WAL too
      }
      cluster = LocalProcessCluster.start(dir, 0, 0, null);
      assertTables(four, "after every node was killed and started again");

      lines.clear();
      cluster = ClusterResize.resize(dir, 3, 0, lines::add);
      ClusterSpec back = cluster.spec();
      assertEquals(3, back.nodeCount());
      assertEquals(four.placement().partitionsHeldBy(3), Rebalancing.moved(four.placement(), back.placement()),
          "only node 3's partitions moved");
      assertTables(back, "after node 3 was removed");
      try (var files = Files.list(dir)) {
        assertEquals(List.of("cluster.properties", "node-0", "node-1", "node-2", "resize.lock"),
            files.map(f -> f.getFileName().toString()).sorted().toList(), "node 3's directory and the staging removed");
      }
    } finally {
      LocalProcessCluster.attach(dir).stopAll();
    }
  }

  /** Every copy of the single-valued tables on its own node, and the multi-valued table read whole. */
  private void assertTables(ClusterSpec spec, String when) {
    try (SssClient client = SssClient.connect(spec)) {
      EveryCopy.assertEveryCopy(client, spec, "text", text, Serdes.STRING::decodeValue);
      EveryCopy.assertEveryCopy(client, spec, "nowal", noWal, Serdes.STRING::decodeValue);
      Map<Long, List<Long>> read = new TreeMap<>();
      try (TableScan scan = client.scan("multi", ScanOptions.anyOrder())) {
        while (scan.hasNext()) {
          Pair p = scan.next();
          read.computeIfAbsent(Serdes.LONG.decodeKey(StoredKeys.withoutUniquifier(p.key(), true)), k -> new ArrayList<>())
              .add(Serdes.LONG.decodeValue(p.value()));
        }
      }
      read.values().forEach(v -> v.sort(null));
      assertEquals(multi, read, when + ": the multi-valued table");
      assertEquals(text.size(), client.count("text"), when);
    }
  }

  private void fill(ClusterSpec spec) {
    Random rnd = new Random(7);
    try (SssClient client = SssClient.connect(spec)) {
      client.createTable("text", TEXT, false);
      client.createTable("nowal", NO_WAL, false);
      client.createTable("multi", MULTI, false);
      try (BulkWriter w = client.writer("text", TEXT.types())) {
        for (long i = 0; i < 4000; i++) {
          String v = "line " + i + " " + rnd.nextInt();
          w.put(Serdes.LONG.encodeKey(i), Serdes.STRING.encodeValue(v));
          text.put(i, v);
        }
      }
      List<Pair> pairs = new ArrayList<>();
      for (long i = 0; i < 600; i++) {
        pairs.add(new Pair(Serdes.LONG.encodeKey(i), Serdes.STRING.encodeValue("nowal " + i)));
        noWal.put(i, "nowal " + i);
      }
      client.putAll("nowal", NO_WAL.types(), pairs);
      pairs.clear();
      for (long k = 0; k < 300; k++) {
        for (int v = 0; v <= k % 3; v++) {
          long value = rnd.nextInt(1000);
          pairs.add(new Pair(Serdes.LONG.encodeKey(k), Serdes.LONG.encodeValue(value)));
          multi.computeIfAbsent(k, x -> new ArrayList<>()).add(value);
        }
      }
      client.putAll("multi", MULTI.types(), pairs);
    }
    multi.values().forEach(v -> v.sort(null));
  }
}
