package org.sss.core.cluster;

import java.util.ArrayList;
import java.util.List;
import java.util.SortedSet;
import java.util.TreeSet;
import org.sss.core.proto.ClusterView;

/**
 * Which copies of a partition count, under one membership view: the rules every writer, reader
 * and node applies to the view the members decided, so that all of them agree without talking.
 *
 * <ul>
 *   <li>A copy is <em>in sync</em> unless its node is out or catching up: it has every write
 *       acknowledged so far. A node down is still in sync (no write was acknowledged without it).
 *   <li>A write goes to every in-sync copy and to every copy catching up, and is acknowledged
 *       when all of them applied it; so a node down holds writes to its partitions back until it
 *       answers again or is decided out.
 *   <li>A read goes to a copy that is in sync and not down.
 *   <li>A node may leave the in-sync copies only while every partition it holds keeps another
 *       copy that is in sync and up: the last in-sync copy of a partition never leaves, so an
 *       acknowledged write always has a copy that counts (as Kafka keeps its last in-sync replica).
 * </ul>
 */
public final class InSyncCopies {
  private final ReplicaPlacement placement;

  public InSyncCopies(ReplicaPlacement placement) {
    this.placement = placement;
  }

  /** The nodes a write to {@code partition} goes to under {@code view}, preferred leader first. */
  public List<Integer> writeTargets(ClusterView view, int partition) {
    List<Integer> out = new ArrayList<>();
    for (int node : placement.replicasOf(partition)) {
      if (!view.getOutList().contains(node)) {
        out.add(node);
      }
    }
    return out;
  }

  /**
   * {@link #writeTargets} of every partition at once, for writers that route many pairs on one
   * view: a lookup per pair instead of lists built per pair.
   */
  public int[][] writeTargetsByPartition(ClusterView view) {
    int[][] out = new int[placement.partitions()][];
    for (int p = 0; p < out.length; p++) {
      out[p] = writeTargets(view, p).stream().mapToInt(Integer::intValue).toArray();
    }
    return out;
  }

  /**
   * The copies to read {@code partition} from, best first: those in sync and up, then the others
   * (which refuse, but a client with an old view learns that way that it is old).
   */
  public List<Integer> readOrder(ClusterView view, int partition) {
    List<Integer> first = new ArrayList<>();
    List<Integer> rest = new ArrayList<>();
    for (int node : placement.replicasOf(partition)) {
      (serves(view, node) ? first : rest).add(node);
    }
    first.addAll(rest);
    return first;
  }

  /**
   * The node that maps {@code partition} in a job, and receives its pairs between stages: its
   * first copy not out (the leader while it is in), or -1 when every copy is out.
   */
  public int owner(ClusterView view, int partition) {
    for (int node : placement.replicasOf(partition)) {
      if (!view.getOutList().contains(node)) {
        return node;
      }
    }
    return -1;
  }

  /** The partitions {@link #owner} gives {@code node} under {@code view}, ascending. */
  public List<Integer> ownedBy(ClusterView view, int node) {
    List<Integer> out = new ArrayList<>();
    for (int p = 0; p < placement.partitions(); p++) {
      if (owner(view, p) == node) {
        out.add(p);
      }
    }
    return out;
  }

  /** True when {@code node} is in sync and up under {@code view}: it serves reads. */
  public static boolean serves(ClusterView view, int node) {
    return !view.getDownList().contains(node) && !view.getOutList().contains(node)
        && !view.getJoiningList().contains(node);
  }

  /** The nodes {@code view} has down or out, in order. */
  public static SortedSet<Integer> downOrOut(ClusterView view) {
    SortedSet<Integer> gone = new TreeSet<>(view.getDownList());
    gone.addAll(view.getOutList());
    return gone;
  }

  /**
   * What the members decided about {@code node} under {@code view}, as a lost connection to it
   * says: "decided down by the members (membership epoch 4)".
   */
  public static String decision(ClusterView view, int node) {
    return (view.getDownList().contains(node) ? "decided down" : "decided out")
        + " by the members (membership epoch " + view.getEpoch() + ")";
  }

  /** True when {@code node} is in sync under {@code view}: it has every acknowledged write. */
  public static boolean inSync(ClusterView view, int node) {
    return !view.getOutList().contains(node) && !view.getJoiningList().contains(node);
  }

  /**
   * The partitions {@code node} holds for which no other copy is in sync and up: empty when the
   * node may leave the in-sync copies.
   */
  public List<Integer> onlyCopies(ClusterView view, int node) {
    List<Integer> out = new ArrayList<>();
    for (int p : placement.partitionsHeldBy(node)) {
      boolean another = false;
      for (int other : placement.replicasOf(p)) {
        if (other != node && serves(view, other)) {
          another = true;
          break;
        }
      }
      if (!another) {
        out.add(p);
      }
    }
    return out;
  }

  /** The partitions with no copy in sync and up under {@code view}: they can be neither read nor written. */
  public List<Integer> unavailable(ClusterView view) {
    List<Integer> out = new ArrayList<>();
    for (int p = 0; p < placement.partitions(); p++) {
      boolean any = false;
      for (int node : placement.replicasOf(p)) {
        any |= serves(view, node);
      }
      if (!any) {
        out.add(p);
      }
    }
    return out;
  }

  /** True when every node is up and in sync: tables may be created and dropped. */
  public static boolean whole(ClusterView view) {
    return view.getDownCount() == 0 && view.getOutCount() == 0 && view.getJoiningCount() == 0;
  }

  public ReplicaPlacement placement() {
    return placement;
  }
}
