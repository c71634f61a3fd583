package org.sss.client.cluster;

import java.time.Duration;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.List;
import java.util.Map;
import java.util.TreeMap;
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
            PartitionDigest d = r.header().getCount().getDigests(0);
            out.put(p, new Copy(node, d.getPairs(), d.getDigest(), null));
            continue;
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
   * Puts copies that differ right, the first copy of each partition winning (the one readers
   * reach while every copy is up): the node of every other copy of a differing partition copies
   * its partitions again from the other copies ({@code CopyAgain}: it stops serving, leaves the
   * in-sync copies, empties its copies and catches up, which moves every replicated table it
   * holds, writes made meanwhile included). One node at a time, each waited for until it serves
   * again, since two at once could leave a partition with no copy to copy from.
   *
   * @param progress told what is asked and when each node serves again
   * @return the nodes that copied their partitions again, in order
   * @throws SssException when a node refuses (it does not serve, or holds a partition no other
   *     copy serves) or does not serve again within {@code wait}
   */
  public static List<Integer> repair(SssClient client, Report report, Duration wait, Consumer<String> progress) {
    Map<Integer, List<Integer>> byNode = new TreeMap<>();
    for (Partition p : report.differing()) {
      List<Copy> compared = p.copies().stream().filter(Copy::compared).toList();
      for (Copy c : compared.subList(1, compared.size())) {
        byNode.computeIfAbsent(c.node(), n -> new ArrayList<>()).add(p.partition());
      }
    }
    List<Integer> done = new ArrayList<>();
    for (Map.Entry<Integer, List<Integer>> e : byNode.entrySet()) {
      int node = e.getKey();
      String reason = "its copies of partitions " + e.getValue() + " of '" + report.table() + "' differed from the first copies";
      progress.accept("node " + node + " copies its partitions again from the other copies: " + reason);
      NodeChannels.await(ClientInternals.channels(client).get(node).call(Request.newBuilder()
          .setCopyAgain(CopyAgain.newBuilder().setReason(reason))), SssClient.DEFAULT_TIMEOUT).release();
      long started = System.nanoTime();
      awaitServing(client, node, wait);
      progress.accept("node " + node + " serves again, caught up in "
          + TimeUnit.NANOSECONDS.toMillis(System.nanoTime() - started) / 1000.0 + " s");
      done.add(node);
    }
    return done;
  }

  /** Waits until {@code node} serves, in sync, its view freshly confirmed. */
  private static void awaitServing(SssClient client, int node, Duration wait) {
    long deadline = System.nanoTime() + wait.toNanos();
    String last = "no answer yet";
    while (System.nanoTime() < deadline) {
      try {
        MembershipView v = client.view(node);
        if (v.serving() && v.confirmedMillisAgo() < 2_000 && !v.down().contains(node) && !v.out().contains(node)
            && !v.joining().contains(node)) {
          return;
        }
        last = v.out().contains(node) ? "out of the in-sync copies" : v.joining().contains(node) ? "catching up"
            : "not serving";
      } catch (RuntimeException e) {
        last = e.getMessage();
      }
      try {
        Thread.sleep(200);
      } catch (InterruptedException e) {
        Thread.currentThread().interrupt();
        throw new SssException(ErrorCode.INTERNAL, "interrupted while node " + node + " caught up", e);
      }
    }
    throw new NodeUnavailableException("node " + node + " did not serve again within " + wait.toSeconds() + " s ("
        + last + "); it goes on catching up: run table verify again later", null);
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
