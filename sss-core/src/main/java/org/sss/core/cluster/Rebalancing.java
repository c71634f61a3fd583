package org.sss.core.cluster;

import java.util.ArrayList;
import java.util.BitSet;
import java.util.HashSet;
import java.util.List;
import java.util.Set;
import java.util.TreeSet;

/**
 * Where each partition's copies go when nodes are added to a cluster or the last ones removed
 * for good, moving as few partitions as it can: the partition count stays, so a key keeps its
 * partition, and only partitions whose set of copies changes have data to move.
 *
 * <h2>How</h2>
 * <ol>
 *   <li>Copies on removed nodes are taken away; each partition left short gets a copy on the
 *       least loaded node its rules allow.
 *   <li>While some node holds two or more copies more than another, one copy moves from the
 *       most loaded node to the least loaded one; a partition that already moves is preferred,
 *       and so is a copy that does not lead.
 *   <li>Leadership (the first copy: where map tasks run) moves between a partition's copies,
 *       which moves no data, until every node leads as many partitions as any other, give or
 *       take one.
 * </ol>
 * The rules are {@link ReplicaPlacement}'s: two copies of a partition never share a host, and a
 * move never leaves a partition on fewer racks than copies while there are racks enough. The
 * result depends only on its inputs, so running it twice gives the same map.
 */
public final class Rebalancing {
  private Rebalancing() {
  }

  /**
   * The map of a cluster of {@code nodes} nodes (at {@code locations}, indexed by node id; the
   * first ones are the nodes of {@code was}) that keeps {@code was.replication()} copies of each
   * partition and moves as few as it can. With more than one copy it lists the copies
   * ({@link PartitionMap#withCopies}).
   *
   * @throws IllegalArgumentException when the nodes cannot hold the copies by the rules
   */
  public static PartitionMap plan(ReplicaPlacement was, int nodes, List<ReplicaPlacement.Location> locations) {
    int partitions = was.partitions();
    int copies = was.replication();
    if (locations.size() != nodes) {
      throw new IllegalArgumentException(nodes + " nodes but " + locations.size() + " locations");
    }
    if (nodes > partitions) {
      throw new IllegalArgumentException(nodes + " nodes cannot each lead one of " + partitions + " partitions;"
          + " give the cluster more partitions (cluster resize --partitions)");
    }
    Set<String> hosts = new HashSet<>();
    Set<String> racks = new HashSet<>();
    for (ReplicaPlacement.Location l : locations) {
      hosts.add(l.host());
      racks.add(l.rack());
    }
    if (hosts.size() < copies) {
      throw new IllegalArgumentException(copies + " copies of each partition need " + copies
          + " nodes on distinct hosts, but the " + nodes + " nodes run on " + hosts.size() + ": " + new TreeSet<>(hosts));
    }
    Plan plan = new Plan(nodes, copies, Math.min(copies, racks.size()), locations);
    for (int p = 0; p < partitions; p++) {
      List<Integer> kept = new ArrayList<>();
      for (int node : was.replicasOf(p)) {
        if (node < nodes && plan.hostFree(kept, -1, node)) {
          kept.add(node);
        }
      }
      if (kept.size() < copies) {
        plan.moved.set(p);
      }
      plan.copies.add(kept);
      kept.forEach(n -> plan.load[n]++);
    }
    for (int p = 0; p < partitions; p++) {
      List<Integer> c = plan.copies.get(p);
      while (c.size() < copies) {
        int best = plan.leastLoadedAllowed(c);
        if (best < 0) {
          throw new IllegalArgumentException("partition " + p + ": no node left that its rules allow a copy on");
        }
        c.add(best);
        plan.load[best]++;
      }
    }
    plan.spreadCopies();
    plan.spreadLeaders();
    int[] owners = new int[partitions];
    int[][] listed = new int[partitions][];
    for (int p = 0; p < partitions; p++) {
      listed[p] = plan.copies.get(p).stream().mapToInt(Integer::intValue).toArray();
      owners[p] = listed[p][0];
    }
    PartitionMap map = PartitionMap.of(owners, nodes);
    return copies > 1 ? map.withCopies(listed) : map;
  }

  /**
   * The partitions whose set of copies differs between two placements of one partition count
   * (a change of leader alone moves no data), ascending.
   */
  public static List<Integer> moved(ReplicaPlacement from, ReplicaPlacement to) {
    if (from.partitions() != to.partitions()) {
      throw new IllegalArgumentException("placements of " + from.partitions() + " and " + to.partitions()
          + " partitions");
    }
    List<Integer> out = new ArrayList<>();
    for (int p = 0; p < from.partitions(); p++) {
      if (!new HashSet<>(from.replicasOf(p)).equals(new HashSet<>(to.replicasOf(p)))) {
        out.add(p);
      }
    }
    return out;
  }

  /** The placement being made: each partition's copies (its leader first) and each node's load. */
  private static final class Plan {
    final int nodes;
    final int copiesEach;
    final int racksWanted;
    final List<ReplicaPlacement.Location> locations;
    final List<List<Integer>> copies = new ArrayList<>();
    final int[] load;
    /** Partitions whose set of copies changed. */
    final BitSet moved = new BitSet();

    Plan(int nodes, int copiesEach, int racksWanted, List<ReplicaPlacement.Location> locations) {
      this.nodes = nodes;
      this.copiesEach = copiesEach;
      this.racksWanted = racksWanted;
      this.locations = locations;
      this.load = new int[nodes];
    }

    /**
     * Whether {@code node} may take the place of {@code replaced} (-1: be added) among
     * {@code copies}: not there already, no host twice, and on as many racks as wanted (an added
     * copy), or on no fewer than before (a replaced one) while fewer than wanted.
     */
    boolean allowed(List<Integer> copies, int replaced, int node) {
      if (!hostFree(copies, replaced, node)) {
        return false;
      }
      Set<String> racksBefore = new HashSet<>();
      Set<String> racksAfter = new HashSet<>();
      for (int c : copies) {
        racksBefore.add(locations.get(c).rack());
        if (c != replaced) {
          racksAfter.add(locations.get(c).rack());
        }
      }
      racksAfter.add(locations.get(node).rack());
      int wanted = replaced < 0 ? Math.min(racksWanted, copies.size() + 1) : Math.min(racksWanted, racksBefore.size());
      return racksAfter.size() >= wanted;
    }

    /** Whether {@code node} may take {@code replaced}'s place (-1: be added) by the host rule alone. */
    boolean hostFree(List<Integer> copies, int replaced, int node) {
      if (copies.contains(node)) {
        return false;
      }
      for (int c : copies) {
        if (c != replaced && locations.get(c).host().equals(locations.get(node).host())) {
          return false;
        }
      }
      return true;
    }

    /** The least loaded node that may join {@code copies} (the lowest id among equals), or -1. */
    int leastLoadedAllowed(List<Integer> copies) {
      int best = -1;
      for (int n = 0; n < nodes; n++) {
        if (allowed(copies, -1, n) && (best < 0 || load[n] < load[best])) {
          best = n;
        }
      }
      if (best < 0) {
        // the rack rule relaxed: a host of its own is all a copy strictly needs
        for (int n = 0; n < nodes; n++) {
          if (hostFree(copies, -1, n) && (best < 0 || load[n] < load[best])) {
            best = n;
          }
        }
      }
      return best;
    }

    /** Moves copies from the most to the least loaded nodes until no two differ by more than one. */
    void spreadCopies() {
      for (int guard = copies.size() * copiesEach * nodes; guard > 0; guard--) {
        boolean movedOne = false;
        for (int from : byLoad(false)) {
          for (int to : byLoad(true)) {
            if (load[from] - load[to] <= 1) {
              break;
            }
            int p = partitionToMove(from, to);
            if (p >= 0) {
              List<Integer> c = copies.get(p);
              c.set(c.indexOf(from), to);
              load[from]--;
              load[to]++;
              moved.set(p);
              movedOne = true;
              break;
            }
          }
          if (movedOne) {
            break;
          }
        }
        if (!movedOne) {
          return;
        }
      }
    }

    /**
     * A partition with a copy on {@code from} that may move to {@code to}: one already moving
     * first (it moves no more data), then one {@code from} does not lead; -1 when none may.
     */
    private int partitionToMove(int from, int to) {
      int best = -1;
      int bestRank = Integer.MAX_VALUE;
      for (int p = 0; p < copies.size(); p++) {
        List<Integer> c = copies.get(p);
        if (!c.contains(from) || !allowed(c, from, to)) {
          continue;
        }
        int rank = (moved.get(p) ? 0 : 2) + (c.get(0) == from ? 1 : 0);
        if (rank < bestRank) {
          best = p;
          bestRank = rank;
        }
      }
      return best;
    }

    /**
     * Hands leadership between a partition's copies until no node leads two more than another.
     * A hand-over may take a chain: node a gives a partition to b, which gives one of its own to
     * c, so that a leads one fewer and c one more (a breadth-first search over "leads a partition
     * of which the other holds a copy", as in a bipartite matching's augmenting path).
     */
    void spreadLeaders() {
      int[] leads = new int[nodes];
      copies.forEach(c -> leads[c.get(0)]++);
      for (int guard = copies.size() * nodes; guard > 0; guard--) {
        boolean changed = false;
        for (int from : order(leads, false)) {
          List<Integer> path = chainFrom(from, leads);
          if (path != null) {
            // path: partitions p1..pk; p1 led by from, each next led by the copy that takes the one before
            for (int i = path.size() - 1; i >= 0; i--) {
              List<Integer> c = copies.get(path.get(i) >>> 16);
              int to = path.get(i) & 0xffff;
              int was = c.get(0);
              c.set(c.indexOf(to), was);
              c.set(0, to);
            }
            leads[from]--;
            leads[path.get(path.size() - 1) & 0xffff]++;
            changed = true;
            break;
          }
        }
        if (!changed) {
          break;
        }
      }
      for (int n = 0; n < nodes; n++) {
        if (leads[n] == 0) {
          throw new IllegalArgumentException("node " + n + " would lead no partition: give the cluster more"
              + " partitions (cluster resize --partitions)");
        }
      }
    }

    /**
     * The shortest chain of hand-overs from {@code from} to a node leading at least two fewer, each
     * step a partition and the copy that takes its lead ({@code partition << 16 | node}); null when
     * there is none.
     */
    private List<Integer> chainFrom(int from, int[] leads) {
      int[] viaStep = new int[nodes];
      java.util.Arrays.fill(viaStep, -1);
      boolean[] seen = new boolean[nodes];
      seen[from] = true;
      java.util.ArrayDeque<Integer> queue = new java.util.ArrayDeque<>(List.of(from));
      while (!queue.isEmpty()) {
        int u = queue.poll();
        for (int p = 0; p < copies.size(); p++) {
          List<Integer> c = copies.get(p);
          if (c.get(0) != u) {
            continue;
          }
          for (int i = 1; i < c.size(); i++) {
            int v = c.get(i);
            if (seen[v]) {
              continue;
            }
            seen[v] = true;
            viaStep[v] = p << 16 | v;
            if (leads[v] < leads[from] - 1) {
              List<Integer> path = new ArrayList<>();
              for (int w = v; w != from; w = copies.get(viaStep[w] >>> 16).get(0)) {
                path.add(0, viaStep[w]);
              }
              return path;
            }
            queue.add(v);
          }
        }
      }
      return null;
    }

    private List<Integer> byLoad(boolean ascending) {
      return order(load, ascending);
    }

    /** Node ids by {@code counts}, descending (or ascending), the lowest id first among equals. */
    private static List<Integer> order(int[] counts, boolean ascending) {
      List<Integer> ids = new ArrayList<>();
      for (int n = 0; n < counts.length; n++) {
        ids.add(n);
      }
      ids.sort((a, b) -> ascending ? Integer.compare(counts[a], counts[b]) : Integer.compare(counts[b], counts[a]));
      return ids;
    }
  }
}
