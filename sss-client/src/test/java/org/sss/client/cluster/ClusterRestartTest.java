package org.sss.client.cluster;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.io.TempDir;
import org.sss.client.BulkWriter;
import org.sss.client.SssClient;
import org.sss.client.TableSpec;
import org.sss.core.keys.KeyCodec;
import org.sss.core.keys.PairTypes;
import org.sss.core.proto.DataType;

/**
 * Restarting crashed nodes of a 3-process cluster: {@code kill -9} and an immediate start,
 * while the killed process may still be being torn down, must bring every node back with its
 * data, every time; a start that fails for one node must leave the running ones alone; a stop
 * must keep what tables without a WAL acknowledged.
 */
@Timeout(value = 400, unit = TimeUnit.SECONDS)
class ClusterRestartTest {
  static final int ROWS = 100_000;
  static final int ROUNDS = 10; // every node killed alone, and every pair of nodes together

  @TempDir
  Path work;

  private static void load(SssClient client, String table, TableSpec options) {
    client.createTable(table, options, false);
    try (BulkWriter w = client.writer(table, options.types())) {
      for (long i = 1; i <= ROWS; i++) {
        w.put(KeyCodec.encodeLong(i), ("line " + i).getBytes());
      }
    }
  }

  private static TableSpec text() {
    return TableSpec.of(PairTypes.of(DataType.LONG, DataType.STRING));
  }

  private static void assertWhole(LocalProcessCluster cluster, String table) {
    for (int n = 0; n < 3; n++) {
      assertTrue(cluster.answers(n), "node " + n + " answers");
    }
    try (SssClient client = cluster.client()) {
      assertEquals(ROWS, client.count(table));
    }
  }

  @Test
  void killNine_thenStartAtOnce_bringsEveryNodeBack_everyTime() throws Exception {
    Path dir = work.resolve("c");
    LocalProcessCluster cluster = LocalProcessCluster.start(dir, 3, 0, "256m");
    try {
      try (SssClient client = cluster.client()) {
        load(client, "lines", text());
      }
      for (int round = 0; round < ROUNDS; round++) {
        List<Integer> victims = round % 2 == 0 ? List.of(round / 2 % 3) : List.of(round % 3, (round + 1) % 3);
        List<Long> before = new ArrayList<>();
        for (int v : victims) {
          before.add(cluster.pid(v).orElseThrow());
          cluster.killNow(v); // no wait: the process may still hold its lock while it dies
        }
        cluster = LocalProcessCluster.start(dir, 0, 0, null);
        for (int i = 0; i < victims.size(); i++) {
          long now = cluster.pid(victims.get(i)).orElseThrow();
          assertTrue(now != before.get(i), "round " + round + ": node " + victims.get(i) + " was restarted");
        }
        assertWhole(cluster, "lines");
      }
    } finally {
      cluster.stopAll();
    }
  }

  @Test
  void startThatFailsForOneNode_leavesTheRunningNodesRunning_andSaysWhy() throws Exception {
    Path dir = work.resolve("f");
    LocalProcessCluster cluster = LocalProcessCluster.start(dir, 3, 0, "256m");
    try {
      try (SssClient client = cluster.client()) {
        load(client, "lines", text());
      }
      long pid0 = cluster.pid(0).orElseThrow();
      long pid1 = cluster.pid(1).orElseThrow();
      cluster.kill(2);
      Path config = dir.resolve("node-2/node.properties");
      String good = Files.readString(config);
      Files.writeString(config, good + "no.such.key=1\n");
      IOException e = assertThrows(IOException.class, () -> LocalProcessCluster.start(dir, 0, 0, null));
      assertTrue(e.getMessage().contains("node 2"), e.getMessage());
      assertTrue(e.getMessage().contains("no.such.key"), "the node's own words: " + e.getMessage());
      assertEquals(pid0, cluster.pid(0).orElseThrow(), "node 0 kept running");
      assertEquals(pid1, cluster.pid(1).orElseThrow(), "node 1 kept running");
      assertTrue(cluster.answers(0) && cluster.answers(1));
      Files.writeString(config, good);
      cluster = LocalProcessCluster.start(dir, 0, 0, null);
      assertWhole(cluster, "lines");
    } finally {
      cluster.stopAll();
    }
  }

  @Test
  void twoStartsAtOnce_runEachNodeOnce() throws Exception {
    Path dir = work.resolve("t");
    LocalProcessCluster.start(dir, 3, 0, "256m").stopAll();
    CompletableFuture<LocalProcessCluster> a = CompletableFuture.supplyAsync(() -> startQuietly(dir));
    CompletableFuture<LocalProcessCluster> b = CompletableFuture.supplyAsync(() -> startQuietly(dir));
    LocalProcessCluster cluster = a.get(120, TimeUnit.SECONDS);
    b.get(120, TimeUnit.SECONDS);
    try {
      for (int n = 0; n < 3; n++) {
        assertTrue(cluster.answers(n));
        String config = dir.resolve("node-" + n + "/node.properties").toString();
        long servers = ProcessHandle.allProcesses()
            .filter(h -> CommandLines.of(h).contains(config))
            .count();
        assertEquals(1, servers, "node " + n + " runs in exactly one process");
      }
    } finally {
      cluster.stopAll();
    }
  }

  private static LocalProcessCluster startQuietly(Path dir) {
    try {
      return LocalProcessCluster.start(dir, 0, 0, null);
    } catch (IOException e) {
      throw new IllegalStateException(e);
    }
  }

  @Test
  void stop_flushesTablesWithoutAWal_soTheirAcknowledgedPairsSurvive() throws Exception {
    Path dir = work.resolve("s");
    LocalProcessCluster cluster = LocalProcessCluster.start(dir, 3, 0, "256m");
    try {
      try (SssClient client = cluster.client()) {
        load(client, "nowal", text().writeAheadLog(false));
      }
      List<String> report = cluster.stop();
      assertEquals(3, report.size(), report.toString());
      for (String line : report) {
        assertTrue(line.contains("stopped, ") && line.contains("flushed"), report.toString());
      }
      for (int n = 0; n < 3; n++) {
        assertTrue(cluster.pid(n).isEmpty(), "node " + n + " is gone");
      }
      cluster = LocalProcessCluster.start(dir, 0, 0, null);
      assertWhole(cluster, "nowal");
    } finally {
      cluster.stopAll();
    }
  }

  @Test
  void existingCluster_refusesAnotherNodeCount() throws Exception {
    Path dir = work.resolve("n");
    LocalProcessCluster cluster = LocalProcessCluster.start(dir, 3, 0, "256m");
    try {
      IllegalArgumentException e = assertThrows(IllegalArgumentException.class,
          () -> LocalProcessCluster.start(dir, 5, 0, null));
      assertTrue(e.getMessage().contains("3 nodes"), e.getMessage());
    } finally {
      cluster.stopAll();
    }
  }
}
