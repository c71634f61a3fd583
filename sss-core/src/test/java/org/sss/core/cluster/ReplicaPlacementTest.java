package org.sss.core.cluster;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNotEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.util.ArrayList;
import java.util.HashSet;
import java.util.List;
import java.util.Set;
import org.junit.jupiter.api.Test;
import org.sss.core.cluster.ReplicaPlacement.Location;

class ReplicaPlacementTest {
  /** Each node on a machine and rack of its own. */
  static List<Location> distinct(int n) {
    List<Location> out = new ArrayList<>();
    for (int i = 0; i < n; i++) {
      out.add(new Location("h" + i, "r" + i));
    }
    return out;
  }

  static List<Location> of(String... hostRack) {
    List<Location> out = new ArrayList<>();
    for (String s : hostRack) {
      String[] hr = s.split("/");
      out.add(new Location(hr[0], hr[1]));
    }
    return out;
  }

  /** The rules every placement must keep, checked from the placement alone. */
  static void assertRules(ReplicaPlacement rp, PartitionMap map, List<Location> locs, int r) {
    Set<String> allRacks = new HashSet<>();
    locs.forEach(l -> allRacks.add(l.rack()));
    for (int p = 0; p < map.partitions(); p++) {
      List<Integer> copies = rp.replicasOf(p);
      assertEquals(r, copies.size(), "partition " + p);
      assertEquals(map.ownerOf(p), copies.get(0), "partition " + p + ": the map's owner leads");
      Set<String> hosts = new HashSet<>();
      Set<String> racks = new HashSet<>();
      for (int node : copies) {
        assertTrue(hosts.add(locs.get(node).host()), "partition " + p + ": two copies on host "
            + locs.get(node).host() + " " + copies);
        racks.add(locs.get(node).rack());
      }
      assertEquals(Math.min(r, allRacks.size()), racks.size(), "partition " + p + " spans racks " + racks);
    }
  }

  @Test
  void replicationOne_isTheMapItself() {
    PartitionMap map = PartitionMap.roundRobin(24, 3);
    ReplicaPlacement rp = ReplicaPlacement.place(map, distinct(3), 1);
    for (int p = 0; p < 24; p++) {
      assertEquals(List.of(map.ownerOf(p)), rp.replicasOf(p));
    }
  }

  @Test
  void twoCopies_distinctHosts_evenlyHeld_andANodesPartitionsSpreadOverAllOthers() {
    int n = 4;
    PartitionMap map = PartitionMap.roundRobin(8 * n, n);
    List<Location> locs = distinct(n);
    ReplicaPlacement rp = ReplicaPlacement.place(map, locs, 2);
    assertRules(rp, map, locs, 2);
    for (int node = 0; node < n; node++) {
      assertEquals(16, rp.partitionsHeldBy(node).size(), "node " + node + " holds 8 led + 8 copies");
      // when this node dies, each survivor takes over some of its partitions
      Set<Integer> takeOver = new HashSet<>();
      for (int p : map.partitionsOf(node)) {
        takeOver.add(rp.replicasOf(p).get(1));
      }
      assertEquals(n - 1, takeOver.size(), "node " + node + "'s partitions fail over to " + takeOver);
    }
  }

  @Test
  void threeCopies_onFiveNodes_keepTheRules() {
    PartitionMap map = PartitionMap.roundRobin(40, 5);
    List<Location> locs = distinct(5);
    assertRules(ReplicaPlacement.place(map, locs, 3), map, locs, 3);
  }

  @Test
  void nodesSharingAHost_neverHoldTwoCopiesOfAPartition() {
    List<Location> locs = of("a/r", "a/r", "b/r", "b/r", "c/r", "c/r");
    PartitionMap map = PartitionMap.roundRobin(48, 6);
    assertRules(ReplicaPlacement.place(map, locs, 2), map, locs, 2);
    assertRules(ReplicaPlacement.place(map, locs, 3), map, locs, 3);
  }

  @Test
  void copiesSpreadOverRacks_asFarAsThereAreRacks() {
    List<Location> locs = of("a/r1", "b/r1", "c/r2", "d/r2");
    PartitionMap map = PartitionMap.roundRobin(32, 4);
    assertRules(ReplicaPlacement.place(map, locs, 2), map, locs, 2); // every partition on both racks
    assertRules(ReplicaPlacement.place(map, locs, 3), map, locs, 3); // both racks, three hosts
  }

  @Test
  void tooFewHosts_isAnErrorNamingThem() {
    List<Location> oneMachine = of("box/r", "box/r", "box/r");
    IllegalArgumentException e = assertThrows(IllegalArgumentException.class,
        () -> ReplicaPlacement.place(PartitionMap.roundRobin(12, 3), oneMachine, 2));
    assertTrue(e.getMessage().contains("replication=2 needs 2 nodes on distinct hosts")
        && e.getMessage().contains("1 host(s): [box]"), e.getMessage());
  }

  @Test
  void replicationOutOfRange_isAnError() {
    PartitionMap map = PartitionMap.roundRobin(6, 3);
    assertThrows(IllegalArgumentException.class, () -> ReplicaPlacement.place(map, distinct(3), 0));
    assertThrows(IllegalArgumentException.class, () -> ReplicaPlacement.place(map, distinct(3), 4));
  }

  @Test
  void samePlacement_forEveryoneWhoComputesIt() {
    PartitionMap map = PartitionMap.roundRobin(30, 5);
    List<Location> locs = of("a/x", "b/x", "c/y", "d/y", "e/z");
    ReplicaPlacement one = ReplicaPlacement.place(map, locs, 3);
    ReplicaPlacement two = ReplicaPlacement.place(map, List.copyOf(locs), 3);
    for (int p = 0; p < 30; p++) {
      assertEquals(one.replicasOf(p), two.replicasOf(p));
      assertNotEquals(one.replicasOf(p).get(0), one.replicasOf(p).get(1));
    }
  }
}
