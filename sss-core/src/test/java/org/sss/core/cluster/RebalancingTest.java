package org.sss.core.cluster;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNotEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.util.ArrayList;
import java.util.HashSet;
import java.util.List;
import java.util.Properties;
import java.util.Set;
import java.util.stream.IntStream;
import org.junit.jupiter.api.Test;

/**
 * {@link Rebalancing}: every map it makes is one {@link ReplicaPlacement} accepts, spreads copies
 * and leadership evenly, and moves only the partitions it must (counted against what adding or
 * removing a node needs at the least).
 */
class RebalancingTest {
  private static List<ReplicaPlacement.Location> hosts(int n) {
    return IntStream.range(0, n).mapToObj(i -> new ReplicaPlacement.Location("host-" + i, "default")).toList();
  }

  private static ReplicaPlacement roundRobin(int partitions, int nodes, int copies) {
    return ReplicaPlacement.place(PartitionMap.roundRobin(partitions, nodes), hosts(nodes), copies);
  }

  /** Each node's copies, and each node's leads, differ by at most one from any other's. */
  private static void assertEven(ReplicaPlacement placement, int nodes) {
    int[] held = new int[nodes];
    int[] led = new int[nodes];
    for (int p = 0; p < placement.partitions(); p++) {
      List<Integer> c = placement.replicasOf(p);
      assertEquals(placement.replication(), new HashSet<>(c).size(), "partition " + p + "'s copies: " + c);
      c.forEach(n -> held[n]++);
      led[c.get(0)]++;
    }
    assertTrue(IntStream.of(held).max().getAsInt() - IntStream.of(held).min().getAsInt() <= 1,
        "copies per node " + java.util.Arrays.toString(held));
    assertTrue(IntStream.of(led).max().getAsInt() - IntStream.of(led).min().getAsInt() <= 1,
        "leads per node " + java.util.Arrays.toString(led));
  }

  @Test
  void addingANode_movesOnlyItsShare() {
    ReplicaPlacement was = roundRobin(24, 3, 2);
    PartitionMap map = Rebalancing.plan(was, 4, hosts(4));
    ReplicaPlacement now = ReplicaPlacement.place(map, hosts(4), 2);
    assertEven(now, 4);
    List<Integer> moved = Rebalancing.moved(was, now);
    // the new node holds 48 / 4 = 12 copies, each of another partition: 12 partitions at least must move
    assertEquals(12, now.partitionsHeldBy(3).size());
    assertEquals(now.partitionsHeldBy(3), moved, "only the partitions that gained a copy on the new node moved");
  }

  @Test
  void removingANode_movesOnlyWhatItHeld() {
    ReplicaPlacement was = roundRobin(32, 4, 2);
    PartitionMap map = Rebalancing.plan(was, 3, hosts(3));
    ReplicaPlacement now = ReplicaPlacement.place(map, hosts(3), 2);
    assertEven(now, 3);
    assertEquals(was.partitionsHeldBy(3), Rebalancing.moved(was, now), "only node 3's partitions moved");
    for (int p = 0; p < 32; p++) {
      assertTrue(now.replicasOf(p).containsAll(was.replicasOf(p).stream().filter(n -> n < 3).toList()),
          "partition " + p + " keeps its copies on the nodes that stay");
    }
  }

  @Test
  void oneCopy_growAndShrink() {
    ReplicaPlacement was = roundRobin(16, 2, 1);
    PartitionMap grown = Rebalancing.plan(was, 3, hosts(3));
    assertFalse(grown.listsCopies(), "one copy: the owners say it all");
    ReplicaPlacement now = ReplicaPlacement.place(grown, hosts(3), 1);
    assertEven(now, 3);
    assertEquals(now.partitionsHeldBy(2), Rebalancing.moved(was, now));
    assertEquals(5, Rebalancing.moved(was, now).size(), "16 partitions over 3 nodes: the new one takes 5");
    PartitionMap back = Rebalancing.plan(now, 2, hosts(2));
    assertEquals(now.partitionsHeldBy(2), Rebalancing.moved(now, ReplicaPlacement.place(back, hosts(2), 1)));
  }

  @Test
  void threeCopies_repeatedGrowthStaysEvenAndMovesLittle() {
    ReplicaPlacement placement = roundRobin(40, 3, 3);
    for (int n = 4; n <= 6; n++) {
      PartitionMap map = Rebalancing.plan(placement, n, hosts(n));
      ReplicaPlacement next = ReplicaPlacement.place(map, hosts(n), 3);
      assertEven(next, n);
      int newCopies = next.partitionsHeldBy(n - 1).size();
      assertTrue(Rebalancing.moved(placement, next).size() <= newCopies,
          "growing to " + n + ": moved " + Rebalancing.moved(placement, next).size() + " partitions for "
              + newCopies + " new copies");
      placement = next;
    }
  }

  @Test
  void everySmallShape_growsAndShrinksEvenly() {
    // among them 4 partitions, 2 copies, 3 nodes to 4: the new node leads only through a chain of hand-overs
    for (int partitions : new int[] {4, 5, 8, 13, 24}) {
      for (int nodes = 1; nodes <= 5; nodes++) {
        for (int copies = 1; copies <= Math.min(3, nodes); copies++) {
          if (partitions < nodes) {
            continue;
          }
          ReplicaPlacement was = roundRobin(partitions, nodes, copies);
          for (int to : new int[] {nodes - 1, nodes + 1, nodes + 2}) {
            if (to < copies || to < 1 || to > partitions) {
              continue;
            }
            String shape = partitions + " partitions, " + copies + " copies, " + nodes + " -> " + to + " nodes";
            PartitionMap map = Rebalancing.plan(was, to, hosts(to));
            ReplicaPlacement now = ReplicaPlacement.place(map, hosts(to), copies);
            try {
              assertEven(now, to);
            } catch (AssertionError e) {
              throw new AssertionError(shape + ": " + e.getMessage(), e);
            }
          }
        }
      }
    }
  }

  @Test
  void racksAndHosts_areRespected() {
    // nodes 0..3 on racks a,a,b,b; nodes 4 and 5 join on racks a and b; node 5 shares node 2's machine
    List<ReplicaPlacement.Location> four = List.of(loc("m0", "a"), loc("m1", "a"), loc("m2", "b"), loc("m3", "b"));
    List<ReplicaPlacement.Location> six = new ArrayList<>(four);
    six.add(loc("m4", "a"));
    six.add(loc("m2", "b"));
    ReplicaPlacement was = ReplicaPlacement.place(PartitionMap.roundRobin(48, 4), four, 2);
    ReplicaPlacement now = ReplicaPlacement.place(Rebalancing.plan(was, 6, six), six, 2);
    for (int p = 0; p < 48; p++) {
      Set<String> racks = new HashSet<>();
      Set<String> machines = new HashSet<>();
      for (int n : now.replicasOf(p)) {
        racks.add(six.get(n).rack());
        machines.add(six.get(n).host());
      }
      assertEquals(2, racks.size(), "partition " + p + " on both racks: " + now.replicasOf(p));
      assertEquals(2, machines.size(), "partition " + p + " on two machines: " + now.replicasOf(p));
    }
  }

  @Test
  void samePlanEveryTime_andTheListedCopiesSurviveTheClusterFile() {
    ReplicaPlacement was = roundRobin(24, 3, 2);
    PartitionMap a = Rebalancing.plan(was, 4, hosts(4));
    assertEquals(a, Rebalancing.plan(was, 4, hosts(4)));
    List<NodeAddress> nodes = IntStream.range(0, 4).mapToObj(i -> new NodeAddress(i, "127.0.0.1", 7000 + 2 * i))
        .toList();
    ClusterSpec spec = new ClusterSpec(nodes, a, "s", false, null, 2, hosts(4));
    Properties props = spec.toProperties();
    assertEquals(a.formatCopies(), props.getProperty("partition.copies"));
    ClusterSpec read = ClusterSpec.fromProperties(props);
    assertEquals(a, read.partitionMap());
    assertEquals(spec.placement().replicasOf(5), read.placement().replicasOf(5));
    PartitionMap ownersOnly = PartitionMap.of(IntStream.range(0, 24).map(p -> a.ownerOf(p)).toArray(), 4);
    assertNotEquals(ownersOnly.layout(), a.layout(), "the listed copies are part of the layout");
  }

  @Test
  void listedCopies_thatBreakTheRules_areRefused() {
    PartitionMap map = PartitionMap.roundRobin(4, 2);
    assertThrows(IllegalArgumentException.class, () -> map.withCopies("0/1,1/0,0/0,1/0"), "a node twice");
    assertThrows(IllegalArgumentException.class, () -> map.withCopies("1/0,1/0,0/1,1/0"), "first copy not the owner");
    assertThrows(IllegalArgumentException.class, () -> map.withCopies("0/1,1/0,0/1"), "a partition short");
    assertThrows(IllegalArgumentException.class, () -> map.withCopies("0/1,1/0,0/x,1/0"), "not a number");
    PartitionMap twoCopies = map.withCopies("0/1,1/0,0/1,1/0");
    IllegalArgumentException wrongCount = assertThrows(IllegalArgumentException.class,
        () -> ReplicaPlacement.place(PartitionMap.roundRobin(4, 3).withCopies("0/1,1/2,2/0,0/1"), hosts(3), 3));
    assertTrue(wrongCount.getMessage().contains("replication=3"), wrongCount.getMessage());
    IllegalArgumentException sameHost = assertThrows(IllegalArgumentException.class,
        () -> ReplicaPlacement.place(twoCopies, List.of(loc("m", "a"), loc("m", "a")), 2));
    assertTrue(sameHost.getMessage().contains("host"), sameHost.getMessage());
    assertThrows(IllegalArgumentException.class, () -> Rebalancing.plan(roundRobin(4, 2, 2), 5, hosts(5)),
        "more nodes than partitions");
  }

  private static ReplicaPlacement.Location loc(String host, String rack) {
    return new ReplicaPlacement.Location(host, rack);
  }
}
