package org.sss.client.cluster;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.io.IOException;
import java.net.InetAddress;
import java.net.ServerSocket;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.io.TempDir;
import org.sss.client.SssClient;

/** Cluster start's edges: failures after the lock, remembered heaps, odd paths. */
@Timeout(value = 240, unit = TimeUnit.SECONDS)
class ClusterStartEdgesTest {
  @TempDir
  Path work;

  @Test
  void nodeThatFailsAfterTakingItsLock_releasesIt_andTheNextStartWorks() throws Exception {
    Path dir = work.resolve("c");
    LocalProcessCluster cluster = LocalProcessCluster.start(dir, 2, 0, "256m");
    try {
      long pid0 = cluster.pid(0).orElseThrow();
      cluster.kill(1);
      int port1 = cluster.spec().node(1).port();
      try (ServerSocket squatter = new ServerSocket(port1, 1, InetAddress.getByName("127.0.0.1"))) {
        IOException e = assertThrows(IOException.class, () -> LocalProcessCluster.start(dir, 0, 0, null));
        assertTrue(e.getMessage().contains("node 1") && e.getMessage().contains("ddress already in use"), e.getMessage());
        assertTrue(!new NodeLockProbe(dir.resolve("node-1/data")).held(), "node 1's lock is free again");
        assertEquals(pid0, cluster.pid(0).orElseThrow(), "node 0 kept running");
      }
      cluster = LocalProcessCluster.start(dir, 0, 0, null);
      assertTrue(cluster.answers(0) && cluster.answers(1));
    } finally {
      cluster.stopAll();
    }
  }

  /**
   * A node's port held for a moment after its previous process released its lock (as a process
   * still ending holds its listening socket) is waited for: the start then succeeds, where the
   * node launched at once failed, its port taken.
   */
  @Test
  void portHeldForAMoment_isWaitedFor_andTheStartSucceeds() throws Exception {
    Path dir = work.resolve("w");
    LocalProcessCluster cluster = LocalProcessCluster.start(dir, 1, 0, "256m");
    try {
      cluster.stopAll();
      int port = cluster.spec().node(0).port();
      ServerSocket squatter = new ServerSocket(port, 1, InetAddress.getByName("127.0.0.1"));
      Thread release = new Thread(() -> {
        try {
          Thread.sleep(1_500);
          squatter.close();
        } catch (InterruptedException | IOException e) {
          throw new IllegalStateException(e);
        }
      });
      release.start();
      cluster = LocalProcessCluster.start(dir, 0, 0, null);
      release.join();
      assertTrue(cluster.answers(0), "node 0 started on its port once it was free");
    } finally {
      cluster.stopAll();
    }
  }

  /** launch.properties is a hand-editable file: a value with a trailing blank, or garbage. */
  @Test
  void rememberedHeap_withATrailingBlank_stillStartsTheNode() throws Exception {
    Path dir = work.resolve("h");
    LocalProcessCluster cluster = LocalProcessCluster.start(dir, 1, 0, "256m");
    cluster.stopAll();
    Path launch = dir.resolve("node-0/launch.properties");
    Files.writeString(launch, "heap=256m \n");
    try {
      cluster = LocalProcessCluster.start(dir, 0, 0, null);
      assertTrue(cluster.answers(0));
    } catch (IOException e) {
      throw new AssertionError("heap '256m ' from launch.properties: " + e.getMessage(), e);
    } finally {
      cluster.stopAll();
    }
  }

  @Test
  void rememberedHeap_garbage_isNamedAsSuch() throws Exception {
    Path dir = work.resolve("g");
    LocalProcessCluster cluster = LocalProcessCluster.start(dir, 1, 0, "256m");
    cluster.stopAll();
    Files.writeString(dir.resolve("node-0/launch.properties"), "heap=lots\n");
    IllegalArgumentException e = assertThrows(IllegalArgumentException.class,
        () -> LocalProcessCluster.start(dir, 0, 0, null));
    assertTrue(e.getMessage().contains("node-0") && e.getMessage().contains("lots"), e.getMessage());
    // giving a heap fixes it
    cluster = LocalProcessCluster.start(dir, 0, 0, "256m");
    try {
      assertTrue(cluster.answers(0));
    } finally {
      cluster.stopAll();
    }
  }

  @Test
  void clusterInADirectoryWithSpaces_startsStopsAndRestarts() throws Exception {
    Path dir = work.resolve("my cluster dir/with  two spaces");
    LocalProcessCluster cluster = LocalProcessCluster.start(dir, 2, 0, "256m");
    try {
      long pid1 = cluster.pid(1).orElseThrow();
      cluster.killNow(1);
      cluster = LocalProcessCluster.start(dir, 0, 0, null);
      assertTrue(cluster.pid(1).orElseThrow() != pid1);
      try (SssClient c = cluster.client()) {
        c.ping();
      }
      for (String line : cluster.stop()) {
        assertTrue(line.contains("stopped, "), line);
      }
      assertTrue(cluster.pid(0).isEmpty() && cluster.pid(1).isEmpty());
    } finally {
      cluster.stopAll();
    }
  }
  /** A failed start stops what it launched: no server of the directory is left running. */
  @Test
  void failedStart_stopsTheNodesItLaunched() throws Exception {
    Path dir = work.resolve("f");
    LocalProcessCluster.start(dir, 2, 0, "256m").stopAll();
    int port1 = LocalProcessCluster.attach(dir).spec().node(1).port();
    try (ServerSocket squatter = new ServerSocket(port1, 1, InetAddress.getByName("127.0.0.1"))) {
      IOException e = assertThrows(IOException.class, () -> LocalProcessCluster.start(dir, 0, 0, null));
      assertTrue(e.getMessage().contains("node 1"), e.getMessage());
    }
    String config = dir.resolve("node-0/node.properties").toString();
    Thread.sleep(500);
    long left = ProcessHandle.allProcesses().filter(ProcessHandle::isAlive)
        .filter(h -> CommandLines.of(h).contains(config)).count();
    assertEquals(0, left, "node 0, launched by the failed start, was stopped");
    assertTrue(!new NodeLockProbe(dir.resolve("node-0/data")).held());
  }
}
