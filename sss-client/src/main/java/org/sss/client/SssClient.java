package org.sss.client;

import com.google.protobuf.ByteString;
import io.netty.buffer.ByteBuf;
import io.netty.buffer.Unpooled;
import java.io.IOException;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Collection;
import java.util.Collections;
import java.util.HashMap;
import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.Queue;
import java.util.Set;
import java.util.TreeMap;
import java.util.TreeSet;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.ConcurrentLinkedQueue;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.AtomicReference;
import org.sss.client.internal.ClientInternals;
import org.sss.client.internal.CopyWriter;
import org.sss.client.internal.GoneNodeWatch;
import org.sss.client.internal.NodeChannels;
import org.sss.client.internal.WireTypes;
import org.sss.client.job.Job;
import org.sss.client.job.Jobs;
import org.sss.client.job.RunningJob;
import org.sss.core.api.Pair;
import org.sss.core.cluster.ClusterSpec;
import org.sss.core.cluster.PartitionMap;
import org.sss.core.cluster.ReplicaPlacement;
import org.sss.core.keys.PairTypes;
import org.sss.core.keys.StoredKeys;
import org.sss.core.proto.ClusterView;
import org.sss.core.proto.Count;
import org.sss.core.proto.CreateTable;
import org.sss.core.proto.Delete;
import org.sss.core.proto.DropTable;
import org.sss.core.proto.ErrorCode;
import org.sss.core.proto.Get;
import org.sss.core.proto.GetResult;
import org.sss.core.proto.GetView;
import org.sss.core.proto.ListTables;
import org.sss.core.proto.MultiGet;
import org.sss.core.proto.PutBatch;
import org.sss.core.proto.Request;
import org.sss.core.proto.Response;
import org.sss.core.proto.StopNode;
import org.sss.core.proto.TableInfo;
import org.sss.core.proto.TableOptions;
import org.sss.core.proto.TableStats;
import org.sss.core.proto.ViewAnswer;
import org.sss.core.transport.Connection;
import org.sss.core.transport.Frame;
import org.sss.core.transport.NodeUnavailableException;
import org.sss.core.transport.PairBlock;
import org.sss.core.transport.Pipelines;
import org.sss.core.transport.SssException;

/**
 * The entry point for users: a connection to every node of a cluster, routing each key to the
 * node that owns it.
 *
 * <p>Keys are given in their encoded form ({@link org.sss.core.keys.KeyCodec}); the client
 * hashes a key to its partition and owner, and prefixes the partition before sending. Table
 * operations go to every node. Thread-safe; one client per process is enough.
 *
 * <p>Every method blocks until the cluster answers and throws {@link SssException} (with the
 * node in the message) when a node refuses the request or cannot be reached.
 *
 * <p>Its API speaks the client's own types ({@link TableSpec}, {@link TableStatus},
 * {@link MembershipView}), not the wire's. The engine's coordinator and tools that send raw
 * requests to single nodes reach its connections through
 * {@link ClientInternals} (internal: no compatibility promise).
 */
public final class SssClient implements AutoCloseable {
  /** How long a single request may take before the node counts as unavailable. */
  public static final Duration DEFAULT_TIMEOUT = Duration.ofSeconds(120);

  private final ClusterSpec spec;
  private final PartitionMap partitions;
  /** Where each partition's copies are; a write goes to all of them, a read to the first that answers. */
  private final ReplicaPlacement placement;
  private final int copies;
  private final NodeChannels channels;
  private final Duration timeout;
  /** Writes replicated tables to the copies the membership names; null with one copy. */
  private final CopyWriter copyWriter;
  /** Fails what waits on a node decided out; null with one copy. */
  private final GoneNodeWatch goneNodes;
  /** How long reading the view waits for each node: a node cut off must not hold a write up for long. */
  private static final Duration VIEW_WAIT = Duration.ofSeconds(3);

  static {
    // the engine's own packages reach the connections and the wire's view there, users do not
    ClientInternals.install(new ClientInternals.Access() {
      @Override
      public NodeChannels channels(SssClient client) {
        return client.channels;
      }

      @Override
      public ViewAnswer view(SssClient client) {
        return client.wireView(client.timeout);
      }

      @Override
      public int batchesInFlight(BulkWriter writer) {
        return writer.batchesInFlight();
      }
    });
  }

  private SssClient(ClusterSpec spec, Duration timeout) {
    this.spec = spec;
    this.partitions = spec.partitionMap();
    this.placement = spec.placement();
    this.copies = spec.replication();
    this.timeout = timeout;
    this.channels = new NodeChannels(spec, "client", timeout);
    this.copyWriter = spec.replication() > 1
        ? new CopyWriter(channels, () -> wireView(VIEW_WAIT).getView(), timeout) : null;
    this.goneNodes = spec.replication() > 1 ? new GoneNodeWatch(channels, () -> wireView(VIEW_WAIT).getView()) : null;
  }

  /** Connects to the cluster described by a cluster file. */
  public static SssClient connect(Path clusterFile) throws IOException {
    return connect(ClusterSpec.load(clusterFile));
  }

  /** System property naming the cluster file that {@link #fromEnvironment()} connects to. */
  public static final String CLUSTER_PROPERTY = "sss.cluster.file";

  /**
   * Connects to the cluster the launcher chose: {@code bin/sss run} sets the system property
   * {@value #CLUSTER_PROPERTY} (a running cluster's file, or an embedded cluster's).
   */
  public static SssClient fromEnvironment() throws IOException {
    String file = System.getProperty(CLUSTER_PROPERTY);
    if (file == null) {
      throw new IllegalStateException("no cluster: run this program with `sss [--cluster FILE] run`"
          + " or set -D" + CLUSTER_PROPERTY + "=FILE");
    }
    return connect(Path.of(file));
  }

  /** Connects to a cluster; nodes are contacted lazily, on first use. */
  public static SssClient connect(ClusterSpec spec) {
    return new SssClient(spec, DEFAULT_TIMEOUT);
  }

  public ClusterSpec spec() {
    return spec;
  }

  /**
   * Asks one node to stop: it stops accepting connections, flushes every table, answers, and
   * exits. Returns the number of tables it flushed.
   */
  public long stopNode(int node) {
    Frame<Response> r = NodeChannels.await(channels.get(node).call(Request.newBuilder()
        .setStopNode(StopNode.getDefaultInstance())), timeout);
    try {
      return r.header().getAck().getPairs();
    } finally {
      r.release();
    }
  }

  /** Checks that every node answers and accepts the secret. */
  public void ping() {
    for (int n = 0; n < spec.nodeCount(); n++) {
      ping(n);
    }
  }

  /**
   * Checks that {@code node} answers and accepts the secret: connects to it and authenticates,
   * unless this client is connected to it already.
   *
   * @throws NodeUnavailableException when it cannot be reached
   * @throws SssException when it refuses (another secret, another cluster's layout)
   */
  public void ping(int node) {
    channels.get(node);
  }

  /**
   * The membership of a replicated cluster as its nodes decided it (through Raft): the view of
   * the highest epoch among the nodes that answer. Of a cluster of one copy, a view with
   * {@code replicated} false.
   *
   * @throws org.sss.core.transport.NodeUnavailableException when no node answers
   */
  public MembershipView view() {
    return WireTypes.fromProto(wireView(timeout));
  }

  /**
   * The membership's view as node {@code node} holds it, with how long ago a majority of the
   * voters last confirmed it to that node (a node serves replicated tables only while that is
   * recent): for tools that wait until every node of a cluster just started serves.
   */
  public MembershipView view(int node) {
    Frame<Response> r = NodeChannels.await(channels.get(node).call(
        Request.newBuilder().setGetView(GetView.getDefaultInstance())), timeout);
    try {
      return WireTypes.fromProto(r.header().getView());
    } finally {
      r.release();
    }
  }

  /**
   * How long the view waits for the other nodes once one has answered: a node cut off (its
   * connection open, its answers lost) would otherwise hold every view up for the whole
   * timeout. A node that answers later with a newer view is missed; writes sent on the older
   * one are refused as stale and sent again on the next.
   */
  static final Duration VIEW_GRACE = Duration.ofSeconds(1);

  private ViewAnswer wireView(Duration wait) {
    List<CompletableFuture<Frame<Response>>> answers = sendToAllNodes(
        Request.newBuilder().setGetView(GetView.getDefaultInstance()));
    // the first answer from any node (or every node failing), within wait; then the others' grace
    CompletableFuture<Void> first = new CompletableFuture<>();
    AtomicInteger failed = new AtomicInteger();
    for (CompletableFuture<Frame<Response>> f : answers) {
      f.whenComplete((r, e) -> {
        if (e == null || failed.incrementAndGet() == answers.size()) {
          first.complete(null);
        }
      });
    }
    try {
      first.get(wait.toMillis(), TimeUnit.MILLISECONDS);
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
      throw new SssException(ErrorCode.INTERNAL, "interrupted", e);
    } catch (ExecutionException | TimeoutException e) {
      // none answered in time: each is read below and fails
    }
    long deadline = System.nanoTime() + VIEW_GRACE.toNanos();
    ViewAnswer best = null;
    RuntimeException last = null;
    for (CompletableFuture<Frame<Response>> f : answers) {
      try {
        long left = Math.max(1, TimeUnit.NANOSECONDS.toMillis(deadline - System.nanoTime()));
        Frame<Response> r = NodeChannels.await(f, Duration.ofMillis(left));
        ViewAnswer a = r.header().getView();
        r.release();
        if (best == null || a.getView().getEpoch() > best.getView().getEpoch()) {
          best = a;
        }
      } catch (RuntimeException e) {
        last = e;
        f.thenAccept(Frame::release); // an answer that comes too late is let go of when it comes
      }
    }
    if (best == null) {
      throw new NodeUnavailableException("no node answers: " + last.getMessage(), last);
    }
    ViewAnswer answered = best;
    // a node with a newer view may have missed the grace: never go back to an older epoch
    return newestView.accumulateAndGet(answered,
        (known, now) -> known != null && known.getView().getEpoch() > now.getView().getEpoch() ? known : now);
  }

  /** The view of the highest epoch this client has read. */
  private final AtomicReference<ViewAnswer> newestView = new AtomicReference<>();

  // ---- tables ---------------------------------------------------------------------------

  /**
   * Creates a table on every node, all or nothing: refused before any node acts while one
   * cannot be reached, and taken back from the nodes where it made the table when another
   * refuses (a node that answers too late may still make it; the error says so, and
   * {@link #listTables} marks such a table incomplete). Two clients creating one name at once
   * with the same types may both succeed; with other types, at most one does.
   *
   * @throws SssException {@link ErrorCode#TABLE_EXISTS} when it exists and not {@code ifAbsent};
   *                      also when some nodes hold it with other key or value types than the
   *                      others, or than asked for where it was absent (left by a drop or create
   *                      that did not reach every node): drop it and create it again
   */
  public void createTable(String table, TableSpec tableSpec, boolean ifAbsent) {
    createTable(table, WireTypes.toProto(tableSpec), ifAbsent, false);
  }

  /**
   * {@code completing}: the create of a table that some nodes already hold (see below), which
   * must then hold it with the types asked for.
   */
  private void createTable(String table, TableOptions options, boolean ifAbsent, boolean completing) {
    for (int attempt = 1; ; attempt++) {
      List<Integer> made = new ArrayList<>();
      try {
        createTable(table, options, ifAbsent, completing, made);
        return;
      } catch (RuntimeException e) {
        RuntimeException failure = made.isEmpty() ? e : undoCreate(table, made, e);
        if (attempt == CHANGE_ATTEMPTS || failure != e || !refusedBeforeActing(e)) {
          throw failure;
        }
        pauseBeforeAttempt(attempt);
      }
    }
  }

  /** Tries of a create or drop that nodes refused before acting (see {@link #refusedBeforeActing}). */
  private static final int CHANGE_ATTEMPTS = 3;

  /**
   * Whether a node refused a create or drop before acting on it: sent on a membership view it has
   * left (a node left or came back meanwhile), or while it could not confirm its own (a Raft
   * election). Sent again, on a view read anew, it may pass.
   */
  private static boolean refusedBeforeActing(Throwable e) {
    RuntimeException r = NodeChannels.unwrap(e);
    return r instanceof SssException s && s.code() == ErrorCode.STALE_VIEW
        || r instanceof NodeUnavailableException u && u.refused();
  }

  private static void pauseBeforeAttempt(int attempt) {
    try {
      Thread.sleep(500L * attempt);
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
      throw new SssException(ErrorCode.INTERNAL, "interrupted", e);
    }
  }

  /**
   * One round of a create; {@code made} collects the nodes where this create made the table
   * (each node says so), so that a create that fails takes back exactly what it made, and
   * nothing another client made.
   */
  private void createTable(String table, TableOptions options, boolean ifAbsent, boolean completing,
                           List<Integer> made) {
    options = withCopies(options);
    TableChange to = tableChange("create table '" + table + "'", "nothing was created");
    List<Throwable> errors = new ArrayList<>();
    List<Integer> silent = new ArrayList<>();
    int exists = 0;
    Map<Integer, TableOptions> held = new TreeMap<>();
    List<CompletableFuture<Frame<Response>>> answers = sendTo(to.nodes(), Request.newBuilder().setCreateTable(
        CreateTable.newBuilder().setTable(table).setOptions(options).setIfAbsent(ifAbsent).setViewEpoch(to.epoch())));
    for (int i = 0; i < answers.size(); i++) {
      int node = to.nodes().get(i);
      try {
        Frame<Response> r = NodeChannels.await(answers.get(i), timeout);
        held.put(node, r.header().getTable().getOptions());
        if (r.header().getTable().getCreated()) {
          made.add(node);
        }
        r.release();
      } catch (RuntimeException e) {
        errors.add(e);
        if (NodeChannels.unwrap(e) instanceof NodeUnavailableException u && !u.refused()) {
          silent.add(node);
        }
      }
    }
    if (errors.isEmpty()) {
      // every node answered, in node order: they must keep one contract
      checkOneContract(table, held, completing ? options : held.values().iterator().next(), completing);
    }
    for (Throwable e : errors) {
      if (e instanceof SssException s && s.code() == ErrorCode.TABLE_EXISTS) {
        exists++;
      } else {
        RuntimeException cause = NodeChannels.unwrap(e);
        if (!silent.isEmpty()) {
          // a node that did not answer in time may still make the table: say so, rather than drop blindly
          cause = new SssException(cause instanceof SssException s ? s.code() : ErrorCode.INTERNAL, cause.getMessage()
              + " (node(s) " + silent + " did not answer: one may still make '" + table + "', and 'table list'"
              + " would then mark it incomplete)", cause);
        }
        throw cause;
      }
    }
    if (exists == to.nodes().size() || exists > 0 && ifAbsent) {
      throw NodeChannels.unwrap(errors.get(0)); // the node's words: it exists, or a job is writing it
    }
    if (exists > 0) {
      // a node kept the table from an interrupted create or drop: complete the create (once:
      // a node that refuses again, e.g. a name a job reserved, has the last word), unless what
      // it kept has other types (checkOneContract)
      createTable(table, options, true, true, made);
    }
  }

  /**
   * Refuses a table whose nodes hold it with different key or value types (or one multi-valued
   * and another not): a table left on a node by a drop or create that did not reach every node.
   * Its nodes would keep different contracts, and a write would be refused by some after the
   * others took their shares.
   */
  private static void checkOneContract(String table, Map<Integer, TableOptions> held, TableOptions expected,
                                       boolean asked) {
    for (Map.Entry<Integer, TableOptions> e : held.entrySet()) {
      int node = e.getKey();
      TableOptions o = e.getValue();
      if (o.getKeyTypeValue() != expected.getKeyTypeValue() || o.getValueTypeValue() != expected.getValueTypeValue()
          || o.getMultiValued() != expected.getMultiValued()
          || Math.max(1, o.getReplication()) != Math.max(1, expected.getReplication())) {
        throw new SssException(ErrorCode.TABLE_EXISTS, "table '" + table + "' exists on node " + node + " as "
            + describe(o) + ", but " + (asked ? "was asked for as " : "on node " + held.keySet().iterator().next()
            + " as ") + describe(expected)
            + ": a drop or create of it did not reach every node. Drop it (its data there is stale) and create it again");
      }
    }
  }

  private static String describe(TableOptions o) {
    int copies = Math.max(1, o.getReplication());
    return "key=" + PairTypes.name(o.getKeyType()) + " value=" + PairTypes.name(o.getValueType())
        + (o.getMultiValued() ? " (multi-valued)" : "") + (copies == 1 ? ", 1 copy" : ", " + copies + " copies");
  }

  /**
   * The options with the cluster's replication: every writer sends a table the cluster's number
   * of copies, so a table keeping another could not be written.
   */
  private TableOptions withCopies(TableOptions options) {
    if (options.getReplication() > 0 && options.getReplication() != spec.replication()) {
      throw new IllegalArgumentException("a table keeps the cluster's replication (" + spec.replication()
          + "), not " + options.getReplication());
    }
    // one copy is recorded as the field's default, as tables made before replication have it
    return spec.replication() == 1 ? options.toBuilder().clearReplication().build()
        : options.toBuilder().setReplication(spec.replication()).build();
  }

  /**
   * Drops a table on every node; returns false if it existed nowhere. Refused, with nothing
   * dropped, while a node cannot be reached: the node would keep the table, and serve it again
   * as though it had never been dropped when it returns.
   */
  public boolean dropTable(String table, boolean ifExists) {
    boolean any = false;
    boolean reachedSome = false;
    for (int attempt = 1; ; attempt++) {
      TableChange to = tableChange("drop table '" + table + "'", attempt == 1 ? "nothing was dropped"
          : "it may be dropped on some nodes already: drop it again");
      if (to.nodes().size() < spec.nodeCount()) {
        refuseOneCopyWhileOut(table, to);
      }
      List<Throwable> errors = new ArrayList<>();
      for (Frame<Response> r : onNodes(to.nodes(), Request.newBuilder().setDropTable(
          DropTable.newBuilder().setTable(table).setIfExists(true).setViewEpoch(to.epoch())), errors)) {
        any |= r.header().getAck().getPairs() > 0;
        r.release();
      }
      if (errors.isEmpty()) {
        break;
      }
      if (errors.size() < to.nodes().size()) {
        reachedSome = true;
      }
      if (attempt == CHANGE_ATTEMPTS || !errors.stream().allMatch(SssClient::refusedBeforeActing)) {
        RuntimeException e = NodeChannels.unwrap(errors.get(0));
        if (reachedSome) { // an attempt was taken by some nodes
          throw new SssException(e instanceof SssException s ? s.code() : ErrorCode.INTERNAL, e.getMessage()
              + "; the drop was taken by some nodes: 'table list' marks '" + table + "' incomplete, drop it again", e);
        }
        throw e;
      }
      pauseBeforeAttempt(attempt); // a drop repeats safely
    }
    if (!any && !ifExists) {
      throw new SssException(ErrorCode.NO_SUCH_TABLE, "no table named '" + table + "'");
    }
    return any;
  }

  /**
   * Every table with its pairs and bytes summed over the nodes, sorted by name. A table that
   * some node answering does not hold (left by a create or drop that failed part way) lists
   * those nodes in {@link TableStatus#missingOn()}: it cannot be read whole.
   */
  public List<TableStatus> listTables() {
    List<Throwable> errors = new ArrayList<>();
    Map<String, TableInfo.Builder> merged = new TreeMap<>();
    Map<String, Set<Integer>> holders = new HashMap<>();
    List<Integer> answered = new ArrayList<>();
    ClusterView view = copyWriter == null ? null : copyWriter.refresh();
    List<Integer> asked = serving(view);
    List<CompletableFuture<Frame<Response>>> futures = sendTo(asked,
        Request.newBuilder().setListTables(ListTables.getDefaultInstance()));
    for (int i = 0; i < futures.size(); i++) {
      int node = asked.get(i);
      Frame<Response> r;
      try {
        r = NodeChannels.await(futures.get(i), timeout);
      } catch (RuntimeException e) {
        errors.add(e);
        continue;
      }
      answered.add(node);
      for (TableInfo t : r.header().getTables().getTablesList()) {
        merged.merge(t.getName(), t.toBuilder(), (a, b) -> a.setPairs(a.getPairs() + b.getPairs())
            .setBytes(a.getBytes() + b.getBytes()));
        holders.computeIfAbsent(t.getName(), k -> new HashSet<>()).add(node);
      }
      r.release();
    }
    throwUnlessSurvivable(errors, spec.nodeCount() - asked.size());
    List<TableStatus> out = new ArrayList<>();
    for (Map.Entry<String, TableInfo.Builder> e : merged.entrySet()) {
      TableInfo.Builder b = e.getValue();
      for (int node : answered) {
        // a node catching up makes the tables of the others its own (tables created or dropped
        // while it was out) before it serves: its list is not the table's state yet
        boolean catchingUp = view != null && view.getJoiningList().contains(node);
        if (!holders.get(e.getKey()).contains(node) && (!catchingUp || b.getOptions().getReplication() < 2)) {
          b.addMissingOn(node);
        }
      }
      out.add(WireTypes.fromProto(perPair(b).build()));
    }
    return out;
  }

  /**
   * Where a create or drop goes: the nodes in sync, and the membership epoch it is sent on.
   *
   * <p>With one copy of each partition every node must take it: one missing would serve the
   * table as though it had never been created or dropped when it returns. With copies, the
   * nodes out of the in-sync copies are left out: a node coming back empties its copies and,
   * catching up, makes its tables those of the nodes in sync (tables created meanwhile are
   * created, tables dropped meanwhile dropped). The change is then sent on the view's epoch, which
   * fences it: a node at another epoch refuses it (see {@code CreateTable.view_epoch}), so a node
   * that begins catching up can never list the tables of a node before a change sent without it.
   * A node down (silent, not yet decided out, about 10 s after it stopped) or catching up holds
   * the change back: it could neither take it nor be sure to copy it. Known unreachable nodes are
   * refused before anything is sent.
   */
  private TableChange tableChange(String what, String outcome) {
    List<Integer> all = new ArrayList<>();
    for (int n = 0; n < spec.nodeCount(); n++) {
      all.add(n);
    }
    if (copyWriter == null) {
      reach(all, what, outcome + " (every node must be up)");
      return new TableChange(all, 0);
    }
    ClusterView v = copyWriter.refresh();
    // a node just back is decided up within about a second, a dead one out within about 10 s;
    // one catching up may take longer, and is named
    long end = System.nanoTime() + TimeUnit.SECONDS.toNanos(12);
    while ((v.getDownCount() > 0 || v.getJoiningCount() > 0) && System.nanoTime() < end) {
      try {
        Thread.sleep(200);
      } catch (InterruptedException e) {
        Thread.currentThread().interrupt();
        break;
      }
      v = copyWriter.refresh();
    }
    if (v.getDownCount() > 0 || v.getJoiningCount() > 0) {
      throw new NodeUnavailableException("cannot " + what + ": node(s) "
          + (v.getDownCount() > 0 ? v.getDownList() + " down " : "")
          + (v.getJoiningCount() > 0 ? v.getJoiningList() + " catching up " : "")
          + "(membership epoch " + v.getEpoch() + "); " + outcome
          + " (every node must be in sync, or decided out of the in-sync copies)", null);
    }
    List<Integer> in = new ArrayList<>(all);
    in.removeAll(v.getOutList());
    if (in.isEmpty()) {
      throw new NodeUnavailableException("cannot " + what + ": every node is out of the in-sync copies; " + outcome, null);
    }
    reach(in, what, outcome);
    return new TableChange(in, v.getEpoch());
  }

  /**
   * The nodes whose statistics count: every node with one copy; with copies, those neither
   * down nor out of the in-sync copies by {@code view}. A node out holds stale copies (it empties
   * them when it comes back), and a node cut off would hold the answer up for the whole timeout.
   */
  private List<Integer> serving(ClusterView view) {
    List<Integer> nodes = new ArrayList<>();
    for (int n = 0; n < spec.nodeCount(); n++) {
      if (view == null || !view.getDownList().contains(n) && !view.getOutList().contains(n)) {
        nodes.add(n);
      }
    }
    return nodes;
  }

  /**
   * Refuses to drop a table keeping one copy of each pair (a job's kept intermediate table) while
   * nodes are out: a node coming back makes only its replicated tables those of the others, so
   * its share of such a table would come back with it.
   */
  private void refuseOneCopyWhileOut(String table, TableChange to) {
    List<Throwable> errors = new ArrayList<>();
    for (Frame<Response> r : onNodes(to.nodes(), Request.newBuilder().setTableStats(TableStats.newBuilder()
        .setTable(table)), errors)) {
      int copies = Math.max(1, r.header().getTable().getOptions().getReplication());
      r.release();
      if (copies < 2) {
        List<Integer> out = new ArrayList<>();
        for (int n = 0; n < spec.nodeCount(); n++) {
          if (!to.nodes().contains(n)) {
            out.add(n);
          }
        }
        throw new SssException(ErrorCode.NOT_SERVING, "cannot drop table '" + table + "': it keeps one copy of"
            + " each pair, and its share on node(s) " + out + " (out of the in-sync copies) would come back with"
            + " them; drop it once they are in sync again; nothing was dropped");
      }
    }
  }

  /** The nodes a create or drop goes to, and the epoch it is sent on (0: to every node, unfenced). */
  private record TableChange(List<Integer> nodes, long epoch) {}

  /** Connects to {@code nodes} first, so that a node known to be unreachable fails the change before any node takes it. */
  private void reach(List<Integer> nodes, String what, String outcome) {
    for (int n : nodes) {
      try {
        channels.get(n);
      } catch (NodeUnavailableException e) {
        throw new NodeUnavailableException("cannot " + what + ": " + e.getMessage() + "; " + outcome, e);
      }
    }
  }

  /**
   * Drops {@code table} on the nodes that made it, after its create failed on another node, so
   * that a failed create leaves nothing behind; returns {@code cause}, noting where the undo
   * failed too.
   */
  private RuntimeException undoCreate(String table, List<Integer> made, RuntimeException cause) {
    List<String> failed = new ArrayList<>();
    for (int node : made) {
      try {
        NodeChannels.await(channels.get(node).call(Request.newBuilder().setDropTable(
            DropTable.newBuilder().setTable(table).setIfExists(true))), timeout).release();
      } catch (RuntimeException e) {
        failed.add("node " + node + ": " + e.getMessage());
      }
    }
    if (failed.isEmpty()) {
      return cause;
    }
    return new SssException(cause instanceof SssException s ? s.code() : ErrorCode.INTERNAL,
        cause.getMessage() + "; undoing the create failed too (" + String.join("; ", failed)
            + "): 'table list' marks '" + table + "' incomplete; drop it when every node is up", cause);
  }

  /** One table's statistics summed over the nodes (pairs are RocksDB's estimate). */
  public TableStatus tableStats(String table) {
    List<Throwable> errors = new ArrayList<>();
    TableInfo.Builder sum = null;
    List<Integer> asked = serving(copyWriter == null ? null : copyWriter.refresh());
    for (Frame<Response> r : onNodes(asked, Request.newBuilder().setTableStats(TableStats.newBuilder().setTable(table)),
        errors)) {
      TableInfo t = r.header().getTable();
      sum = sum == null ? t.toBuilder() : sum.setPairs(sum.getPairs() + t.getPairs()).setBytes(sum.getBytes() + t.getBytes())
          .setBackgroundWork(sum.getBackgroundWork() || t.getBackgroundWork());
      r.release();
    }
    throwUnlessSurvivable(errors, spec.nodeCount() - asked.size());
    if (sum == null) {
      throw new NodeUnavailableException("no node in sync answered for table '" + table + "'", null);
    }
    return WireTypes.fromProto(perPair(sum).build());
  }

  /**
   * Statistics summed over the nodes count every copy: the pairs, an estimate, are given per
   * pair (divided by the table's copies); the bytes stay what the disks hold.
   */
  private static TableInfo.Builder perPair(TableInfo.Builder b) {
    int copies = Math.max(1, b.getOptions().getReplication());
    return b.setPairs(b.getPairs() / copies);
  }

  /**
   * Statistics may leave out unreachable nodes when every partition keeps another copy (the
   * figures are then estimates of fewer copies); with one copy, or with a node refusing, they
   * fail as before.
   */
  private void throwUnlessSurvivable(List<Throwable> errors, int skipped) {
    if (errors.isEmpty() && skipped < copies) {
      return;
    }
    if (errors.isEmpty()) {
      throw new NodeUnavailableException(ErrorCode.NOT_SERVING, skipped + " node(s) down or out of the in-sync copies,"
          + " as many as the copies of each partition: some partitions may have no copy counted");
    }
    for (Throwable e : errors) {
      RuntimeException r = NodeChannels.unwrap(e);
      if (copies == 1 || !(r instanceof NodeUnavailableException) || errors.size() + skipped >= copies) {
        throw NodeChannels.unwrap(errors.get(0));
      }
    }
  }

  /** Count requests a node has at once during {@link #count}: it counts that many partitions in parallel. */
  static final int COUNT_WINDOW = 4;

  /**
   * The exact number of pairs in a table.
   *
   * <p>A request per partition, each reading a P-th of the table, and at most
   * {@link #COUNT_WINDOW} of them at a node at once: a request's timeout runs from when it is
   * sent, so were all sent together the last one would wait for all of its node's partitions
   * and a large table would run into the timeout as a single request did. A node that cannot be
   * reached is tried once, not once per partition.
   */
  public long count(String table) {
    List<Integer> all = new ArrayList<>();
    for (int p = 0; p < partitions.partitions(); p++) {
      all.add(p);
    }
    return count(table, all);
  }

  /** The exact number of pairs of a table in the partitions {@code only} (for tools that move partitions). */
  public long count(String table, Collection<Integer> only) {
    Set<Integer> down = new HashSet<>();
    List<Integer> pending = new ArrayList<>(new TreeSet<>(only));
    for (int p : pending) {
      if (p < 0 || p >= partitions.partitions()) {
        throw new IllegalArgumentException("no partition " + p + ": the cluster has " + partitions.partitions());
      }
    }
    long total = 0;
    while (true) {
      Map<Integer, Long> counted = new ConcurrentHashMap<>();
      Set<Integer> unreachable = ConcurrentHashMap.newKeySet();
      RuntimeException failure = countOnce(table, pending, down, counted, unreachable);
      for (long n : counted.values()) {
        total += n;
      }
      if (failure == null) {
        return total;
      }
      pending = pending.stream().filter(p -> !counted.containsKey(p)).toList();
      if (!(failure instanceof NodeUnavailableException) || copies == 1
          || !down.addAll(unreachable)) {
        throw failure; // not a lost node, or no node newly lost: trying again would ask the same nodes
      }
      if (!pending.stream().allMatch(p -> firstCopy(p, down) >= 0)) {
        List<Integer> lost = pending.stream().filter(p -> firstCopy(p, down) < 0).toList();
        throw new NodeUnavailableException("count of '" + table
            + "': no copy reachable of partitions " + lost + " (nodes " + new TreeSet<>(down)
            + " down: " + failure.getMessage() + ")", failure);
      }
    }
  }

  /** The first node holding a copy of {@code partition} that is not {@code down}, or -1. */
  private int firstCopy(int partition, Set<Integer> down) {
    List<Integer> holders = placement.replicasOf(partition);
    for (int i = 0; i < copies; i++) {
      if (!down.contains(holders.get(i))) {
        return holders.get(i);
      }
    }
    return -1;
  }

  /** Counts {@code partitions} on their first copies not down; returns the first failure, or null. */
  private RuntimeException countOnce(String table, List<Integer> partitionsToCount, Set<Integer> down,
                                     Map<Integer, Long> counted, Set<Integer> unreachable) {
    List<List<Integer>> byNode = new ArrayList<>();
    for (int n = 0; n < spec.nodeCount(); n++) {
      byNode.add(new ArrayList<>());
    }
    for (int p : partitionsToCount) {
      int node = firstCopy(p, down);
      if (node < 0) {
        return new NodeUnavailableException("partition " + p + " of table '" + table
            + "': no copy reachable (nodes " + placement.replicasOf(p).subList(0, copies) + ")", null);
      }
      byNode.get(node).add(p);
    }
    AtomicReference<Throwable> first = new AtomicReference<>();
    List<CompletableFuture<Void>> lanes = new ArrayList<>();
    int longest = 0;
    for (int n = 0; n < spec.nodeCount(); n++) {
      if (byNode.get(n).isEmpty()) {
        continue;
      }
      Connection c;
      try {
        c = channels.get(n);
      } catch (RuntimeException e) {
        if (e instanceof NodeUnavailableException) {
          unreachable.add(n);
        }
        first.compareAndSet(null, e); // the count fails; requests already sent are still answered and released
        continue;
      }
      Queue<Integer> queue = new ConcurrentLinkedQueue<>(byNode.get(n));
      longest = Math.max(longest, byNode.get(n).size());
      for (int i = 0; i < Math.min(COUNT_WINDOW, byNode.get(n).size()); i++) {
        CompletableFuture<Void> lane = new CompletableFuture<>();
        lanes.add(lane);
        countNext(c, n, table, queue, counted, unreachable, first, lane);
      }
    }
    try {
      // every call ends within its own timeout (or when its connection breaks); this bound is a safety net
      CompletableFuture.allOf(lanes.toArray(new CompletableFuture[0]))
          .get(timeout.toMillis() * (longest + 1), TimeUnit.MILLISECONDS);
    } catch (Exception e) {
      first.compareAndSet(null, e);
    }
    return first.get() == null ? null : NodeChannels.unwrap(first.get());
  }

  /** Counts the next partition of {@code queue} over {@code c}, then the next, until none is left or one failed. */
  private void countNext(Connection c, int node, String table, Queue<Integer> queue,
                         Map<Integer, Long> counted, Set<Integer> unreachable,
                         AtomicReference<Throwable> first, CompletableFuture<Void> lane) {
    Integer p = first.get() == null ? queue.poll() : null;
    if (p == null) {
      lane.complete(null);
      return;
    }
    CompletableFuture<Frame<Response>> f;
    try {
      f = c.call(Request.newBuilder().setCount(Count.newBuilder().setTable(table).addPartitions(p)));
    } catch (RuntimeException e) {
      if (e instanceof NodeUnavailableException) {
        unreachable.add(node);
      }
      first.compareAndSet(null, e);
      lane.complete(null);
      return;
    }
    f.whenComplete((r, e) -> {
      if (e != null) {
        if (NodeChannels.unwrap(e) instanceof NodeUnavailableException) {
          unreachable.add(node);
        }
        first.compareAndSet(null, e);
      } else {
        counted.put(p, r.header().getCount().getPairs());
        r.release();
      }
      countNext(c, node, table, queue, counted, unreachable, first, lane);
    });
  }

  /** Sends one request to every node in parallel; successes are returned, failures collected. */
  private List<Frame<Response>> onAllNodes(Request.Builder request, List<Throwable> errors) {
    return onNodes(null, request, errors);
  }

  /** As {@link #onAllNodes} for {@code nodes} (null: every node). */
  private List<Frame<Response>> onNodes(List<Integer> nodes, Request.Builder request, List<Throwable> errors) {
    List<Frame<Response>> out = new ArrayList<>();
    for (CompletableFuture<Frame<Response>> f : sendTo(nodes, request)) {
      try {
        out.add(NodeChannels.await(f, timeout));
      } catch (RuntimeException e) {
        errors.add(e);
      }
    }
    return out;
  }

  /** Sends {@code request} to every node; the answers in node order (a node not reached: its failure). */
  private List<CompletableFuture<Frame<Response>>> sendToAllNodes(Request.Builder request) {
    return sendTo(null, request);
  }

  /** As {@link #sendToAllNodes} for {@code nodes} (null: every node), the answers in their order. */
  private List<CompletableFuture<Frame<Response>>> sendTo(List<Integer> nodes, Request.Builder request) {
    List<CompletableFuture<Frame<Response>>> futures = new ArrayList<>();
    for (int i = 0; i < (nodes == null ? spec.nodeCount() : nodes.size()); i++) {
      int n = nodes == null ? i : nodes.get(i);
      Request.Builder own = request.clone();
      // connected all at once: an unreachable node keeps the request from no other
      futures.add(channels.connection(n).thenCompose(c -> c.call(own)));
    }
    return futures;
  }

  // ---- pairs ----------------------------------------------------------------------------

  /**
   * Writes one pair, durably (per the table's WAL setting) before returning. {@code types} are
   * the types the key and value were encoded with; a table of other types refuses the pair
   * ({@link PairTypes}).
   */
  public void put(String table, PairTypes types, byte[] key, byte[] value) {
    putAll(table, types, List.of(new Pair(key, value)));
  }

  /**
   * Writes pairs and returns when every node acknowledged. Each node's share is sent as one
   * batch, which that node validates whole and applies atomically: on one node, all of it is
   * written or none of it (an oversized value refuses its node's whole share). Nodes apply their
   * shares independently: when one refuses, others may have applied theirs, and the exception
   * names the node that refused. Of two pairs with one key, the later in the list wins. A share
   * must fit in one request (64 MiB less 1 MiB; a larger one is refused before anything is
   * sent); for large loads use {@link #writer}. A table whose types are not {@code types}
   * refuses every share ({@link PairTypes}).
   */
  public void putAll(String table, PairTypes types, List<Pair> pairs) {
    if (copyWriter != null) {
      List<byte[]> keys = new ArrayList<>(pairs.size());
      List<byte[]> values = new ArrayList<>(pairs.size());
      for (Pair p : pairs) {
        keys.add(StoredKeys.storedKey(partitions.partitionOf(p.key()), p.key()));
        values.add(p.value());
      }
      copyWriter.write(keys, values, (count, epoch) -> Request.newBuilder().setPutBatch(
          PutBatch.newBuilder().setTable(table).setPairCount(count).setKeyType(types.key())
              .setValueType(types.value()).setReplication(copies).setViewEpoch(epoch)), MAX_PUT_ALL_BYTES);
      return;
    }
    int n = spec.nodeCount();
    ByteBuf[] bodies = new ByteBuf[n];
    int[] counts = new int[n];
    for (Pair p : pairs) {
      int partition = partitions.partitionOf(p.key());
      byte[] stored = StoredKeys.storedKey(partition, p.key());
      for (int node : copiesOf(partition)) {
        if (bodies[node] == null) {
          bodies[node] = Unpooled.buffer();
        }
        PairBlock.write(bodies[node], stored, p.value());
        counts[node]++;
      }
    }
    for (int node = 0; node < n; node++) {
      if (bodies[node] != null && bodies[node].readableBytes() > MAX_PUT_ALL_BYTES) {
        int over = node;
        for (ByteBuf b : bodies) {
          if (b != null) {
            b.release();
          }
        }
        throw new IllegalArgumentException("putAll's share for node " + over + " is more than "
            + MAX_PUT_ALL_BYTES + " bytes, over what one request may carry; nothing was written (use writer())");
      }
    }
    List<CompletableFuture<Frame<Response>>> futures = new ArrayList<>();
    for (int node = 0; node < n; node++) {
      if (bodies[node] != null) {
        try {
          futures.add(channels.get(node).call(Request.newBuilder().setPutBatch(
              PutBatch.newBuilder().setTable(table).setPairCount(counts[node])
                  .setKeyType(types.key()).setValueType(types.value()).setReplication(copies)), bodies[node]));
        } catch (RuntimeException e) {
          bodies[node].release();
          futures.add(CompletableFuture.failedFuture(e));
        }
      }
    }
    RuntimeException first = null;
    for (CompletableFuture<Frame<Response>> f : futures) {
      try {
        NodeChannels.await(f, timeout).release();
      } catch (RuntimeException e) {
        first = first != null ? first : e;
      }
    }
    if (first != null) {
      throw first;
    }
  }

  /** The most bytes of pairs putAll sends one node: a frame (64 MiB) less room for the header. */
  static final int MAX_PUT_ALL_BYTES = Pipelines.DEFAULT_MAX_FRAME - (1 << 20);

  /**
   * A writer for bulk loads: batched per node, several batches in flight. Its pairs are encoded
   * as {@code types}; a table of other types refuses the first batch ({@link PairTypes}).
   */
  public BulkWriter writer(String table, PairTypes types) {
    return writer(table, types, BulkWriter.DEFAULT_BATCH_BYTES, BulkWriter.DEFAULT_IN_FLIGHT);
  }

  /** A writer with explicit batch size and in-flight window. */
  public BulkWriter writer(String table, PairTypes types, int batchBytes, int maxInFlight) {
    if (copyWriter == null) {
      return new BulkWriter(channels, table, types, batchBytes, maxInFlight, null, null, timeout);
    }
    boolean multiValued;
    try {
      multiValued = tableStats(table).spec().multiValued();
    } catch (SssException e) {
      multiValued = true; // unknown (the first batch says why): it is not sent twice
    }
    return new BulkWriter(channels, table, types, batchBytes, maxInFlight, copyWriter.refresh(),
        multiValued ? null : copyWriter::refresh, timeout);
  }

  /** Reads one key (of a multi-valued table: its first value; see {@link #getAll}). */
  public Optional<byte[]> get(String table, byte[] key) {
    GetResult g = getResult(table, key);
    return g.getFound() ? Optional.of(g.getValue().toByteArray()) : Optional.empty();
  }

  /**
   * Every value of a key: of a multi-valued table all its values, in stored order; of any other
   * table its one value, or none.
   */
  public List<byte[]> getAll(String table, byte[] key) {
    GetResult g = getResult(table, key);
    if (g.getValuesCount() > 0) {
      return g.getValuesList().stream().map(ByteString::toByteArray).toList();
    }
    return g.getFound() ? List.of(g.getValue().toByteArray()) : List.of();
  }

  private GetResult getResult(String table, byte[] key) {
    int p = partitions.partitionOf(key);
    Request.Builder get = Request.newBuilder()
        .setGet(Get.newBuilder().setTable(table).setKey(ByteString.copyFrom(StoredKeys.storedKey(p, key))));
    NodeUnavailableException lost = null;
    for (int node : copiesOf(p)) {
      Frame<Response> r;
      try {
        r = NodeChannels.await(channels.get(node).call(get.clone()), timeout);
      } catch (NodeUnavailableException e) {
        lost = e; // the next copy answers, if there is one
        continue;
      } catch (SssException e) {
        if (lost == null) {
          throw e;
        }
        throw new NodeUnavailableException("partition " + p + " of table '" + table + "': "
            + lost.getMessage() + "; node " + node + " answered: " + e.getMessage(), e);
      }
      try {
        return r.header().getGet();
      } finally {
        r.release();
      }
    }
    throw copies == 1 ? lost : new NodeUnavailableException("partition " + p + " of table '"
        + table + "': no copy reachable on nodes " + copiesOf(p) + " (" + lost.getMessage() + ")", lost);
  }

  /** The nodes holding a partition's copies, its leader first. */
  private List<Integer> copiesOf(int partition) {
    return copies == 1 ? List.of(partitions.ownerOf(partition)) : placement.replicasOf(partition).subList(0, copies);
  }

  /**
   * Reads many keys, one request per node; the result holds null for absent keys. Keys whose
   * node cannot be reached are read again from their partitions' other copies.
   */
  public List<byte[]> multiGet(String table, List<byte[]> keys) {
    Set<Integer> down = new HashSet<>();
    while (true) {
      int[] lost = {-1};
      try {
        return multiGet(table, keys, down, lost);
      } catch (NodeUnavailableException e) {
        if (copies == 1 || lost[0] < 0 || !down.add(lost[0])) {
          throw e;
        }
        for (byte[] k : keys) {
          int p = partitions.partitionOf(k);
          if (firstCopy(p, down) < 0) {
            throw new NodeUnavailableException("multiGet of '" + table
                + "': no copy reachable of partition " + p + " (nodes " + new TreeSet<>(down) + " down: "
                + e.getMessage() + ")", e);
          }
        }
      }
    }
  }

  /** One round of {@link #multiGet}; a node that cannot be reached is named in {@code lost[0]}. */
  private List<byte[]> multiGet(String table, List<byte[]> keys, Set<Integer> down, int[] lost) {
    int n = spec.nodeCount();
    List<List<Integer>> indexes = new ArrayList<>();
    ByteBuf[] bodies = new ByteBuf[n];
    for (int i = 0; i < n; i++) {
      indexes.add(new ArrayList<>());
    }
    for (int i = 0; i < keys.size(); i++) {
      int p = partitions.partitionOf(keys.get(i));
      int node = firstCopy(p, down);
      if (bodies[node] == null) {
        bodies[node] = Unpooled.buffer();
      }
      PairBlock.write(bodies[node], StoredKeys.storedKey(p, keys.get(i)), new byte[0]);
      indexes.get(node).add(i);
    }
    List<CompletableFuture<Frame<Response>>> futures = new ArrayList<>(Collections.nCopies(n, null));
    for (int node = 0; node < n; node++) {
      if (bodies[node] == null) {
        continue;
      }
      try {
        futures.set(node, channels.get(node).call(Request.newBuilder().setMultiGet(
            MultiGet.newBuilder().setTable(table).setKeyCount(indexes.get(node).size())), bodies[node]));
      } catch (RuntimeException e) {
        bodies[node].release();
        futures.set(node, CompletableFuture.failedFuture(e));
      }
    }
    List<byte[]> out = new ArrayList<>(Collections.nCopies(keys.size(), (byte[]) null));
    // a key asked for twice is answered at both positions
    Map<ByteString, List<Integer>> positions = new HashMap<>();
    for (int i = 0; i < keys.size(); i++) {
      positions.computeIfAbsent(ByteString.copyFrom(keys.get(i)), k -> new ArrayList<>(1)).add(i);
    }
    RuntimeException failure = null;
    for (int node = 0; node < n; node++) {
      CompletableFuture<Frame<Response>> f = futures.get(node);
      if (f == null) {
        continue;
      }
      Frame<Response> r;
      try {
        r = NodeChannels.await(f, timeout); // every answer is awaited, so that each is released
      } catch (RuntimeException e) {
        if (failure == null) {
          failure = e;
          if (e instanceof NodeUnavailableException) {
            lost[0] = node;
          }
        }
        continue;
      }
      try {
        PairBlock.forEach(r.body(), (k, v) -> positions.get(ByteString.copyFrom(k,
            StoredKeys.PREFIX_BYTES, k.length - StoredKeys.PREFIX_BYTES)).forEach(i -> out.set(i, v)));
      } finally {
        r.release();
      }
    }
    if (failure != null) {
      throw failure;
    }
    return out;
  }

  /** Deletes keys. */
  public void delete(String table, List<byte[]> keys) {
    if (copyWriter != null) {
      List<byte[]> stored = new ArrayList<>(keys.size());
      for (byte[] key : keys) {
        stored.add(StoredKeys.storedKey(partitions.partitionOf(key), key));
      }
      copyWriter.write(stored, null, (count, epoch) -> Request.newBuilder().setDelete(
          Delete.newBuilder().setTable(table).setKeyCount(count).setReplication(copies).setViewEpoch(epoch)),
          MAX_PUT_ALL_BYTES);
      return;
    }
    int n = spec.nodeCount();
    ByteBuf[] bodies = new ByteBuf[n];
    int[] counts = new int[n];
    for (byte[] key : keys) {
      int p = partitions.partitionOf(key);
      for (int node : copiesOf(p)) {
        if (bodies[node] == null) {
          bodies[node] = Unpooled.buffer();
        }
        PairBlock.write(bodies[node], StoredKeys.storedKey(p, key), new byte[0]);
        counts[node]++;
      }
    }
    List<CompletableFuture<Frame<Response>>> futures = new ArrayList<>();
    for (int node = 0; node < n; node++) {
      if (bodies[node] != null) {
        futures.add(channels.get(node).call(Request.newBuilder().setDelete(
            Delete.newBuilder().setTable(table).setKeyCount(counts[node]).setReplication(copies)), bodies[node]));
      }
    }
    for (CompletableFuture<Frame<Response>> f : futures) {
      NodeChannels.await(f, timeout).release();
    }
  }

  /**
   * Whether {@code table} keeps one copy of each pair (a job's kept intermediate table): no other
   * node holds its partitions, and a node catching up keeps and serves them. Asked of a node not
   * in {@code notServing}; false when none answers (the scan then says what is wrong).
   */
  private boolean keepsOneCopy(String table, Set<Integer> notServing) {
    for (int n = 0; n < spec.nodeCount(); n++) {
      if (!notServing.contains(n)) {
        try {
          Frame<Response> r = NodeChannels.await(channels.get(n).call(Request.newBuilder().setTableStats(
              TableStats.newBuilder().setTable(table))), timeout);
          int copies = r.header().getTable().getOptions().getReplication();
          r.release();
          return copies < 2;
        } catch (RuntimeException e) {
          return false;
        }
      }
    }
    return false;
  }

  /** Scans a table across all nodes. Close the scan if you stop early. */
  public TableScan scan(String table, ScanOptions options) {
    Set<Integer> notServing = new TreeSet<>();
    if (copyWriter != null) {
      // nodes out or catching up refuse to serve reads: their partitions are read from the others
      ClusterView v = copyWriter.refresh();
      notServing.addAll(v.getOutList());
      notServing.addAll(v.getJoiningList());
      notServing.addAll(v.getDownList());
      if (!notServing.isEmpty() && keepsOneCopy(table, notServing)) {
        notServing.clear(); // its one copy is on its node, which serves it (see keepsOneCopy)
      }
    }
    return new TableScan(channels, table, options, timeout, notServing);
  }

  // ---- jobs -----------------------------------------------------------------------------

  /**
   * Submits a job: it starts at once on a coordinator thread of this client. Use
   * {@link org.sss.client.job.RunningJob#await} to wait for its result.
   */
  public RunningJob submit(Job job) {
    return Jobs.start(this, job);
  }

  @Override
  public void close() {
    if (goneNodes != null) {
      goneNodes.close();
    }
    channels.close();
  }

}
