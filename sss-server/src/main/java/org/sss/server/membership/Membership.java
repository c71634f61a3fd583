package org.sss.server.membership;

import java.io.IOException;
import java.net.InetSocketAddress;
import java.net.ServerSocket;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.Locale;
import java.util.Optional;
import java.util.UUID;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicReference;
import java.util.concurrent.locks.Lock;
import java.util.concurrent.locks.ReentrantLock;
import java.util.concurrent.locks.ReentrantReadWriteLock;
import java.util.concurrent.locks.StampedLock;
import java.util.function.Consumer;
import java.util.function.Supplier;
import java.util.logging.Level;
import org.apache.ratis.RaftConfigKeys;
import org.apache.ratis.client.RaftClient;
import org.apache.ratis.client.RaftClientConfigKeys;
import org.apache.ratis.conf.Parameters;
import org.apache.ratis.conf.RaftProperties;
import org.apache.ratis.grpc.GrpcConfigKeys;
import org.apache.ratis.protocol.Message;
import org.apache.ratis.protocol.RaftClientReply;
import org.apache.ratis.protocol.RaftGroup;
import org.apache.ratis.protocol.RaftGroupId;
import org.apache.ratis.protocol.RaftPeer;
import org.apache.ratis.protocol.RaftPeerId;
import org.apache.ratis.retry.RetryPolicies;
import org.apache.ratis.rpc.SupportedRpcType;
import org.apache.ratis.server.RaftServer;
import org.apache.ratis.server.RaftServerConfigKeys;
import org.apache.ratis.server.storage.RaftStorage;
import org.apache.ratis.thirdparty.com.google.protobuf.ByteString;
import org.apache.ratis.util.TimeDuration;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;
import org.sss.core.cluster.ClusterSpec;
import org.sss.core.cluster.InSyncCopies;
import org.sss.core.cluster.JobTables;
import org.sss.core.proto.ClusterView;
import org.sss.core.proto.ErrorCode;
import org.sss.core.proto.StoreSeen;
import org.sss.core.proto.ViewAnswer;
import org.sss.core.proto.ViewChange;
import org.sss.kvs.NodeStore;
import org.sss.kvs.StoreException;
import org.sss.kvs.StoreTable;

/**
 * A node's part in deciding which nodes of a replicated cluster are down: the decisions are
 * made by Apache Ratis (Raft), embedded in the servers, never by code of SSS's own that votes.
 *
 * <h2>Who takes part</h2>
 * The first nodes vote ({@link #voters}: 1 of 2, 3 of 3 or 4, 5 of 5 or more), so that the
 * cluster decides while a majority of them is up; the other nodes read the decisions. Every
 * node keeps the last view it read and when a majority last confirmed it (a linearizable read,
 * every {@link #REFRESH}).
 *
 * <h2>What is decided</h2>
 * The node leading Raft probes every node's SSS port ({@link LivenessProbe}); one that has not
 * answered for {@link #DOWN_AFTER} is proposed down, and a node down that answers again is
 * proposed up. A proposal names the epoch it was made on, and Raft's log applies it only if the
 * view is still there, so a proposal of a leader that lost its leadership changes nothing.
 *
 * <p>A cluster of one copy has no membership: its nodes hold disjoint data, and a node that is
 * down is simply a failed request.
 */
public final class Membership implements AutoCloseable {
  private static final Logger LOG = LoggerFactory.getLogger(Membership.class);
  /**
   * The gRPC inside Ratis logs through java.util.logging, whose INFO lines (which socket
   * transport it found) reach the console of an embedded cluster's command. Held here because
   * java.util.logging keeps its loggers, and so their levels, only weakly.
   */
  private static final java.util.logging.Logger GRPC_LOG = quiet("org.apache.ratis.thirdparty.io.grpc");

  private static java.util.logging.Logger quiet(String name) {
    java.util.logging.Logger l = java.util.logging.Logger.getLogger(name);
    l.setLevel(Level.WARNING);
    return l;
  }
  /** How often a node reads the view and the leader probes the nodes. */
  static final long REFRESH_MILLIS = 500;
  /**
   * A node silent this long is proposed down: long enough that a node busy with a large job on
   * a loaded machine (a collection, a slow first connection) is not taken for dead.
   */
  static final long DOWN_AFTER_MILLIS = 5_000;
  /**
   * A node serves a replicated table only while a majority confirmed its view this recently: a
   * node cut off from the majority stops serving within this time, whatever it last read.
   */
  static final long LEASE_MILLIS = 2_000;
  /**
   * A node down this long (on the leader's clock) may be decided out: by then its lease has run
   * out even if it never read that it was down, so nothing it serves can miss a write made
   * without it.
   */
  static final long OUT_AFTER_MILLIS = LEASE_MILLIS + 1_000;
  /** The longest a request waits for a fresh view before it is refused. */
  private static final long REFRESH_WAIT_MILLIS = 1_500;

  private final ClusterSpec spec;
  private final int self;
  private final List<Integer> voters;
  private final RaftGroup group;
  private final RaftServer server; // null on a node that does not vote
  private final RaftClient client;
  /** The client of reads sent to the leader this node's Raft member follows ({@link #knownLeader}); null on a node that does not vote. */
  private final RaftClient pinnedReads;
  /**
   * Runs the reads of {@link #refreshNow} with the blocking API. Ratis's asynchronous one keeps a
   * queue per server that one failed request closes for good: every later read sent there
   * would fail at once.
   */
  private final ExecutorService viewReads;
  /** When a disk counts as not answering (LivenessProbe.diskStalledMillis, read once). */
  private final long diskStalledMillis;
  private final SignedChanges signatures;
  private final InSyncCopies copies;
  private final ViewStateMachine machine;
  private final LivenessProbe probe;
  /** Whether this node's disk answers, reported with the view (see DiskProbe). */
  private final DiskProbe disk;
  private final ScheduledExecutorService timer;
  private volatile ClusterView view = ClusterView.getDefaultInstance();
  private final List<Consumer<ClusterView>> viewListeners = new CopyOnWriteArrayList<>();
  private volatile long confirmedAtNanos = 0;
  /** How long a leader whose disk does not answer waits between two tries to hand its leadership over. */
  static final long HAND_OVER_EVERY_MILLIS = 5_000;
  /** Whether a hand-over of this node's leadership is under way. */
  private final AtomicBoolean handingOver = new AtomicBoolean();
  /** When the last hand-over began (0: never); the membership thread's. */
  private long lastHandOverNanos;
  /** How many hand-overs were begun; the membership thread's. */
  private int handOvers;
  /** Whether this node led at its last round (only the membership thread touches it). */
  private boolean leading;
  /** When this node, leading, first saw each node down (0: not down); the membership thread's. */
  private final long[] downSeenNanos;
  /**
   * When this leader first saw each node joining (0: not joining). A node that just came back
   * may have answered no probe yet (its last answer dates from before it died), so it gets the
   * full down time from here before its silence counts.
   */
  private final long[] joiningSeenNanos;
  /**
   * When this leader first saw each node in sync and up (0: not so): silence counts only from
   * then. A node back from a cut catches up and is decided up within a second or two, while the
   * probe's own connection to it may still be waiting out a connect timeout begun during the cut;
   * counted from before, that silence would decide the node down again at once.
   */
  private final long[] upSeenNanos;
  /**
   * Writes hold it shared from their epoch check until they are applied; a new view is taken
   * exclusively. So once a node has a view, no write checked against an older one is still
   * being applied: what a node catching up copies from it holds every such write.
   */
  private final ReentrantReadWriteLock viewLock =
      new ReentrantReadWriteLock();
  /** The one read of the view under way for requests that need a fresh one, or null. */
  private final AtomicReference<CompletableFuture<Void>> refreshing =
      new AtomicReference<>();
  /**
   * Reads and stages hold it shared while they read this node's copies; emptying the copies
   * (a node decided out, {@link CatchUp}) takes it exclusively, so nothing admitted to read finds
   * them emptied under it. Stamped, not reentrant: a stage releases it from another thread.
   */
  private final StampedLock copiesLock = new StampedLock();
  private final CatchUp catchUp;
  private volatile boolean closed;
  /**
   * Why this node serves nothing yet, when it stopped without flushing (a crash) while holding
   * replicated tables without a WAL, or while a replicated table held a bulk writer's pairs not
   * sealed yet: their copies here may lack writes that other copies hold, so it leaves the
   * in-sync copies and catches up first. Null otherwise, and once it is out.
   */
  private volatile String mayHaveLostWrites;
  /**
   * Why this node does not serve while the members decide whether to take it out at epoch
   * {@link #leavingEpoch} ({@link #copyAgain}), or null. Cleared once a view past that epoch
   * is taken (out then, or another decision came first and the proposal cannot apply), or when
   * the proposal was refused at that epoch; until then it must not serve on its old view, since
   * the members may already have taken it out and writes be acknowledged without it.
   */
  private volatile String leaving;
  private volatile long leavingEpoch;
  /** The newest epoch at which this node took a view with itself out or catching up; -1 before. */
  private volatile long lastLeftEpoch = -1;
  /**
   * One proposal to take this node out at a time: {@link #copyAgain}'s, or the round's after a
   * lost answer (the round does not wait for it: a round held up by a slow proposal would not
   * probe the other nodes, and might then find them silent).
   */
  private final ReentrantLock leaveLock = new ReentrantLock();
  /**
   * Set by a test: the next decision this node proposes is applied, and its answer thrown away,
   * as when the connection to the leader breaks after the members decided. What a node does when
   * it cannot know the outcome is otherwise reached only by cutting links at the right moment.
   */
  volatile boolean loseNextAnswer;
  /**
   * Set by a test: run by {@link #copyAgain} once it has read the view it proposes against, as
   * another decision taken in that moment would be.
   */
  volatile Runnable beforeLeaving = () -> { };
  /** This node's store; null in tests of the members alone. */
  private final NodeStore store;

  /** This node's store's id ({@code NodeStore.storeId}): it serves only while the view records it. */
  private final String storeId;

  private Membership(ClusterSpec spec, int self, String listenHost, Path storage, NodeStore store,
                     Parameters tls) throws IOException {
    this.spec = spec;
    this.self = self;
    this.copies = new InSyncCopies(spec.placement());
    this.downSeenNanos = new long[spec.nodeCount()];
    this.joiningSeenNanos = new long[spec.nodeCount()];
    this.upSeenNanos = new long[spec.nodeCount()];
    this.voters = voters(spec.nodeCount());
    this.signatures = new SignedChanges(spec.secret());
    List<RaftPeer> peers = new ArrayList<>();
    for (int v : voters) {
      peers.add(RaftPeer.newBuilder().setId(peerId(v)).setAddress(spec.raftAddress(v).hostPort()).build());
    }
    this.group = RaftGroup.valueOf(groupId(spec), peers);
    this.machine = new ViewStateMachine(signatures, copies);
    RaftServer s = null;
    if (voters.contains(self)) {
      RaftProperties p = properties();
      GrpcConfigKeys.Server.setHost(p, listenHost);
      GrpcConfigKeys.Server.setPort(p, spec.raftAddress(self).port());
      // a root per group: Ratis starts every group it finds under its root, and a resize runs the
      // nodes once under a group of its own (another secret), whose log must not start beside this one
      RaftServerConfigKeys.setStorageDir(p, List.of(storageRoot(storage, group.getGroupId()).toFile()));
      // elections: long enough that a busy two-core machine does not call spurious ones
      RaftServerConfigKeys.Rpc.setTimeoutMin(p, TimeDuration.valueOf(1000, TimeUnit.MILLISECONDS));
      RaftServerConfigKeys.Rpc.setTimeoutMax(p, TimeDuration.valueOf(2000, TimeUnit.MILLISECONDS));
      // but the first one, at a start, soon: every start (and restart, and resize) waits for a
      // leader, and a vote asked of a node not yet listening is simply asked again later
      RaftServerConfigKeys.Rpc.setFirstElectionTimeoutMin(p, TimeDuration.valueOf(300, TimeUnit.MILLISECONDS));
      RaftServerConfigKeys.Rpc.setFirstElectionTimeoutMax(p, TimeDuration.valueOf(600, TimeUnit.MILLISECONDS));
      RaftServerConfigKeys.Read.setOption(p, RaftServerConfigKeys.Read.Option.LINEARIZABLE);
      RaftServerConfigKeys.Snapshot.setAutoTriggerEnabled(p, true);
      RaftServerConfigKeys.Snapshot.setAutoTriggerThreshold(p, 1000);
      s = RaftServer.newBuilder().setServerId(RaftPeerId.valueOf(peerId(self))).setGroup(group).setProperties(p)
          .setParameters(tls).setStateMachine(machine).setOption(RaftStorage.StartupOption.RECOVER).build();
      s.start();
    }
    this.server = s;
    RaftProperties cp = properties();
    RaftClientConfigKeys.Rpc.setRequestTimeout(cp, TimeDuration.valueOf(3, TimeUnit.SECONDS));
    this.client = RaftClient.newBuilder().setProperties(cp).setParameters(tls).setRaftGroup(group)
        .setRetryPolicy(RetryPolicies.retryUpToMaximumCountWithFixedSleep(3,
            TimeDuration.valueOf(200, TimeUnit.MILLISECONDS)))
        .build();
    // reads sent to one chosen server are not redirected by the client when that server fails:
    // not retried either, the next round chooses again
    this.pinnedReads = s == null ? null : RaftClient.newBuilder().setProperties(cp).setParameters(tls).setRaftGroup(group)
        .setRetryPolicy(RetryPolicies.noRetry()).build();
    this.diskStalledMillis = LivenessProbe.diskStalledMillis(); // checked by start: a positive number
    this.probe = new LivenessProbe(spec, self, diskStalledMillis);
    this.viewReads = Executors.newSingleThreadExecutor(r -> {
      Thread t = new Thread(r, "sss-node" + self + "-view-reads");
      t.setDaemon(true);
      return t;
    });
    Files.createDirectories(storage);
    this.disk = new DiskProbe(storage, "sss-node" + self + "-disk-probe");
    this.catchUp = new CatchUp(spec, self, store, this);
    this.store = store;
    this.mayHaveLostWrites = store == null ? null : lostWritesIn(store);
    if (mayHaveLostWrites != null) {
      store.owesCatchUp();
      LOG.warn("{}", mayHaveLostWrites);
    }
    this.storeId = store == null ? "" : store.storeId();
    this.timer = Executors.newSingleThreadScheduledExecutor(r -> {
      Thread t = new Thread(r, "sss-node" + self + "-membership");
      t.setDaemon(true);
      return t;
    });
    timer.scheduleWithFixedDelay(this::tick, 0, REFRESH_MILLIS, TimeUnit.MILLISECONDS);
  }

  /**
   * The group's own storage root under {@code storage}: {@code storage/<group>}, holding Ratis's
   * {@code <group>} directory. A log an earlier version kept directly at {@code storage/<group>}
   * is moved into it first (in two renames; a start after a crash between them ends the move).
   */
  static Path storageRoot(Path storage, RaftGroupId group) throws IOException {
    String id = group.getUuid().toString();
    Path root = storage.resolve(id);
    Path moving = storage.resolve(id + ".moving");
    if (Files.isDirectory(root.resolve("current"))) {
      Files.move(root, moving);
    }
    if (Files.isDirectory(moving)) {
      Files.createDirectories(root);
      Files.move(moving, root.resolve(id));
    }
    return root;
  }

  /** Why a store that crashed may lack acknowledged writes to replicated tables; null when it cannot. */
  private String lostWritesIn(NodeStore store) {
    List<String> noWal = store.openedAfterFlushedClose() ? List.of() : store.tables().stream()
        .filter(t -> t.options().getReplication() > 1 && t.options().getDisableWal()
            && !JobTables.isJobTable(t.name()))
        .map(StoreTable::name).sorted().toList();
    List<String> unsealed = store.tablesThatLostUnsealedPairs().stream().map(StoreTable::name).sorted().toList();
    if (noWal.isEmpty() && unsealed.isEmpty()) {
      return null;
    }
    return "node " + self + (noWal.isEmpty() ? "" : " stopped without flushing, and its copies of tables without a WAL "
        + noWal + " may lack acknowledged writes;") + (unsealed.isEmpty() ? "" : " stopped while bulk writers' pairs of "
        + unsealed + " were not sealed yet, which its copies may lack while others hold them;")
        + " it catches up before it serves";
  }

  /** The crash's possible losses are decided on: out, the node catches up; the last copy in sync, it serves. */
  private void lostWritesSettled() {
    mayHaveLostWrites = null;
    store.lostWritesSettled();
  }

  /**
   * Starts this node's part in a replicated cluster's membership, its Raft log under
   * {@code storage}; null for a cluster of one copy.
   */
  public static Membership start(ClusterSpec spec, int self, String listenHost, Path storage,
                                 NodeStore store, Path tlsCert, Path tlsKey) {
    if (spec.replication() < 2) {
      return null;
    }
    // Ratis ends the JVM (System.exit) when its server cannot start; in an embedded cluster that
    // JVM is the user's. Made to throw instead, once per JVM.
    org.apache.ratis.util.ExitUtils.disableSystemExit();
    LivenessProbe.diskStalledMillis(); // a setting that is no positive number stops the start, naming it
    if (voters(spec.nodeCount()).contains(self)) {
      checkFree(listenHost, spec.raftAddress(self).port(), self);
    }
    try {
      return new Membership(spec, self, listenHost, storage, store, RaftTls.parameters(spec, tlsCert, tlsKey));
    } catch (IOException | RuntimeException e) {
      throw new IllegalStateException("node " + self + ": cannot start its membership (Raft) on "
          + listenHost + ":" + spec.raftAddress(self).port() + " (node." + self + ".raft.port): " + e.getMessage(), e);
    }
  }

  /** Names a membership port that another process holds, before Raft tries it. */
  private static void checkFree(String host, int port, int self) {
    try (ServerSocket probe = new ServerSocket()) {
      probe.setReuseAddress(true);
      probe.bind(new InetSocketAddress(host, port));
    } catch (IOException e) {
      throw new IllegalStateException("node " + self + ": cannot listen for its membership (Raft) on " + host + ":"
          + port + " (node." + self + ".raft.port): " + e.getMessage());
    }
  }

  /**
   * The Raft group of a cluster, the same on every node: derived from its layout and, through a
   * MAC, its secret, so that two clusters of one layout never take each other's members for
   * their own, and the id reveals nothing of the secret.
   */
  static RaftGroupId groupId(ClusterSpec spec) {
    byte[] name = new SignedChanges(spec.secret()).mac(
        ("sss-membership-group:" + spec.partitionMap().layout()).getBytes(StandardCharsets.UTF_8));
    return RaftGroupId.valueOf(UUID.nameUUIDFromBytes(name));
  }

  /** The voting nodes of a cluster of {@code nodes} nodes: an odd number, at most five. */
  static List<Integer> voters(int nodes) {
    int n = nodes <= 2 ? 1 : nodes <= 4 ? 3 : 5;
    List<Integer> out = new ArrayList<>();
    for (int i = 0; i < n; i++) {
      out.add(i);
    }
    return out;
  }

  private static String peerId(int node) {
    return "node" + node;
  }

  private static RaftProperties properties() {
    RaftProperties p = new RaftProperties();
    RaftConfigKeys.Rpc.setType(p, SupportedRpcType.GRPC);
    return p;
  }

  /** Reads the view; on the leader, probes the nodes and proposes what changed. Never throws. */
  private void tick() {
    try {
      refresh();
      ClusterView v = view;
      if (confirmedAtNanos != 0 && v.getJoiningList().contains(self) && !catchUp.running()) {
        // joining without catching up: it stopped while catching up (what it copied may miss
        // writes made while it was gone), so it starts over
        propose(ViewChange.newBuilder().setExpectEpoch(v.getEpoch()).setMarkOut(self).build(),
            "node " + self + " stopped while catching up and starts over");
      }
      if (mayHaveLostWrites != null && confirmedAtNanos != 0) {
        leaveTheInSyncCopies(view);
      }
      String asked = leaving;
      if (asked != null && confirmedAtNanos != 0 && leaveLock.tryLock()) {
        try {
          settleLeaving(asked); // a proposal whose answer was lost: propose it again, until settled
        } finally {
          leaveLock.unlock();
        }
      }
      // out, it catches up, but only on the store the members recorded for it: a node back on a
      // new store is recorded (out) by the leader's next round; caught up before that, it would be
      // decided up on a store the view does not name
      if (view.getOutList().contains(self) && storeId.equals(view.getStoresMap().get(self))) {
        catchUp.startIfIdle();
      }
      boolean leads = server != null && server.getDivision(group.getGroupId()).getInfo().isLeaderReady();
      if (leads && !leading) {
        probe.forget(); // a new leader gives every node the full time, from now
        // and remembers nothing it saw while it last led (a node down then may have been up since)
        Arrays.fill(downSeenNanos, 0);
        Arrays.fill(joiningSeenNanos, 0);
        Arrays.fill(upSeenNanos, 0);
      }
      leading = leads;
      if (leads) {
        if (disk.stalledMillis() >= diskStalledMillis) {
          handOverLeadership(v);
        }
        probe.probeAll();
        decide();
      }
    } catch (Exception e) {
      LOG.debug("node {}: membership round failed: {}", self, e.toString());
    }
  }

  /**
   * A leader whose disk does not answer hands its leadership to another voter. The leader
   * decides who is down, and a node never decides itself down; its heartbeats and the reads of
   * the view need no disk, so it would keep leading, and the cluster would wait on it. A voter
   * not down or out takes over (Ratis's leadership transfer: it starts an election at once);
   * its probe then finds this node's disk stalled and decides it down. Tried again every
   * {@link #HAND_OVER_EVERY_MILLIS} while this node still leads; on its own thread, since the
   * transfer waits for the other voter's log.
   */
  private void handOverLeadership(ClusterView v) {
    long now = System.nanoTime();
    if (handingOver.get() || lastHandOverNanos != 0
        && now - lastHandOverNanos < TimeUnit.MILLISECONDS.toNanos(HAND_OVER_EVERY_MILLIS)) {
      return;
    }
    lastHandOverNanos = now;
    List<Integer> up = voters.stream().filter(n -> n != self && !InSyncCopies.downOrOut(v).contains(n)).toList();
    // another voter at each try: one that did not take over may itself be in trouble
    Optional<Integer> to = up.isEmpty() ? Optional.empty() : Optional.of(up.get(handOvers++ % up.size()));
    if (to.isEmpty()) {
      LOG.error("node {}: its disk has not answered for {} ms, but no other voter is up to take over leading the"
          + " members", self, disk.stalledMillis());
      return;
    }
    LOG.warn("node {}: its disk has not answered for {} ms; it hands leading the members to node {}", self,
        disk.stalledMillis(), to.get());
    handingOver.set(true);
    Thread t = new Thread(() -> {
      try {
        RaftClientReply r = client.admin().transferLeadership(RaftPeerId.valueOf(peerId(to.get())),
            RaftPeerId.valueOf(peerId(self)), HAND_OVER_EVERY_MILLIS);
        LOG.info("node {}: handing leadership to node {}: {}", self, to.get(),
            r.isSuccess() ? "done" : String.valueOf(r.getException()));
      } catch (IOException | RuntimeException e) {
        LOG.warn("node {}: handing leadership to node {} failed: {}", self, to.get(), e.toString());
      } finally {
        handingOver.set(false);
      }
    }, "sss-node" + self + "-hand-over");
    t.setDaemon(true);
    t.start();
  }

  /**
   * Asked by an operator whose copies came to differ ({@code table verify --repair}): proposes
   * this node out of the in-sync copies now, and answers only once the members took it out, so
   * that it then empties its copies and catches up from the others (every replicated table it
   * holds, writes made meanwhile included), as a node decided out after a crash does. Nothing is
   * proposed for a node already out or catching up.
   *
   * @return the view that took this node out (or in which it already was)
   * @throws StoreException {@code NOT_SERVING} when this node does not serve, holds a partition
   *     with no other copy up and in sync (nothing to copy it from), or the members did not take
   *     it out (another decision came first: ask again)
   * @throws IOException when the members did not answer: the outcome is unknown, and the node
   *     serves nothing until it is settled (it proposes again at each round)
   */
  public ClusterView copyAgain(String reason) throws IOException {
    refreshNow(System.nanoTime()); // the view another node's catch-up just changed, not the last round's
    ClusterView v = view;
    if (v.getOutList().contains(self) || v.getJoiningList().contains(self)) {
      return v;
    }
    String notServing = notServing(v);
    if (notServing != null) {
      throw new StoreException(ErrorCode.NOT_SERVING, notServing + "; it copies nothing again");
    }
    List<Integer> only = copies.onlyCopies(v, self);
    if (!only.isEmpty()) {
      throw new StoreException(ErrorCode.NOT_SERVING, "node " + self + " holds the only copy up and in sync of"
          + " partitions " + only + ": there is no other copy to copy them from now; try again once the others serve");
    }
    String why = "node " + self + " was asked to copy its partitions again from the other copies (" + reason + ")";
    // it stops serving before the members take it out: once they have, writes are acknowledged
    // without it, and a read it served on its old view could miss them
    viewLock.writeLock().lock(); // as note() takes a view: a view past v's now settles this leaving
    try {
      if (view.getEpoch() != v.getEpoch()) {
        throw new StoreException(ErrorCode.NOT_SERVING, "the view moved on to epoch " + view.getEpoch() + " while node "
            + self + " was asked to copy again: nothing changed; ask again");
      }
      leavingEpoch = v.getEpoch();
      leaving = why + "; it catches up before it serves";
    } finally {
      viewLock.writeLock().unlock();
    }
    beforeLeaving.run();
    // a proposal that fails (no answer) may still be applied: it keeps not serving until settled (see tick)
    ClusterView after = settleLeaving(why);
    if (lastLeftEpoch <= v.getEpoch()) {
      throw new StoreException(ErrorCode.NOT_SERVING, "the members did not take node " + self + " out of the in-sync"
          + " copies (the view moved on to epoch " + after.getEpoch() + " first, or a partition it holds lost its"
          + " other copy): nothing changed; ask again");
    }
    return after;
  }

  /**
   * Proposes this node out at {@link #leavingEpoch} (again: the change names its epoch, so it
   * applies once at most) and takes the outcome: a view past that epoch ends the leaving
   * ({@link #note}), and a proposal refused at that epoch ends it too.
   */
  private ClusterView settleLeaving(String why) throws IOException {
    leaveLock.lock();
    try {
      long epoch = leavingEpoch;
      ClusterView now = view;
      if (leaving == null || now.getEpoch() > epoch) {
        // settled, by the other caller or by a view past the epoch, at which the change cannot apply any more
        if (leavingEpoch == epoch) {
          leaving = null;
        }
        return now;
      }
      ClusterView after = propose(ViewChange.newBuilder().setExpectEpoch(epoch).setMarkOut(self).build(), why);
      if (after.getEpoch() > epoch) {
        note(after); // out: it does not serve, and catches up at the next round
      } else if (leavingEpoch == epoch) {
        leaving = null; // refused at this epoch, for good (the view decides): it serves as before
      }
      return after;
    } finally {
      leaveLock.unlock();
    }
  }

  /**
   * After a crash that may have lost writes ({@link #mayHaveLostWrites}): proposes this node out
   * of the in-sync copies, so that it catches up. A node holding the only copy in sync of some
   * partition cannot leave; it serves what it has, and says so.
   */
  private void leaveTheInSyncCopies(ClusterView v) throws IOException {
    if (v.getOutList().contains(self) || v.getJoiningList().contains(self)) {
      lostWritesSettled(); // out, it catches up; joining, it starts over (see tick)
      return;
    }
    List<Integer> only = copies.onlyCopies(v, self);
    if (only.isEmpty()) {
      propose(ViewChange.newBuilder().setExpectEpoch(v.getEpoch()).setMarkOut(self).build(), mayHaveLostWrites);
      return;
    }
    List<Integer> lastInSync = new ArrayList<>();
    for (int p : only) {
      if (spec.placement().replicasOf(p).stream().noneMatch(n -> n != self && InSyncCopies.inSync(v, n))) {
        lastInSync.add(p);
      }
    }
    if (!lastInSync.isEmpty()) {
      LOG.error("node {}: {}; but it holds the only copy in sync of partitions {}, so it serves what it has",
          self, mayHaveLostWrites, lastInSync);
      lostWritesSettled();
    }
    // else another copy in sync is down: it may hold the writes lost here, so this node waits for it
  }

  /**
   * The leader this node's Raft member follows (itself when it leads), or null on a node that
   * does not vote or knows no leader. Reads of the view go there rather than to the leader the
   * Raft client last used: after the leadership moves away from a node that hangs (a leader
   * whose disk stopped answering hands it over), the client would go on asking the old leader,
   * waiting out its request timeout at every read, and the node's view would not be confirmed
   * for long enough that the members decide it down too (seen in the frozen-disk drill, mode
   * leader: the node that stayed a follower was decided down beside the frozen one).
   */
  private RaftPeerId knownLeader() {
    if (server == null) {
      return null;
    }
    try {
      return server.getDivision(group.getGroupId()).getInfo().getLeaderId();
    } catch (IOException e) {
      return null;
    }
  }

  /** One linearizable read of the view, sent to {@link #knownLeader} when there is one. */
  private RaftClientReply readView() throws IOException {
    RaftPeerId leader = knownLeader();
    return leader == null ? client.io().sendReadOnly(Message.valueOf(ByteString.EMPTY))
        : pinnedReads.io().sendReadOnly(Message.valueOf(ByteString.EMPTY), leader);
  }

  /** A linearizable read of the view: when it succeeds, a majority of the voters confirmed it. */
  private void refresh() throws IOException {
    long asked = System.nanoTime();
    RaftClientReply reply = readView();
    if (reply.isSuccess()) {
      ClusterView read = ClusterView.parseFrom(reply.getMessage().getContent().toByteArray());
      if (read.getEpoch() >= view.getEpoch()) {
        note(read);
      }
      confirmedAtNanos = asked; // from when it was asked: the confirmation is at least that fresh
    }
  }

  /**
   * Reads the view now, unless a read asked after {@code since} already confirmed it; waits at
   * most {@link #REFRESH_WAIT_MILLIS}. Concurrent callers share one read.
   */
  private void refreshNow(long since) {
    if (confirmedAtNanos - since > 0) {
      return;
    }
    CompletableFuture<Void> read = refreshing.get();
    if (read == null || read.isDone()) {
      CompletableFuture<Void> mine = new CompletableFuture<>();
      if (refreshing.compareAndSet(read, mine)) {
        long asked = System.nanoTime();
        CompletableFuture<RaftClientReply> sent;
        try {
          sent = CompletableFuture.supplyAsync(() -> {
            try {
              return readView();
            } catch (IOException e) {
              throw new java.util.concurrent.CompletionException(e);
            }
          }, viewReads);
        } catch (RuntimeException e) {
          sent = CompletableFuture.failedFuture(e); // the next caller tries again
        }
        sent.whenComplete((reply, failure) -> {
          try {
            if (reply != null && reply.isSuccess()) {
              note(ClusterView.parseFrom(reply.getMessage().getContent().toByteArray()));
              confirmedAtNanos = asked;
            }
          } catch (Exception e) {
            LOG.debug("node {}: reading the view failed: {}", self, e.toString());
          } finally {
            mine.complete(null);
          }
        });
      }
      read = refreshing.get();
    }
    try {
      read.get(REFRESH_WAIT_MILLIS, TimeUnit.MILLISECONDS);
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
    } catch (Exception e) {
      // not confirmed in time: the lease says what the request may do
    }
  }

  private void decide() throws IOException {
    ClusterView v = view;
    long now = System.nanoTime();
    for (int node = 0; node < spec.nodeCount(); node++) {
      boolean down = v.getDownList().contains(node);
      downSeenNanos[node] = !down ? 0 : downSeenNanos[node] != 0 ? downSeenNanos[node] : now;
      boolean joining = v.getJoiningList().contains(node);
      joiningSeenNanos[node] = !joining ? 0 : joiningSeenNanos[node] != 0 ? joiningSeenNanos[node] : now;
      boolean up = !down && !joining && !v.getOutList().contains(node);
      upSeenNanos[node] = !up ? 0 : upSeenNanos[node] != 0 ? upSeenNanos[node] : now;
    }
    for (int node = 0; node < spec.nodeCount(); node++) {
      boolean down = v.getDownList().contains(node);
      boolean out = v.getOutList().contains(node);
      boolean joining = v.getJoiningList().contains(node);
      long silent = probe.silentMillis(node);
      ViewChange.Builder change = ViewChange.newBuilder().setExpectEpoch(v.getEpoch());
      // first of all: a node back on another store than the one recorded must not be decided up
      String store = node == self ? storeId : probe.answered(node) ? probe.store(node) : "";
      if (!store.isEmpty() && !store.equals(v.getStoresMap().get(node))) {
        boolean replaced = v.getStoresMap().containsKey(node);
        if (replaced && down && !out && !joining && !copies.onlyCopies(v, node).isEmpty()) {
          continue; // cannot leave yet (see ViewStateMachine.storeSeen): it stays down, not decided up
        }
        ClusterView after = propose(change.setStoreSeen(StoreSeen.newBuilder().setNode(node).setStore(store)).build(),
            replaced ? "node " + node + " answers from another store than the one recorded (its data directory was"
                + " lost or replaced): it holds none of its writes; out to catch up, or down while its partitions"
                + " have no other copy in sync" : "node " + node + "'s store recorded");
        if (after.getEpoch() == v.getEpoch()) {
          continue; // not taken: it is not decided up either
        }
        if (replaced || after.getEpoch() != v.getEpoch() + 1 || !store.equals(after.getStoresMap().get(node))) {
          return; // one decision per round, each on the view it read
        }
        // this first store was all that changed: a new cluster's nodes are recorded in one round
        v = after;
        continue;
      }
      if (!down && !out && !joining && node != self
          && Math.min(silent, TimeUnit.NANOSECONDS.toMillis(now - upSeenNanos[node])) >= DOWN_AFTER_MILLIS) {
        propose(change.setMarkDown(node).build(), "node " + node + " has not answered for " + silent + " ms");
        return; // one decision per round, each on the view it read
      }
      if (down && (node == self || probe.answered(node))) {
        propose(change.setMarkUp(node).build(), "node " + node + " answers again");
        return;
      }
      if (down && TimeUnit.NANOSECONDS.toMillis(now - downSeenNanos[node]) >= OUT_AFTER_MILLIS
          && copies.onlyCopies(v, node).isEmpty()) {
        propose(change.setMarkOut(node).build(), "node " + node + " has been down for "
            + TimeUnit.NANOSECONDS.toMillis(now - downSeenNanos[node]) + " ms; the other copies take its writes");
        return;
      }
      if (joining && node != self && Math.min(silent, TimeUnit.NANOSECONDS.toMillis(now - joiningSeenNanos[node]))
          >= DOWN_AFTER_MILLIS) {
        propose(change.setMarkOut(node).build(), "node " + node + " stopped answering while catching up");
        return;
      }
    }
  }

  /** Proposes a change and returns the view after it (the same epoch when it was not applied). */
  ClusterView propose(ViewChange change, String why) throws IOException {
    RaftClientReply reply = client.io().send(Message.valueOf(ByteString.copyFrom(signatures.sign(change))));
    if (!reply.isSuccess()) {
      throw new IOException("the members did not decide (" + reply.getException() + ")");
    }
    if (loseNextAnswer) {
      loseNextAnswer = false;
      throw new IOException("the members' answer was lost (a test's fault)");
    }
    ClusterView after = ClusterView.parseFrom(reply.getMessage().getContent().toByteArray());
    if (after.getEpoch() > change.getExpectEpoch()) {
      if (change.hasStoreSeen()) {
        int node = change.getStoreSeen().getNode();
        String decided = after.getOutList().contains(node) ? "out" : after.getDownList().contains(node) ? "down" : null;
        if (decided == null) {
          LOG.info("membership: {} (epoch {})", why, after.getEpoch()); // a first store, as every node's at the start
        } else {
          LOG.warn("membership: {}: decided {} (epoch {})", why, decided, after.getEpoch());
        }
      } else if (holds(change, after)) {
        LOG.warn("membership: {}: decided {} (epoch {})", why, change.getChangeCase().name().substring(5)
            .toLowerCase(Locale.ROOT), after.getEpoch());
      } else {
        LOG.info("membership: {}: not decided, the view moved on to epoch {} first", why, after.getEpoch());
      }
    }
    note(after);
    return after;
  }

  /**
   * Whether {@code view} shows what {@code change} asks for: a change refused because the view
   * moved on is answered with that newer view too, and must not be logged as decided.
   */
  private static boolean holds(ViewChange change, ClusterView view) {
    return switch (change.getChangeCase()) {
      case MARK_DOWN -> view.getDownList().contains(change.getMarkDown());
      case MARK_OUT -> view.getOutList().contains(change.getMarkOut());
      case MARK_JOINING -> view.getJoiningList().contains(change.getMarkJoining());
      case MARK_UP -> !view.getDownList().contains(change.getMarkUp()) && !view.getOutList().contains(change.getMarkUp())
          && !view.getJoiningList().contains(change.getMarkUp());
      default -> true;
    };
  }

  /** Takes a newer view, once no write checked against the old one is still being applied. */
  private void note(ClusterView read) {
    if (read.getEpoch() <= view.getEpoch()) {
      return;
    }
    boolean taken = false;
    viewLock.writeLock().lock();
    try {
      if (read.getEpoch() > view.getEpoch()) {
        // before the view is published: whoever sees this view sees these too
        if (read.getOutList().contains(self) || read.getJoiningList().contains(self)) {
          lastLeftEpoch = read.getEpoch();
        }
        if (leaving != null && read.getEpoch() > leavingEpoch) {
          leaving = null; // the proposal to take it out is settled: out now, or it cannot apply any more
        }
        view = read;
        taken = true;
      }
    } finally {
      viewLock.writeLock().unlock();
    }
    if (taken) {
      for (Consumer<ClusterView> listener : viewListeners) {
        try {
          listener.accept(read);
        } catch (RuntimeException e) {
          LOG.warn("membership: a listener of view {} failed", read.getEpoch(), e);
        }
      }
    }
  }

  /**
   * Calls {@code listener} with each newer view this node takes, once taken, on the thread that
   * read it: it must not block. Two views read at once may reach it out of order.
   */
  public void onViewTaken(Consumer<ClusterView> listener) {
    viewListeners.add(listener);
  }

  /** This node's view. */
  ClusterView view() {
    return view;
  }

  /**
   * {@code e} as a refusal to serve when it says a table is not here and this node does not serve
   * (a node on a store just replaced, or out, may lack tables the others hold: readers and stages
   * go to another copy); else {@code e} itself.
   */
  public StoreException unlessServing(StoreException e) {
    String why = e.code() == ErrorCode.NO_SUCH_TABLE ? notServing(view) : null;
    return why == null ? e : new StoreException(ErrorCode.NOT_SERVING, why + " (" + e.getMessage() + ")");
  }

  /** Whether this node is catching up (joining) by its view. */
  public boolean catchingUp() {
    return view.getJoiningList().contains(self);
  }

  public int self() {
    return self;
  }

  boolean closed() {
    return closed;
  }

  // ---- what this node serves ---------------------------------------------------------------

  /**
   * Admits a read of a replicated table, or refuses it ({@code NOT_SERVING}) when this node may
   * miss writes: it is down, out or catching up, or no majority confirmed its view within the
   * lease (it may have been decided out without hearing of it). The returned action ends the
   * read ({@link #holdCopies}).
   */
  public Runnable admitRead() {
    ensureFresh(0);
    return holdCopies();
  }

  /**
   * Admits a read of this node's copies and holds them until the returned action runs (once):
   * until then they are not emptied, even if the node is decided out meanwhile. Refused
   * ({@code NOT_SERVING}) as {@link #admitRead}.
   */
  public Runnable holdCopies() {
    refuseUnlessServing();
    long stamp = copiesLock.readLock();
    try {
      refuseUnlessServing();
    } catch (RuntimeException e) {
      copiesLock.unlockRead(stamp);
      throw e;
    }
    AtomicBoolean released = new AtomicBoolean();
    return () -> {
      if (released.compareAndSet(false, true)) {
        copiesLock.unlockRead(stamp);
      }
    };
  }

  private void refuseUnlessServing() {
    String why = notServing(view);
    if (why != null) {
      throw new StoreException(ErrorCode.NOT_SERVING, why);
    }
  }

  /** Runs {@code emptying} once no read or stage holds this node's copies ({@link #holdCopies}). */
  void emptyCopies(Runnable emptying) {
    long stamp = copiesLock.writeLock();
    try {
      emptying.run();
    } finally {
      copiesLock.unlockWrite(stamp);
    }
  }

  /**
   * Admits a write to a replicated table sent on membership epoch {@code epoch}: refused when
   * this node does not serve ({@code NOT_SERVING}) or is at another epoch ({@code STALE_VIEW}:
   * the writer's copies are not the copies this node knows). The admission is held until the
   * write is applied ({@link Admission#close}).
   */
  public Admission admitWrite(long epoch, boolean multiValued, String table) {
    ensureFresh(epoch);
    Lock lock = viewLock.readLock();
    lock.lock();
    try {
      ClusterView v = view;
      boolean joining = v.getJoiningList().contains(self);
      String why = joining ? lease() : notServing(v);
      if (why == null && joining && multiValued) {
        why = "node " + self + " is catching up; multi-valued table '" + table + "' takes writes again once it has";
      }
      if (why != null) {
        throw new StoreException(ErrorCode.NOT_SERVING, why);
      }
      if (epoch != v.getEpoch()) {
        throw new StoreException(ErrorCode.STALE_VIEW, "node " + self
            + " is at membership epoch " + v.getEpoch() + ", the write was sent at epoch " + epoch
            + ": the copies to write have changed");
      }
      return new Admission(lock, joining ? catchUp : null);
    } catch (RuntimeException e) {
      lock.unlock();
      throw e;
    }
  }

  /**
   * Waits until this node's view is at least {@code epoch} (a node catching up copies from this
   * one only then), or refuses.
   */
  public void awaitEpoch(long epoch) {
    ensureFresh(epoch);
    if (view.getEpoch() < epoch) {
      throw new StoreException(ErrorCode.NOT_SERVING, "node " + self
          + " cannot read membership epoch " + epoch + " (it is at " + view.getEpoch() + ")");
    }
  }

  /** Reads the view first when it is older than {@code epoch} or than the lease. */
  private void ensureFresh(long epoch) {
    long confirmed = confirmedAtNanos;
    if (epoch > view.getEpoch() || confirmed == 0
        || TimeUnit.NANOSECONDS.toMillis(System.nanoTime() - confirmed) > LEASE_MILLIS / 2) {
      refreshNow(confirmed);
    }
  }

  private String lease() {
    long confirmed = confirmedAtNanos;
    long ago = TimeUnit.NANOSECONDS.toMillis(System.nanoTime() - confirmed);
    if (confirmed == 0 || ago > LEASE_MILLIS) {
      return "node " + self + " cannot confirm the cluster's membership with a majority of its voters "
          + voters + (confirmed == 0 ? "" : " (last confirmed " + ago + " ms ago)");
    }
    return null;
  }

  private String notServing(ClusterView v) {
    String lease = lease();
    if (lease != null) {
      return lease;
    }
    String recorded = v.getStoresMap().get(self);
    if (!storeId.equals(recorded)) {
      return recorded == null ? "node " + self + " waits for the members to record its store"
          : "node " + self + " runs on another store than the members recorded for it (its data directory was lost"
          + " or replaced): it serves nothing until it has caught up from the other copies";
    }
    String lost = mayHaveLostWrites;
    if (lost != null) {
      return lost;
    }
    String asked = leaving;
    if (asked != null) {
      return asked;
    }
    if (v.getOutList().contains(self)) {
      return "node " + self + " is out of the in-sync copies (it missed writes while away) and catches up";
    }
    if (v.getJoiningList().contains(self)) {
      return "node " + self + " is catching up";
    }
    if (v.getDownList().contains(self)) {
      return "node " + self + " was decided down; it serves again once decided up";
    }
    return null;
  }

  /** A write admitted on this node's view, held until it is applied. */
  public static final class Admission implements AutoCloseable {
    private final Lock lock;
    private final CatchUp joining;
    private boolean closed;

    Admission(Lock lock, CatchUp joining) {
      this.lock = lock;
      this.joining = joining;
    }

    /** Whether this node is catching up: its writes then go through {@link #apply}. */
    public boolean catchingUp() {
      return joining != null;
    }

    /**
     * Applies a write of {@code storedKeys}: while this node catches up, the keys are recorded
     * first, so that the copy never puts an older value over them.
     */
    public void apply(String table, Supplier<List<byte[]>> storedKeys, Runnable write) {
      if (joining == null) {
        write.run();
      } else {
        joining.applyLive(table, storedKeys.get(), write);
      }
    }

    @Override
    public void close() {
      if (!closed) { // once: a drop ends its admission early (see KvsService)
        closed = true;
        lock.unlock();
      }
    }
  }

  /** This node's view, with who leads and how fresh it is. */
  public ViewAnswer answer() {
    ClusterView v = view;
    ViewAnswer.Builder a = ViewAnswer.newBuilder().setReplicated(true).setView(v).addAllVoters(voters)
        .setLeader(leader()).setStore(storeId).setServing(notServing(v) == null)
        .setDiskStalledMillis(disk.stalledMillis());
    long confirmed = confirmedAtNanos;
    a.setConfirmedMillisAgo(confirmed == 0 ? Long.MAX_VALUE
        : TimeUnit.NANOSECONDS.toMillis(System.nanoTime() - confirmed));
    return a.build();
  }

  private int leader() {
    try {
      RaftPeerId id = server != null ? server.getDivision(group.getGroupId()).getInfo().getLeaderId()
          : client.getLeaderId();
      return id == null ? -1 : Integer.parseInt(id.toString().substring("node".length()));
    } catch (IOException | RuntimeException e) {
      return -1;
    }
  }

  @Override
  public void close() {
    closed = true;
    timer.shutdownNow();
    catchUp.close();
    probe.close();
    disk.close();
    viewReads.shutdownNow();
    for (RaftClient c : new RaftClient[] {client, pinnedReads}) {
      try {
        if (c != null) {
          c.close();
        }
      } catch (IOException e) {
        LOG.debug("node {}: closing a membership client: {}", self, e.toString());
      }
    }
    if (server != null) {
      try {
        server.close();
      } catch (IOException e) {
        LOG.warn("node {}: closing its Raft server: {}", self, e.toString());
      }
    }
  }
}
