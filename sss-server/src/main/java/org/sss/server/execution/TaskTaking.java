package org.sss.server.execution;

import java.util.ArrayDeque;
import java.util.ArrayList;
import java.util.Deque;
import java.util.List;
import java.util.Map;
import java.util.TreeMap;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;
import java.util.function.BooleanSupplier;
import org.sss.core.cluster.InSyncCopies;
import org.sss.core.cluster.ReplicaPlacement;
import org.sss.core.proto.ClusterView;
import org.sss.core.proto.Request;
import org.sss.core.proto.Response;
import org.sss.core.proto.TakeTask;
import org.sss.core.proto.TaskTaken;
import org.sss.core.transport.Frame;

/**
 * The map tasks a node may take over once it has run out of its own: those of partitions of
 * which it holds an in-sync copy of the input but another node runs (the partition's leader),
 * that the other node has not started yet.
 *
 * <h2>Why</h2>
 * A node maps the partitions it leads, so its share of a stage's work is its share of the
 * input's pairs, and of the work they cause. A few heavy keys, or a hash that happens to give
 * one node more, leave the others idle while it finishes: on four hosts with 100 Mbit/s links,
 * sixteen input keys placed 1, 2, 7 and 6 made the busiest host send 1.7 times the mean, and the
 * stage took twice the link-bound time. With two copies, every partition has a second node that
 * can read it locally; Hadoop and Spark get the same balance by handing waiting tasks to free
 * slots, preferring nodes that hold the data.
 *
 * <h2>Exactly once</h2>
 * Only the running node decides: it hands over a task by taking it out of its queue of waiting
 * tasks, which its own runners take from too, so each task is run by exactly one of them. An
 * answer that does not arrive fails the stage (the running node may have handed the task over).
 * Every node reports the partitions it ran, and the coordinator checks that each was run once.
 */
final class TaskTaking {
  /** Nothing to take: inputs of one copy, files, reduce stages. */
  static final TaskTaking NONE = new TaskTaking(null, "", 0, 0, new TreeMap<>());
  /**
   * How long after this node's stage started a node that does not run the stage yet is asked
   * again: the coordinator starts the stage everywhere at once, so it soon will, unless it
   * already ended (then it has nothing to hand over and asking stops when this time is up).
   */
  static final long START_GRACE_NANOS = 2_000_000_000L;
  static final long START_RETRY_MILLIS = 10;

  private final PeerLinks peers;
  private final String jobId;
  private final int stage;
  private final int self;
  /** The nodes still asked, each with the partitions this node could take from it. */
  private final Deque<Map.Entry<Integer, List<Integer>>> asked;
  private final long startNanos = System.nanoTime();
  private final int candidates;
  /** Until when the node's runners pause before asking nodes that do not run the stage yet again. */
  private long pauseUntilNanos;

  private TaskTaking(PeerLinks peers, String jobId, int stage, int self, TreeMap<Integer, List<Integer>> byNode) {
    this.peers = peers;
    this.jobId = jobId;
    this.stage = stage;
    this.self = self;
    // the nodes after this one first, so that nodes that run out together ask different ones
    this.asked = new ArrayDeque<>();
    byNode.tailMap(self, false).entrySet().forEach(asked::add);
    byNode.headMap(self, false).entrySet().forEach(asked::add);
    this.candidates = byNode.values().stream().mapToInt(List::size).sum();
  }

  /**
   * The tasks {@code self} may take in a map stage over a table of {@code copies} copies under
   * {@code view}: none unless it holds an in-sync copy of the table's partitions.
   */
  static TaskTaking of(PeerLinks peers, String jobId, int stage, int self, ReplicaPlacement placement,
                       ClusterView view, int copies) {
    if (copies < 2 || !InSyncCopies.inSync(view, self)) {
      return NONE;
    }
    InSyncCopies rules = new InSyncCopies(placement);
    TreeMap<Integer, List<Integer>> byNode = new TreeMap<>();
    for (int p = 0; p < placement.partitions(); p++) {
      int runner = rules.owner(view, p);
      if (runner >= 0 && mayTake(placement, view, copies, self, p, runner)) {
        byNode.computeIfAbsent(runner, n -> new ArrayList<>()).add(p);
      }
    }
    return byNode.isEmpty() ? NONE : new TaskTaking(peers, jobId, stage, self, byNode);
  }

  /** True when there was never anything to take here. */
  boolean isEmpty() {
    return candidates == 0;
  }

  /** Partitions this node could take at the start. */
  int size() {
    return candidates;
  }

  /**
   * Whether {@code taker} may run the task of {@code partition}, which {@code runner} runs under
   * {@code view}: the rule {@link #of} applies, checked again by the node that hands the task
   * over, so that a request from anyone else (a client with the secret, a node on another view)
   * moves nothing.
   */
  static boolean mayTake(ReplicaPlacement placement, ClusterView view, int copies, int taker, int partition,
                         int runner) {
    return copies >= 2 && taker != runner && InSyncCopies.inSync(view, taker) && placement.holds(taker, partition, copies)
        && new InSyncCopies(placement).owner(view, partition) == runner;
  }

  /**
   * A partition whose task this node now runs, taken from another node; null when no node has
   * one to hand over. A node that hands over none is not asked again: its waiting tasks only
   * get fewer. A node that does not run the stage yet is asked again for a while. Runners of one
   * node ask one at a time, so a runner that finds nothing left knows that nothing is. Stops
   * asking once the stage stops.
   */
  synchronized Integer next(BooleanSupplier stopping) throws InterruptedException {
    int notYet = 0; // nodes in a row that do not run the stage yet
    while (!asked.isEmpty() && !stopping.getAsBoolean()) {
      long pause = pauseUntilNanos - System.nanoTime();
      if (pause > 0) { // another runner found every node not running yet: this one waits too
        wait(Math.max(1, pause / 1_000_000));
        continue;
      }
      Map.Entry<Integer, List<Integer>> e = asked.pollFirst();
      int node = e.getKey();
      TaskTaken answer = ask(node, e.getValue());
      if (!answer.getRunning() && !answer.getEnded() && System.nanoTime() - startNanos < START_GRACE_NANOS) {
        // its RunStage may still be on its way: ask again shortly rather than miss its tasks,
        // pausing (without the lock) once every node left said so
        asked.addLast(e);
        if (++notYet >= asked.size()) {
          pauseUntilNanos = System.nanoTime() + START_RETRY_MILLIS * 1_000_000;
          notYet = 0;
        }
        continue;
      }
      notYet = 0;
      if (answer.getGranted()) {
        int p = answer.getPartition();
        if (!e.getValue().remove((Integer) p)) {
          throw new IllegalStateException("node " + node + " handed over the task of partition " + p
              + ", which node " + self + " did not ask for (job " + jobId + ")");
        }
        if (!e.getValue().isEmpty()) {
          asked.addLast(e); // the others first next time: take from every node in turn
        }
        return p;
      }
    }
    return null;
  }

  private TaskTaken ask(int node, List<Integer> partitions) throws InterruptedException {
    Request.Builder req = Request.newBuilder().setTakeTask(TakeTask.newBuilder().setJobId(jobId).setStage(stage)
        .addAllPartitions(partitions).setTaker(self));
    try {
      Frame<Response> r = peers.get(node).call(req, null, PeerLinks.SHUFFLE_TIMEOUT)
          .get(PeerLinks.SHUFFLE_TIMEOUT.toMillis() + 1000, TimeUnit.MILLISECONDS);
      try {
        return r.header().getTaskTaken();
      } finally {
        r.release();
      }
    } catch (ExecutionException e) {
      // an error answer too: a connection failing completes every call with its error, one
      // whose grant was on its way included
      throw noAnswer(node, e.getCause());
    } catch (TimeoutException e) {
      throw noAnswer(node, e);
    }
  }

  /** The node may have handed a task over: nobody would run it, so the stage must fail. */
  private IllegalStateException noAnswer(int node, Throwable cause) {
    return new IllegalStateException("node " + self + " asked node " + node + " for a waiting map task of job "
        + jobId + " and got no answer (" + cause.getMessage() + ")", cause);
  }
}
