package org.sss.core.cluster;

import java.util.ArrayList;
import java.util.HashSet;
import java.util.List;
import java.util.Set;
import java.util.TreeSet;

/**
 * Which nodes hold the copies of each partition: R nodes per partition, the first of them its
 * preferred leader, the owner the {@link PartitionMap} names. Placing the leaders where the
 * map already puts each partition keeps a cluster's data where it is when replication is turned
 * on; only the copies are new.
 *
 * <h2>Rules</h2>
 * HDFS's, as the Hadoop clusters SSS is measured against use them:
 * <ul>
 *   <li>two copies of a partition never sit on one <em>host</em> (a machine: losing it loses
 *       every copy on it), so R needs at least R distinct hosts;
 *   <li>copies spread over <em>racks</em> (a switch or a power feed) as far as there are racks:
 *       with as many racks as copies, every copy is on a rack of its own;
 *   <li>the copies of one node's partitions are spread over all other nodes, not all given to
 *       its neighbour, so that when the node dies the partitions it led are taken over by every
 *       survivor alike.
 * </ul>
 *
 * <h2>How</h2>
 * For a leader's k-th partition, candidates are the other nodes in ring order starting k
 * places after the leader's successor; the first that satisfy the host rule and, while racks
 * remain unused, the rack rule are taken. The result depends only on the map, the labels and R,
 * so every node and client computes the same placement. A map that lists its copies (a
 * rebalanced cluster's, see {@link Rebalancing}) is taken as it is, checked against the count
 * and the host rule.
 */
public final class ReplicaPlacement {
  /** Where a node runs: its machine and its rack (labels, compared by equality). */
  public record Location(String host, String rack) {
    public Location {
      if (host == null || host.isBlank() || rack == null || rack.isBlank()) {
        throw new IllegalArgumentException("a node's host and rack labels must not be empty");
      }
    }
  }

  private final int[][] replicas;
  private final int replication;

  private ReplicaPlacement(int[][] replicas, int replication) {
    this.replicas = replicas;
    this.replication = replication;
  }

  /**
   * Places {@code replication} copies of every partition of {@code map} on the nodes at
   * {@code locations} (indexed by node id).
   *
   * @throws IllegalArgumentException when the rules cannot be met: fewer distinct hosts than
   *                                  copies, or a replication outside 1..nodes
   */
  public static ReplicaPlacement place(PartitionMap map, List<Location> locations, int replication) {
    int n = map.nodes();
    if (locations.size() != n) {
      throw new IllegalArgumentException("the map has " + n + " nodes but " + locations.size() + " locations were given");
    }
    if (replication < 1 || replication > n) {
      throw new IllegalArgumentException("replication must be between 1 and the node count (" + n + "), got "
          + replication);
    }
    Set<String> allHosts = new HashSet<>();
    Set<String> allRacks = new HashSet<>();
    for (Location l : locations) {
      allHosts.add(l.host());
      allRacks.add(l.rack());
    }
    if (allHosts.size() < replication) {
      throw new IllegalArgumentException("replication=" + replication + " needs " + replication
          + " nodes on distinct hosts (two copies of a partition never share a host), but the " + n
          + " nodes run on " + allHosts.size() + " host(s): " + new TreeSet<>(allHosts));
    }
    if (map.listsCopies()) {
      return listed(map, locations, replication);
    }
    int racksWanted = Math.min(replication, allRacks.size());
    int[][] out = new int[map.partitions()][];
    int[] ordinal = new int[n];
    for (int p = 0; p < map.partitions(); p++) {
      int leader = map.ownerOf(p);
      int k = ordinal[leader]++;
      out[p] = copiesOf(p, leader, k, locations, replication, racksWanted);
    }
    return new ReplicaPlacement(out, replication);
  }

  /** The copies the map lists, checked against the count and the host rule. */
  private static ReplicaPlacement listed(PartitionMap map, List<Location> locations, int replication) {
    int[][] out = new int[map.partitions()][];
    for (int p = 0; p < map.partitions(); p++) {
      int[] c = map.listedCopies(p);
      if (c.length != replication) {
        throw new IllegalArgumentException("partition.copies lists " + c.length + " copies of partition " + p
            + " but replication=" + replication);
      }
      Set<String> hosts = new HashSet<>();
      for (int node : c) {
        if (!hosts.add(locations.get(node).host())) {
          throw new IllegalArgumentException("partition.copies puts two copies of partition " + p + " on host "
              + locations.get(node).host() + " (two copies of a partition never share a host)");
        }
      }
      out[p] = c;
    }
    return new ReplicaPlacement(out, replication);
  }

  private static int[] copiesOf(int partition, int leader, int k, List<Location> locations, int replication,
                                int racksWanted) {
    int n = locations.size();
    List<Integer> chosen = new ArrayList<>(replication);
    Set<String> hosts = new HashSet<>();
    Set<String> racks = new HashSet<>();
    chosen.add(leader);
    hosts.add(locations.get(leader).host());
    racks.add(locations.get(leader).rack());
    int start = n == 1 ? 0 : k % (n - 1);
    // first pass: a new host, and a new rack while racks remain unused; second: a new host
    for (int pass = 0; pass < 2 && chosen.size() < replication; pass++) {
      for (int i = 0; i < n - 1 && chosen.size() < replication; i++) {
        int c = (leader + 1 + (start + i) % (n - 1)) % n;
        Location l = locations.get(c);
        if (chosen.contains(c) || hosts.contains(l.host())) {
          continue;
        }
        if (pass == 0 && racks.size() < racksWanted && racks.contains(l.rack())) {
          continue;
        }
        chosen.add(c);
        hosts.add(l.host());
        racks.add(l.rack());
      }
    }
    if (chosen.size() < replication) {
      // only reachable when the leader's own host holds most nodes; the host count check passed
      throw new IllegalArgumentException("partition " + partition + ": found only " + chosen.size()
          + " nodes on distinct hosts for replication=" + replication);
    }
    return chosen.stream().mapToInt(Integer::intValue).toArray();
  }

  /** Copies per partition. */
  public int replication() {
    return replication;
  }

  public int partitions() {
    return replicas.length;
  }

  /** The nodes holding a partition's copies, its preferred leader first. */
  public List<Integer> replicasOf(int partition) {
    List<Integer> out = new ArrayList<>(replication);
    for (int node : replicas[partition]) {
      out.add(node);
    }
    return out;
  }

  /**
   * True when {@code node} is among the first {@code copies} nodes of the partition: the nodes
   * that hold a table keeping that many copies (a table between a job's stages keeps one).
   */
  public boolean holds(int node, int partition, int copies) {
    int[] r = replicas[partition];
    for (int i = 0; i < Math.min(Math.max(1, copies), r.length); i++) {
      if (r[i] == node) {
        return true;
      }
    }
    return false;
  }

  /** The partitions of which {@code node} holds a copy (leading or not), ascending. */
  public List<Integer> partitionsHeldBy(int node) {
    List<Integer> out = new ArrayList<>();
    for (int p = 0; p < replicas.length; p++) {
      for (int r : replicas[p]) {
        if (r == node) {
          out.add(p);
          break;
        }
      }
    }
    return out;
  }
}
