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
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;
import org.sss.client.BulkWriter;
import org.sss.client.ScanOptions;
import org.sss.client.SssClient;
import org.sss.client.TableScan;
import org.sss.client.TableSpec;
import org.sss.client.TableStatus;
import org.sss.core.api.Pair;
import org.sss.core.api.Serdes;
import org.sss.core.cluster.ClusterSpec;
import org.sss.core.keys.PairTypes;
import org.sss.core.keys.StoredKeys;
import org.sss.core.proto.Compression;
import org.sss.core.proto.DataType;

/**
 * {@code cluster resize} on server processes: every table, with its options, reads back exactly
 * (against a model kept by the test) from a cluster of another node and partition count; a
 * resize that cannot start changes nothing, and one that fails after the old cluster stopped
 * puts it back whole.
 */
class ClusterResizeTest {
  private static final TableSpec TEXT = TableSpec.of(PairTypes.of(DataType.LONG, DataType.STRING));
  private static final TableSpec MULTI = TableSpec.of(PairTypes.of(DataType.LONG, DataType.LONG)).multiValued(true);
  private static final TableSpec NO_WAL = TableSpec.of(PairTypes.of(DataType.STRING, DataType.BYTES))
      .writeAheadLog(false).compression(TableSpec.Compression.ZSTD);

  @TempDir
  Path dir;

  /** What the test wrote: per table, each key's values in sorted order (as text). */
  private final Map<String, Map<String, List<String>>> model = new TreeMap<>();

  @Test
  void growAndRepartition_everyTableReadsBackWithItsOptions() throws Exception {
    LocalProcessCluster before = LocalProcessCluster.start(dir, 2, 16, 1, "384m");
    LocalProcessCluster after;
    // a client that writes all along: what it was told was written must be there afterwards
    java.util.Set<Long> acknowledged = java.util.concurrent.ConcurrentHashMap.newKeySet();
    // a write that failed may still have been applied (its answer lost as the cluster stopped): either way is right
    java.util.Set<Long> uncertain = java.util.concurrent.ConcurrentHashMap.newKeySet();
    java.util.concurrent.atomic.AtomicBoolean stop = new java.util.concurrent.atomic.AtomicBoolean();
    Thread writer = new Thread(() -> {
      try (SssClient client = SssClient.connect(before.spec())) {
        for (long k = 1_000_000; !stop.get(); k++) {
          try {
            client.put("text", TEXT.types(), Serdes.LONG.encodeKey(k), Serdes.STRING.encodeValue("late " + k));
            acknowledged.add(k);
          } catch (RuntimeException refused) {
            uncertain.add(k); // the cluster is stopped or elsewhere: not acknowledged, so not owed
            Thread.onSpinWait();
          }
        }
      }
    }, "writer");
    // and a client that reads the cluster file afresh for every write, as a new command does
    Thread newcomer = new Thread(() -> {
      for (long k = 2_000_000; !stop.get(); k++) {
        try (SssClient client = SssClient.connect(dir.resolve("cluster.properties"))) {
          client.put("text", TEXT.types(), Serdes.LONG.encodeKey(k), Serdes.STRING.encodeValue("late " + k));
          acknowledged.add(k);
        } catch (Exception refused) {
          uncertain.add(k);
          Thread.onSpinWait();
        }
      }
    }, "newcomer");
    try {
      fill(before.spec());
      writer.start();
      newcomer.start();
      // through the command, as a user runs it (bin/sss cluster resize)
      assertEquals(0, org.sss.client.cli.SssCommand.commandLine().execute("cluster", "resize", "--dir", dir.toString(),
          "--nodes", "3", "--partitions", "12"), "cluster resize");
      after = LocalProcessCluster.attach(dir);
    } catch (Exception | Error e) {
      stop.set(true);
      LocalProcessCluster.attach(dir).stopAll(); // whichever shape runs: no server outlives the test
      throw e;
    } finally {
      stop.set(true);
      writer.join();
      newcomer.join();
    }
    for (long k : acknowledged) {
      model.get("text").put(Long.toString(k), new ArrayList<>(List.of("late " + k)));
    }
    assertTrue(acknowledged.stream().anyMatch(k -> k < 2_000_000), "the writer got writes in before the resize");
    try {
      ClusterSpec spec = after.spec();
      assertEquals(3, spec.nodeCount());
      assertEquals(12, spec.partitionMap().partitions());
      assertEquals(1, spec.replication(), "the copies kept");
      assertEquals(before.spec().secret(), spec.secret(), "the secret kept");
      assertEquals(spec, ClusterSpec.load(dir.resolve("cluster.properties")));
      try (SssClient client = SssClient.connect(spec)) {
        assertSameTables(model, withoutUncertain(read(client), uncertain), "after the resize");
        Map<String, TableSpec> options = new TreeMap<>();
        client.listTables().forEach(t -> options.put(t.name(), t.spec().replication(0)));
        assertEquals(Map.of("text", TEXT, "multi", MULTI, "nowal", NO_WAL, "empty", TEXT), options);
      }
      try (var files = Files.list(dir)) {
        assertEquals(List.of("cluster.properties", "node-0", "node-1", "node-2", "resize.lock"),
            files.map(f -> f.getFileName().toString()).sorted().toList(), "staging and the old nodes removed");
      }
      // every table is on disk before the old copy went: a crash of every node loses nothing,
      // the table without a WAL included
      for (int i = 0; i < 3; i++) {
        after.kill(i);
      }
      after = LocalProcessCluster.start(dir, 0, 0, null);
      try (SssClient client = SssClient.connect(spec)) {
        assertSameTables(model, withoutUncertain(read(client), uncertain), "after every node was killed and started again");
      }
    } finally {
      after.stopAll();
    }
  }

  @Test
  void nodeDown_orFailureAfterTheStop_leaveTheOldClusterWhole() throws Exception {
    LocalProcessCluster cluster = LocalProcessCluster.start(dir, 3, 0, 1, "384m");
    try {
      fill(cluster.spec());
      ClusterSpec was = cluster.spec();
      try (SssClient client = SssClient.connect(was)) {
        client.stopNode(2); // flushed first: a kill -9 would lose what the table without a WAL had not flushed
      }
      Exception down = assertThrows(Exception.class, () -> ClusterResize.resize(dir, 2, 0, line -> { }));
      assertTrue(down.getMessage().contains("node 2"), down.getMessage());
      assertEquals(was, ClusterSpec.load(dir.resolve("cluster.properties")), "nothing changed");
      assertFalse(Files.exists(dir.resolve("resize-staging")));

      cluster = LocalProcessCluster.start(dir, 0, 0, null); // node 2 back
      IllegalStateException injected = new IllegalStateException("injected after the new cluster started");
      IllegalStateException failed = assertThrows(IllegalStateException.class, () -> ClusterResize.resize(dir, 2, 0,
          line -> { }, started -> {
            assertEquals(2, started.spec().nodeCount(), "the new cluster ran");
            throw injected;
          }));
      assertEquals(injected, failed.getCause());
      assertTrue(failed.getMessage().contains("injected after the new cluster started")
          && failed.getMessage().contains("the old cluster runs again"), "one message says both: " + failed.getMessage());
      cluster = LocalProcessCluster.attach(dir);
      assertEquals(was, cluster.spec(), "the old cluster file is back");
      try (SssClient client = SssClient.connect(cluster.spec())) {
        assertSameTables(model, read(client), "the old cluster serves every table as before");
      }
      try (var files = Files.list(dir)) {
        assertEquals(List.of("cluster.properties", "node-0", "node-1", "node-2", "resize.lock"),
            files.map(f -> f.getFileName().toString()).sorted().toList());
      }

      // a resize whose process died while staging: its journal stays, starts are refused, --undo puts it back
      cluster.stopAll();
      Files.createDirectories(dir.resolve(ClusterResize.OLD));
      Files.copy(dir.resolve("cluster.properties"), dir.resolve(ClusterResize.OLD).resolve("cluster.properties"));
      Files.writeString(dir.resolve(ClusterResize.JOURNAL), "phase=STAGING\n");
      IllegalStateException refused = assertThrows(IllegalStateException.class,
          () -> LocalProcessCluster.start(dir, 0, 0, null));
      assertTrue(refused.getMessage().contains("--undo"), refused.getMessage());
      assertEquals("the old cluster is back, running", ClusterResize.undo(dir, line -> { }));
      cluster = LocalProcessCluster.attach(dir);
      try (SssClient client = SssClient.connect(cluster.spec())) {
        assertSameTables(model, read(client), "after --undo");
      }
      assertFalse(Files.exists(dir.resolve(ClusterResize.JOURNAL)));
      assertFalse(Files.exists(dir.resolve(ClusterResize.OLD)));
    } finally {
      cluster.stopAll();
    }
  }

  /** The tables read, less the writes whose outcome their writer could not know (checked for their value if there). */
  private static Map<String, Map<String, List<String>>> withoutUncertain(Map<String, Map<String, List<String>>> read,
                                                                        java.util.Set<Long> uncertain) {
    for (long k : uncertain) {
      List<String> found = read.get("text").remove(Long.toString(k));
      assertTrue(found == null || found.equals(List.of("late " + k)), "key " + k + " holds " + found);
    }
    return read;
  }

  /** Compares table by table, naming what differs rather than printing every table. */
  private static void assertSameTables(Map<String, Map<String, List<String>>> expected,
                                       Map<String, Map<String, List<String>>> actual, String what) {
    assertEquals(expected.keySet(), actual.keySet(), what + ": tables");
    for (String table : expected.keySet()) {
      Map<String, List<String>> e = expected.get(table);
      Map<String, List<String>> a = actual.get(table);
      List<String> differ = new ArrayList<>();
      for (String k : new java.util.TreeSet<>(java.util.Set.copyOf(concat(e.keySet(), a.keySet())))) {
        if (!java.util.Objects.equals(e.get(k), a.get(k))) {
          differ.add(k + ": expected " + e.get(k) + ", got " + a.get(k));
        }
      }
      assertTrue(differ.isEmpty(), what + ": table '" + table + "' differs at " + differ.size() + " keys, first "
          + differ.subList(0, Math.min(5, differ.size())));
    }
  }

  private static List<String> concat(java.util.Set<String> a, java.util.Set<String> b) {
    List<String> out = new ArrayList<>(a);
    out.addAll(b);
    return out;
  }

  private void fill(ClusterSpec spec) throws Exception {
    Random rnd = new Random(42);
    try (SssClient client = SssClient.connect(spec)) {
      client.createTable("text", TEXT, false);
      client.createTable("multi", MULTI, false);
      client.createTable("nowal", NO_WAL, false);
      client.createTable("empty", TEXT, false);
      model.put("empty", new TreeMap<>());
      try (BulkWriter w = client.writer("text", TEXT.types())) {
        for (long i = 0; i < 3000; i++) {
          String v = "line " + i + " " + rnd.nextInt();
          w.put(Serdes.LONG.encodeKey(i), Serdes.STRING.encodeValue(v));
          model.computeIfAbsent("text", t -> new TreeMap<>()).put(Long.toString(i), new ArrayList<>(List.of(v)));
        }
      }
      List<Pair> multi = new ArrayList<>();
      for (long k = 0; k < 300; k++) {
        for (int v = 0; v <= k % 3; v++) {
          long value = rnd.nextInt(1000);
          multi.add(new Pair(Serdes.LONG.encodeKey(k), Serdes.LONG.encodeValue(value)));
          model.computeIfAbsent("multi", t -> new TreeMap<>()).computeIfAbsent(Long.toString(k), x -> new ArrayList<>())
              .add(Long.toString(value));
        }
      }
      client.putAll("multi", MULTI.types(), multi);
      List<Pair> nowal = new ArrayList<>();
      for (int i = 0; i < 500; i++) {
        byte[] value = new byte[rnd.nextInt(40)];
        rnd.nextBytes(value);
        nowal.add(new Pair(Serdes.STRING.encodeKey("k" + i), value));
        model.computeIfAbsent("nowal", t -> new TreeMap<>()).put("k" + i, new ArrayList<>(List.of(java.util.HexFormat.of().formatHex(value))));
      }
      client.putAll("nowal", NO_WAL.types(), nowal);
    }
    model.values().forEach(m -> m.values().forEach(vs -> vs.sort(null)));
  }

  private static Map<String, Map<String, List<String>>> read(SssClient client) {
    Map<String, Map<String, List<String>>> out = new TreeMap<>();
    for (TableStatus t : client.listTables()) {
      Map<String, List<String>> rows = new TreeMap<>();
      boolean multi = t.spec().multiValued();
      try (TableScan scan = client.scan(t.name(), ScanOptions.anyOrder())) {
        while (scan.hasNext()) {
          Pair p = scan.next();
          byte[] key = StoredKeys.withoutUniquifier(p.key(), multi);
          String k = t.spec().types().key() == DataType.LONG ? Long.toString(Serdes.LONG.decodeKey(key))
              : Serdes.STRING.decodeKey(key);
          String v = switch (t.spec().types().value()) {
            case LONG -> Long.toString(Serdes.LONG.decodeValue(p.value()));
            case STRING -> Serdes.STRING.decodeValue(p.value());
            default -> java.util.HexFormat.of().formatHex(p.value());
          };
          rows.computeIfAbsent(k, x -> new ArrayList<>()).add(v);
        }
      }
      rows.values().forEach(vs -> vs.sort(null));
      out.put(t.name(), rows);
    }
    return out;
  }
}
