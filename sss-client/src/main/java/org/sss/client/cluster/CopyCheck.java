package org.sss.client.cluster;

import java.time.Duration;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.HashMap;
import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.TreeMap;
import java.util.TreeSet;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.TimeUnit;
import java.util.function.Consumer;
import java.util.stream.IntStream;
import org.sss.client.MembershipView;
import org.sss.client.SssClient;
import org.sss.client.TableStatus;
import org.sss.client.internal.ClientInternals;
import org.sss.client.internal.NodeChannels;
import org.sss.core.cluster.ClusterSpec;
import org.sss.core.proto.CopyAgain;
import org.sss.core.proto.Count;
import org.sss.core.proto.ErrorCode;
import org.sss.core.proto.PartitionDigest;
import org.sss.core.proto.Request;
import org.sss.core.proto.Response;
import org.sss.core.transport.Frame;
import org.sss.core.transport.NodeUnavailableException;
import org.sss.core.transport.SssException;

/**
 * Compares the copies of every partition of a table, each summed up on its own node (its pairs
 * and a digest of them, {@code Count.digest}), so nothing but the sums crosses the network.
 *
 * <p>Copies may come to differ without any node failing: a writer that dies between sending a
 * batch to one copy and to the other (a bulk writer before its seal, a put midway) leaves the
 * batch on some copies only, and two clients writing one key at once may leave its copies with
 * different values (see docs/replication.md, Writes). Readers then get answers that depend on
 * which copy they reach. This is how an operator finds out, as {@code nodetool repair} or
 * {@code hdfs fsck} would tell on those systems; {@code bin/sss table verify} runs it.
 *
 * <p>A copy is summed up while writes may go on: a table being written can differ between two
 * sums for that reason alone, so a difference means something only for a table nobody writes
 * during the check (check again to tell).
 */
public final class CopyCheck {
  private CopyCheck() {}

  /**
   * One copy of a partition as its node summed it up, or why it was not ({@code notCompared}
   * non-null: its node is down, catching up, or refused).
   */
  public record Copy(int node, long pairs, long digest, String notCompared) {
    boolean compared() {
      return notCompared == null;
    }
  }

  /** The copies of one partition, in the placement's order. */
  public record Partition(int partition, List<Copy> copies) {
    public Partition {
      copies = List.copyOf(copies);
    }

    /** Whether two of the copies that were summed up hold different pairs. */
    public boolean differs() {
      List<Copy> compared = copies.stream().filter(Copy::compared).toList();
      return compared.stream().anyMatch(c -> c.pairs() != compared.get(0).pairs() || c.digest() != compared.get(0).digest());
    }

    /** Whether some copy could not be summed up. */
    public boolean incomplete() {
      return copies.stream().anyMatch(c -> !c.compared());
    }
  }

  /** Every partition of {@code table}, each with its {@code copies} copies. */
  public record Report(String table, int copies, List<Partition> partitions) {
    public Report {
      partitions = List.copyOf(partitions);
    }

    public List<Partition> differing() {
      return partitions.stream().filter(Partition::differs).toList();
    }

    public List<Partition> incomplete() {
      return partitions.stream().filter(Partition::incomplete).toList();
    }
  }

  /**
   * Sums up every copy of every partition of {@code table} on its node, the nodes in parallel
   * and each node's partitions one request at a time (a request scans one partition's copy).
   *
   * @throws SssException when no node holds the table
   */
  public static Report run(SssClient client, String table) {
    ClusterSpec spec = ClientInternals.channels(client).spec();
    // the listing, not the table's stats, which fail when a node lacks the table: its copies are then not compared
    TableStatus status = client.listTables().stream().filter(t -> t.name().equals(table)).findFirst()
        .orElseThrow(() -> new SssException(ErrorCode.NO_SUCH_TABLE, "no table named '" + table + "'"));
    int copies = Math.max(1, status.spec().replication());
    int partitions = spec.partitionMap().partitions();
    if (copies == 1) { // nothing to compare: no copy is read
      return new Report(table, 1, IntStream.range(0, partitions).mapToObj(p -> new Partition(p, List.of())).toList());
    }
    List<List<Copy>> byPartition = new ArrayList<>();
    for (int p = 0; p < partitions; p++) {
      byPartition.add(new ArrayList<>());
    }
    ExecutorService perNode = Executors.newFixedThreadPool(spec.nodeCount(), r -> {
      Thread t = new Thread(r, "sss-copy-check");
      t.setDaemon(true);
      return t;
    });
    try {
      List<Future<Map<Integer, Copy>>> answers = new ArrayList<>();
      for (int node = 0; node < spec.nodeCount(); node++) {
        int n = node;
        List<Integer> held = IntStream.range(0, partitions)
            .filter(p -> spec.placement().replicasOf(p).subList(0, copies).contains(n)).boxed().toList();
        answers.add(perNode.submit(() -> sumUp(client, n, table, held)));
      }
      for (Future<Map<Integer, Copy>> f : answers) {
        // each request ends within the client's timeout, so a node's answers come in time
        answered(f).forEach((p, copy) -> byPartition.get(p).add(copy));
      }
    } finally {
      perNode.shutdownNow();
    }
    List<Partition> out = new ArrayList<>();
    for (int p = 0; p < partitions; p++) {
      List<Integer> order = spec.placement().replicasOf(p).subList(0, copies);
      List<Copy> sorted = new ArrayList<>(byPartition.get(p));
      sorted.sort(Comparator.comparingInt(c -> order.indexOf(c.node())));
      out.add(new Partition(p, sorted));
    }
    return new Report(table, copies, out);
  }

  /**
   * One node's copies of {@code partitions}, by partition. A node that cannot be reached or
   * refuses leaves its remaining copies not compared, saying why.
   */
  private static Map<Integer, Copy> sumUp(SssClient client, int node, String table, List<Integer> partitions) {
    Map<Integer, Copy> out = new TreeMap<>();
    String failed = null;
    for (int p : partitions) {
      if (failed == null) {
        try {
          Frame<Response> r = NodeChannels.await(ClientInternals.channels(client).get(node).call(Request.newBuilder()
              .setCount(Count.newBuilder().setTable(table).addPartitions(p).setDigest(true))), SssClient.DEFAULT_TIMEOUT);
          try {
            if (r.header().getCount().getDigestsCount() == 0) {
              failed = "node " + node + " does not sum up its copies (a version before table verify)";
            } else {
              PartitionDigest d = r.header().getCount().getDigests(0);
              out.put(p, new Copy(node, d.getPairs(), d.getDigest(), null));
              continue;
            }
          } finally {
            r.release();
          }
        } catch (RuntimeException e) {
          failed = String.valueOf(e.getMessage());
        }
      }
      out.put(p, new Copy(node, 0, 0, failed));
    }
    return out;
  }

  /**
   * Puts copies that differ right by having nodes copy their partitions again from the other
   * copies ({@code CopyAgain}: the members take the node out of the in-sync copies, and it
   * empties its copies and catches up, writes made meanwhile included), one node at a time, each
   * waited for until it serves again, then the copies compared again; until none differ, at most
   * once per node. Each time the node chosen is the one holding the most differing copies (with
   * three copies or more, copies that differ from their partition's majority; on a tie, the one
   * that is the first copy of fewer of them, so that when one partition alone differs it keeps
   * its first copy, the one readers reach while every copy is up). A node
   * copies every partition and every replicated table it holds, from another copy that serves:
   * so which copy of a partition wins is decided by which node copies again, not by what the
   * copies hold (both are outcomes of writes that failed midway, or that the copies applied in
   * different orders).
   *
   * @param progress told what is asked and when each node serves again
   * @return the copies compared after the last node caught up (some may still differ: writes
   *     went on meanwhile, or a node could not copy again)
   * @throws SssException when a node refuses (it does not serve, holds a partition no other copy
   *     serves, or the members did not take it out) or does not serve again within {@code wait}
   */
  public static Report repair(SssClient client, Report report, Duration wait, Consumer<String> progress) {
    Report r = report;
    int nodes = ClientInternals.channels(client).spec().nodeCount();
    Set<Integer> copiedAgain = new HashSet<>();
    while (!r.differing().isEmpty()) {
      int node = mostDiffering(r, copiedAgain);
      if (node < 0) {
        break; // every node that holds a differing copy copied once: what is left differs for another reason
      }
      List<Integer> partitions = r.differing().stream()
          .filter(p -> p.copies().stream().anyMatch(c -> c.compared() && c.node() == node))
          .map(Partition::partition).toList();
      String reason = "its copies of partitions " + partitions + " of '" + report.table() + "' differed from others";
      checkSafeToCopyAgain(client, node);
      progress.accept("node " + node + " copies its partitions again from the other copies: " + reason);
      long started = System.nanoTime();
      NodeChannels.await(ClientInternals.channels(client).get(node).call(Request.newBuilder()
          .setCopyAgain(CopyAgain.newBuilder().setReason(reason))), SssClient.DEFAULT_TIMEOUT).release();
      awaitInSync(client, node, nodes, wait);
      progress.accept("node " + node + " serves again, caught up in "
          + TimeUnit.NANOSECONDS.toMillis(System.nanoTime() - started) / 1000.0 + " s");
      copiedAgain.add(node);
      r = run(client, report.table());
    }
    return r;
  }

  /** How long a partner may go without serving before the repair refuses. */
  private static final Duration PARTNER_WAIT = Duration.ofSeconds(10);

  /**
   * Refuses, changing nothing, when a node copying again could lose pairs no other copy holds.
   * It empties every replicated table it holds and copies each partition from another copy, so:
   * every other node holding a copy of its partitions must serve (a node up but not serving may
   * be one back from a crash that lost writes, whose copy would then replace the good one), and
   * no replicated table may be missing on some node (a create or drop that failed part way):
   * the catch-up drops such a table rather than copy it, and its pairs on this node may be the
   * only ones.
   */
  private static void checkSafeToCopyAgain(SssClient client, int node) {
    ClusterSpec spec = ClientInternals.channels(client).spec();
    for (TableStatus t : client.listTables()) {
      if (t.spec().replication() > 1 && !t.whole()) {
        throw new SssException(ErrorCode.NOT_SERVING, "node " + node + " was not asked to copy again: table '" + t.name()
            + "' is missing on node(s) " + t.missingOn() + " (a create or drop that failed part way), and copying"
            + " again would drop node " + node + "'s copy of it; drop that table (or create it again) first");
      }
    }
    Set<Integer> partners = new TreeSet<>();
    for (int p : spec.placement().partitionsHeldBy(node)) {
      spec.placement().replicasOf(p).stream().filter(n -> n != node).forEach(partners::add);
    }
    for (int partner : partners) {
      String why;
      long deadline = System.nanoTime() + PARTNER_WAIT.toNanos();
      while (true) { // a view that lapses for a moment on a busy machine is not a refusal
        try {
          MembershipView v = client.view(partner);
          why = v.serving() ? null : "it does not serve now (it may be back from a crash and catching up)";
        } catch (RuntimeException e) {
          why = "it does not answer (" + e.getMessage() + ")";
        }
        if (why == null || System.nanoTime() > deadline) {
          break;
        }
        try {
          Thread.sleep(200);
        } catch (InterruptedException e) {
          Thread.currentThread().interrupt();
          throw new SssException(ErrorCode.NOT_SERVING, "interrupted while waiting for node " + partner + " to serve");
        }
      }
      if (why != null) {
        throw new SssException(ErrorCode.NOT_SERVING, "node " + node + " was not asked to copy again: node " + partner
            + ", which holds copies of its partitions, " + why + "; run table verify again once every node serves");
      }
    }
  }

  /**
   * The node, not yet copied again, holding the most copies that differ from their partition's
   * majority (every compared copy of a partition whose copies have no majority, as two copies
   * that differ); on a tie the one that is the first copy of fewer of them, then the lowest
   * number; -1 when none is left. A node copying again takes each partition from the first other
   * copy that serves, so with three copies a minority copy is the one to copy again.
   */
  private static int mostDiffering(Report r, Set<Integer> copiedAgain) {
    Map<Integer, int[]> held = new TreeMap<>(); // node -> {differing copies, of which first copies}
    for (Partition p : r.differing()) {
      List<Copy> compared = p.copies().stream().filter(Copy::compared).toList();
      Map<List<Long>, Integer> votes = new HashMap<>();
      compared.forEach(c -> votes.merge(List.of(c.pairs(), c.digest()), 1, Integer::sum));
      List<Long> majority = votes.entrySet().stream().filter(e -> e.getValue() * 2 > compared.size())
          .map(Map.Entry::getKey).findFirst().orElse(null);
      for (Copy c : compared) {
        if (majority == null || !majority.equals(List.of(c.pairs(), c.digest()))) {
          int[] n = held.computeIfAbsent(c.node(), k -> new int[2]);
          n[0]++;
          n[1] += p.copies().get(0).node() == c.node() ? 1 : 0;
        }
      }
    }
    int best = -1;
    int[] bestCount = null;
    for (Map.Entry<Integer, int[]> e : held.entrySet()) {
      int[] c = e.getValue();
      if (!copiedAgain.contains(e.getKey())
          && (bestCount == null || c[0] > bestCount[0] || (c[0] == bestCount[0] && c[1] < bestCount[1]))) {
        best = e.getKey();
        bestCount = c;
      }
    }
    return best;
  }

  /**
   * Waits until {@code node} serves again, in sync in its own view, and every other node that
   * answers has a view at least as new: the next node asked to copy again must see it as a copy
   * to copy from.
   */
  private static void awaitInSync(SssClient client, int node, int nodes, Duration wait) {
    long deadline = System.nanoTime() + wait.toNanos();
    String last = "no answer yet";
    long servingEpoch = -1;
    for (int asked = 0; asked < nodes; ) {
      int viewer = (node + asked) % nodes; // the node itself first: it must serve
      try {
        MembershipView v = client.view(viewer);
        boolean inSync = v.confirmedMillisAgo() < 2_000 && !v.down().contains(node) && !v.out().contains(node)
            && !v.joining().contains(node);
        if (inSync && viewer == node && v.serving()) {
          servingEpoch = v.epoch();
          asked++;
          continue;
        }
        if (inSync && viewer != node && v.epoch() >= servingEpoch) {
          asked++;
          continue;
        }
        if (viewer != node && v.confirmedMillisAgo() >= 2_000) {
          asked++; // cut off from the members: it serves nothing, so it is asked nothing next
          continue;
        }
        last = "node " + viewer + " sees node " + node + (v.out().contains(node) ? " out of the in-sync copies"
            : v.joining().contains(node) ? " catching up" : v.down().contains(node) ? " down"
            : viewer != node && v.epoch() < servingEpoch ? " at an older epoch" : " not serving yet");
      } catch (RuntimeException e) {
        if (viewer != node) {
          asked++; // a node that does not answer has no view to wait for
          continue;
        }
        last = e.getMessage();
      }
      if (System.nanoTime() > deadline) {
        throw new NodeUnavailableException("node " + node + " did not serve again within " + wait.toSeconds() + " s ("
            + last + "); it goes on catching up: run table verify again later", null);
      }
      try {
        Thread.sleep(200);
      } catch (InterruptedException e) {
        Thread.currentThread().interrupt();
        throw new SssException(ErrorCode.INTERNAL, "interrupted while node " + node + " caught up", e);
      }
    }
  }

  private static Map<Integer, Copy> answered(Future<Map<Integer, Copy>> f) {
    try {
      return f.get();
    } catch (ExecutionException e) {
      throw NodeChannels.unwrap(e);
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
      throw new SssException(ErrorCode.INTERNAL, "interrupted", e);
    }
  }
}
