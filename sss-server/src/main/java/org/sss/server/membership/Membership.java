package org.sss.server.membership;

import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.UUID;
import java.util.concurrent.Executors;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.TimeUnit;
import org.apache.ratis.RaftConfigKeys;
import org.apache.ratis.client.RaftClient;
import org.apache.ratis.client.RaftClientConfigKeys;
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
import org.sss.core.proto.ClusterView;
import org.sss.core.proto.ViewAnswer;
import org.sss.core.proto.ViewChange;

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
  /** How often a node reads the view and the leader probes the nodes. */
  static final long REFRESH_MILLIS = 500;
  /**
   * A node silent this long is proposed down: long enough that a node busy with a large job on
   * a loaded machine (a collection, a slow first connection) is not taken for dead.
   */
  static final long DOWN_AFTER_MILLIS = 5_000;

  private final ClusterSpec spec;
  private final int self;
  private final List<Integer> voters;
  private final RaftGroup group;
  private final RaftServer server; // null on a node that does not vote
  private final RaftClient client;
  private final SignedChanges signatures;
  private final ViewStateMachine machine;
  private final LivenessProbe probe;
  private final ScheduledExecutorService timer;
  private volatile ClusterView view = ClusterView.getDefaultInstance();
  private volatile long confirmedAtNanos = 0;
  /** Whether this node led at its last round (only the membership thread touches it). */
  private boolean leading;

  private Membership(ClusterSpec spec, int self, String listenHost, Path storage) throws IOException {
    this.spec = spec;
    this.self = self;
    this.voters = voters(spec.nodeCount());
    this.signatures = new SignedChanges(spec.secret());
    List<RaftPeer> peers = new ArrayList<>();
    for (int v : voters) {
      peers.add(RaftPeer.newBuilder().setId(peerId(v)).setAddress(spec.raftAddress(v).hostPort()).build());
    }
    this.group = RaftGroup.valueOf(groupId(spec), peers);
    this.machine = new ViewStateMachine(signatures);
    RaftServer s = null;
    if (voters.contains(self)) {
      RaftProperties p = properties();
      GrpcConfigKeys.Server.setHost(p, listenHost);
      GrpcConfigKeys.Server.setPort(p, spec.raftAddress(self).port());
      RaftServerConfigKeys.setStorageDir(p, List.of(storage.toFile()));
      // elections: long enough that a busy two-core machine does not call spurious ones
      RaftServerConfigKeys.Rpc.setTimeoutMin(p, TimeDuration.valueOf(1000, TimeUnit.MILLISECONDS));
      RaftServerConfigKeys.Rpc.setTimeoutMax(p, TimeDuration.valueOf(2000, TimeUnit.MILLISECONDS));
      RaftServerConfigKeys.Read.setOption(p, RaftServerConfigKeys.Read.Option.LINEARIZABLE);
      RaftServerConfigKeys.Snapshot.setAutoTriggerEnabled(p, true);
      RaftServerConfigKeys.Snapshot.setAutoTriggerThreshold(p, 1000);
      s = RaftServer.newBuilder().setServerId(RaftPeerId.valueOf(peerId(self))).setGroup(group).setProperties(p)
          .setStateMachine(machine).setOption(RaftStorage.StartupOption.RECOVER).build();
      s.start();
    }
    this.server = s;
    RaftProperties cp = properties();
    RaftClientConfigKeys.Rpc.setRequestTimeout(cp, TimeDuration.valueOf(3, TimeUnit.SECONDS));
    this.client = RaftClient.newBuilder().setProperties(cp).setRaftGroup(group)
        .setRetryPolicy(RetryPolicies.retryUpToMaximumCountWithFixedSleep(3,
            TimeDuration.valueOf(200, TimeUnit.MILLISECONDS)))
        .build();
    this.probe = new LivenessProbe(spec, self);
    this.timer = Executors.newSingleThreadScheduledExecutor(r -> {
      Thread t = new Thread(r, "sss-node" + self + "-membership");
      t.setDaemon(true);
      return t;
    });
    timer.scheduleWithFixedDelay(this::tick, 0, REFRESH_MILLIS, TimeUnit.MILLISECONDS);
  }

  /**
   * Starts this node's part in a replicated cluster's membership, its Raft log under
   * {@code storage}; null for a cluster of one copy.
   */
  public static Membership start(ClusterSpec spec, int self, String listenHost, Path storage) {
    if (spec.replication() < 2) {
      return null;
    }
    // Ratis ends the JVM (System.exit) when its server cannot start; in an embedded cluster that
    // JVM is the user's. Made to throw instead, once per JVM.
    org.apache.ratis.util.ExitUtils.disableSystemExit();
    if (voters(spec.nodeCount()).contains(self)) {
      checkFree(listenHost, spec.raftAddress(self).port(), self);
    }
    try {
      return new Membership(spec, self, listenHost, storage);
    } catch (IOException | RuntimeException e) {
      throw new IllegalStateException("node " + self + ": cannot start its membership (Raft) on "
          + listenHost + ":" + spec.raftAddress(self).port() + " (node." + self + ".raft.port): " + e.getMessage(), e);
    }
  }

  /** Names a membership port that another process holds, before Raft tries it. */
  private static void checkFree(String host, int port, int self) {
    try (java.net.ServerSocket probe = new java.net.ServerSocket()) {
      probe.setReuseAddress(true);
      probe.bind(new java.net.InetSocketAddress(host, port));
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
      boolean leads = server != null && server.getDivision(group.getGroupId()).getInfo().isLeaderReady();
      if (leads && !leading) {
        probe.forget(); // a new leader gives every node the full time, from now
      }
      leading = leads;
      if (leads) {
        probe.probeAll();
        decide();
      }
    } catch (Exception e) {
      LOG.debug("node {}: membership round failed: {}", self, e.toString());
    }
  }

  /** A linearizable read of the view: when it succeeds, a majority of the voters confirmed it. */
  private void refresh() throws IOException {
    long asked = System.nanoTime();
    RaftClientReply reply = client.io().sendReadOnly(Message.valueOf(ByteString.EMPTY));
    if (reply.isSuccess()) {
      ClusterView read = ClusterView.parseFrom(reply.getMessage().getContent().toByteArray());
      if (read.getEpoch() >= view.getEpoch()) {
        note(read);
      }
      confirmedAtNanos = asked; // from when it was asked: the confirmation is at least that fresh
    }
  }

  private void decide() throws IOException {
    ClusterView v = view;
    for (int node = 0; node < spec.nodeCount(); node++) {
      boolean down = v.getDownList().contains(node);
      if (!down && node != self && probe.silentMillis(node) >= DOWN_AFTER_MILLIS) {
        propose(ViewChange.newBuilder().setExpectEpoch(v.getEpoch()).setMarkDown(node).build(),
            "node " + node + " has not answered for " + probe.silentMillis(node) + " ms");
        return; // one decision per round, each on the view it read
      }
      if (down && (node == self || probe.answered(node))) {
        propose(ViewChange.newBuilder().setExpectEpoch(v.getEpoch()).setMarkUp(node).build(),
            "node " + node + " answers again");
        return;
      }
    }
  }

  private void propose(ViewChange change, String why) throws IOException {
    RaftClientReply reply = client.io().send(Message.valueOf(ByteString.copyFrom(signatures.sign(change))));
    if (reply.isSuccess()) {
      ClusterView after = ClusterView.parseFrom(reply.getMessage().getContent().toByteArray());
      if (after.getEpoch() > change.getExpectEpoch()) {
        LOG.warn("membership: {}: decided {} (epoch {})", why,
            change.hasMarkDown() ? "down" : "up", after.getEpoch());
      }
      note(after);
    }
  }

  private synchronized void note(ClusterView read) {
    if (read.getEpoch() >= view.getEpoch()) {
      view = read;
    }
  }

  /** This node's view, with who leads and how fresh it is. */
  public ViewAnswer answer() {
    ViewAnswer.Builder a = ViewAnswer.newBuilder().setReplicated(true).setView(view).addAllVoters(voters)
        .setLeader(leader());
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
    timer.shutdownNow();
    probe.close();
    try {
      client.close();
    } catch (IOException e) {
      LOG.debug("node {}: closing the membership client: {}", self, e.toString());
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
