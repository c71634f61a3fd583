package org.sss.server.membership;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.io.IOException;
import java.net.ServerSocket;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.TimeUnit;
import java.util.function.Predicate;
import org.apache.ratis.RaftConfigKeys;
import org.apache.ratis.client.RaftClient;
import org.apache.ratis.conf.RaftProperties;
import org.apache.ratis.protocol.Message;
import org.apache.ratis.protocol.RaftGroup;
import org.apache.ratis.protocol.RaftPeer;
import org.apache.ratis.retry.RetryPolicies;
import org.apache.ratis.rpc.SupportedRpcType;
import org.apache.ratis.thirdparty.com.google.protobuf.ByteString;
import org.apache.ratis.util.TimeDuration;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;
import org.sss.core.cluster.ClusterSpec;
import org.sss.core.cluster.PartitionMap;
import org.sss.core.cluster.ReplicaPlacement;
import org.sss.core.proto.ViewAnswer;
import org.sss.core.proto.ViewChange;
import org.sss.server.EmbeddedServers;
import org.sss.server.NodeConfig;
import org.sss.server.NodeListener;
import org.sss.server.SssServer;

/**
 * Three servers of a two-copy cluster in this JVM, each with its Raft member (real sockets,
 * real Raft): they agree on one view; a node closed is decided down by the others and a
 * new leader among them; entries not signed with the cluster's secret change nothing.
 */
@Tag("serial") // timing it checks (decisions after 5 s of silence, reruns, synced writes): alone on the cores
class MembershipTest {
  @TempDir
  Path dir;

  /**
   * A Raft log an earlier version kept directly at {@code membership/<group>} moves under the
   * group's own root, where Ratis finds it (and finds no other group's log beside it); a move cut
   * between its two renames ends at the next start.
   */
  @Test
  void storageRoot_movesALogKeptByAnEarlierVersion(@TempDir Path storage) throws Exception {
    org.apache.ratis.protocol.RaftGroupId group = org.apache.ratis.protocol.RaftGroupId.randomId();
    String id = group.getUuid().toString();
    java.nio.file.Files.createDirectories(storage.resolve(id).resolve("current"));
    java.nio.file.Files.writeString(storage.resolve(id).resolve("current").resolve("log_0-9"), "entries");
    Path root = Membership.storageRoot(storage, group);
    assertEquals(storage.resolve(id), root);
    assertEquals("entries", java.nio.file.Files.readString(root.resolve(id).resolve("current").resolve("log_0-9")));
    assertEquals(root, Membership.storageRoot(storage, group), "a second start finds it where it is");
    assertTrue(java.nio.file.Files.exists(root.resolve(id).resolve("current").resolve("log_0-9")));

    org.apache.ratis.protocol.RaftGroupId other = org.apache.ratis.protocol.RaftGroupId.randomId();
    String otherId = other.getUuid().toString();
    java.nio.file.Files.createDirectories(storage.resolve(otherId + ".moving").resolve("current"));
    Path otherRoot = Membership.storageRoot(storage, other); // the first rename was done, the second not
    assertTrue(java.nio.file.Files.isDirectory(otherRoot.resolve(otherId).resolve("current")));
    assertTrue(java.nio.file.Files.notExists(storage.resolve(otherId + ".moving")));
  }

  @Test
  void nodesAgree_aNodeGoneIsDecidedDown_andStrangersDecideNothing() throws Exception {
    List<SssServer> servers = startThree();
    boolean[] closed = new boolean[3];
    try {
      List<ViewAnswer> agreed = await(servers, closed, AGREED, Duration.ofSeconds(40));
      long epoch = agreed.get(0).getView().getEpoch();
      int leader = agreed.get(0).getLeader();
      assertEquals(List.of(0, 1, 2), agreed.get(0).getVotersList());

      // entries a stranger writes to the members' log: unsigned, or signed with another secret
      try (RaftClient stranger = strangerClient(servers.get(0).config().cluster())) {
        ViewChange down = ViewChange.newBuilder().setExpectEpoch(epoch).setMarkDown(leader == 2 ? 1 : 2).build();
        assertTrue(stranger.io().send(Message.valueOf(ByteString.copyFrom(down.toByteArray()))).isSuccess());
        assertTrue(stranger.io().send(Message.valueOf(ByteString.copyFrom(new SignedChanges("guess").sign(down))))
            .isSuccess());
      }
      Thread.sleep(2 * Membership.REFRESH_MILLIS);
      for (int i = 0; i < 3; i++) {
        assertEquals(0, servers.get(i).membershipView().getView().getDownCount(), "node " + i + ": a stranger decided");
      }

      servers.get(leader).close();
      closed[leader] = true;
      // down after 5 s of silence, then out 3 s later (its partitions keep their other copies)
      List<ViewAnswer> after = await(servers, closed, v -> v.getView().getOutList().equals(List.of(leader))
          && v.getView().getDownCount() == 0 && v.getLeader() >= 0 && v.getLeader() != leader, Duration.ofSeconds(40));
      assertTrue(after.get(0).getView().getEpoch() >= epoch + 2, "down, then out: " + after.get(0).getView());
    } finally {
      closeOpen(servers, closed);
    }
  }

  /**
   * The leader's disk stops answering (its probe's file replaced by a FIFO nobody reads, so the
   * probe's open blocks as a write to a frozen disk does): it hands its leadership over, the new
   * leader decides it down, and once its disk answers again it is taken back. A leader is never
   * decided down by itself, so without the hand-over it would lead on and never be.
   */
  @Test
  void leaderWhoseDiskHangs_handsOverLeadership_isDecidedDown_andComesBack() throws Exception {
    System.setProperty(LivenessProbe.DISK_STALLED_PROPERTY, "2000");
    List<SssServer> servers = startThree();
    boolean[] closed = new boolean[3];
    try {
      List<ViewAnswer> agreed = await(servers, closed, AGREED, Duration.ofSeconds(40));
      int leader = agreed.get(0).getLeader();
      Path probeFile = dir.resolve("node-" + leader).resolve("membership").resolve("disk-probe");
      assertTrue(java.nio.file.Files.isRegularFile(probeFile), probeFile + " written by the probe");
      // the probe makes the file again each second: replaced until the FIFO is what stays
      int made;
      do {
        java.nio.file.Files.deleteIfExists(probeFile);
        made = new ProcessBuilder("mkfifo", probeFile.toString()).start().waitFor();
      } while (made != 0);

      List<ViewAnswer> handedOver = await(servers, closed, v -> v.getLeader() >= 0 && v.getLeader() != leader
          && (v.getView().getDownList().contains(leader) || v.getView().getOutList().contains(leader)),
          Duration.ofSeconds(30));
      assertTrue(handedOver.get(leader).getDiskStalledMillis() >= 2000, handedOver.get(leader).toString());

      try (java.io.InputStream thaw = java.nio.file.Files.newInputStream(probeFile)) { // lets the blocked open go on
        java.nio.file.Files.delete(probeFile); // the next write makes a plain file again
        thaw.readAllBytes();
      }
      List<ViewAnswer> back = await(servers, closed, v -> v.getLeader() >= 0 && v.getView().getDownCount() == 0
          && v.getView().getOutCount() == 0 && v.getView().getJoiningCount() == 0 && v.getServing()
          && v.getDiskStalledMillis() == 0, Duration.ofSeconds(40));
      assertTrue(back.get(0).getView().getEpoch() > handedOver.get(0).getView().getEpoch(), back.get(0).toString());
    } finally {
      System.clearProperty(LivenessProbe.DISK_STALLED_PROPERTY);
      closeOpen(servers, closed);
    }
  }

  /**
   * An operator's {@code copyAgain} whose answer is lost after the members took the node out:
   * the node cannot know the outcome, so it serves nothing from then on (a read served on its old
   * view could miss writes acknowledged without it); a later round settles it (out), and it
   * catches up and serves again, taken out once.
   */
  @Test
  void copyAgainWhoseAnswerIsLost_servesNothingUntilSettled_thenCatchesUp() throws Exception {
    List<SssServer> servers = startThree();
    boolean[] closed = new boolean[3];
    try {
      List<ViewAnswer> agreed = await(servers, closed, WHOLE, Duration.ofSeconds(40));
      long epoch = agreed.get(0).getView().getEpoch();
      int node = agreed.get(0).getLeader() == 2 ? 1 : 2;
      Membership member = servers.get(node).membership();
      member.loseNextAnswer = true;
      IOException lost = assertThrows(IOException.class, () -> member.copyAgain("a test"));
      assertTrue(lost.getMessage().contains("answer was lost"), lost.getMessage());
      ViewAnswer now = servers.get(node).membershipView();
      assertFalse(now.getServing(), "the node serves while the outcome is unknown: " + now);

      List<ViewAnswer> back = await(servers, closed, WHOLE, Duration.ofSeconds(40));
      long after = back.get(0).getView().getEpoch();
      assertTrue(after >= epoch + 2, "taken out and back in: epoch " + epoch + " -> " + after);
    } finally {
      closeOpen(servers, closed);
    }
  }

  /**
   * Another decision taken between {@code copyAgain}'s reading of the view and its proposal (a
   * node decided down): the proposal, made against the old epoch, is refused, the operator is
   * told to ask again, and the node serves again, not left out of service for good.
   */
  @Test
  void copyAgainOvertakenByAnotherDecision_isRefused_andTheNodeServesOn() throws Exception {
    List<SssServer> servers = startThree();
    boolean[] closed = new boolean[3];
    try {
      List<ViewAnswer> agreed = await(servers, closed, WHOLE, Duration.ofSeconds(40));
      long epoch = agreed.get(0).getView().getEpoch();
      int leader = agreed.get(0).getLeader();
      int node = leader == 2 ? 1 : 2;
      int other = 3 - leader - node;
      Membership member = servers.get(node).membership();
      member.beforeLeaving = () -> {
        try {
          servers.get(leader).membership().propose(ViewChange.newBuilder().setExpectEpoch(epoch).setMarkDown(other)
              .build(), "a test: node " + other + " decided down meanwhile");
        } catch (IOException e) {
          throw new java.io.UncheckedIOException(e);
        }
      };
      org.sss.kvs.StoreException refused = assertThrows(org.sss.kvs.StoreException.class,
          () -> member.copyAgain("a test"));
      assertTrue(refused.getMessage().contains("ask again"), refused.getMessage());

      List<ViewAnswer> after = await(servers, closed, WHOLE, Duration.ofSeconds(40));
      assertTrue(after.get(0).getView().getEpoch() > epoch, "node " + other + " down, then up again: " + after);
    } finally {
      closeOpen(servers, closed);
    }
  }

  /** Every node has a leader, none is down, and its view was confirmed lately. */
  private static final Predicate<ViewAnswer> AGREED = v -> v.getLeader() >= 0 && v.getView().getDownCount() == 0
      && v.getConfirmedMillisAgo() < 2_000;

  /** Agreed, and every node serves, in sync: none out or catching up. */
  private static final Predicate<ViewAnswer> WHOLE = v -> AGREED.test(v) && v.getServing()
      && v.getView().getOutCount() == 0 && v.getView().getJoiningCount() == 0;

  /** Three servers of a two-copy cluster in this JVM, under {@link #dir}. */
  private List<SssServer> startThree() throws Exception {
    List<NodeListener> sockets = EmbeddedServers.bindAll(3, "127.0.0.1");
    ClusterSpec spec = threeNodeSpec(sockets);
    return EmbeddedServers.startAll(sockets, i -> NodeConfig.of(spec, i, dir.resolve("node-" + i)));
  }

  /**
   * The epoch fences writes: one sent at an epoch the node has moved past is refused, and so is
   * every write to a node cut off from the majority once its view's confirmation (the lease) is
   * older than 2 s, whatever epoch it names: the others may have decided it out meanwhile, and
   * a write it took could be acknowledged by no copy that counts (no split brain).
   */
  @Test
  void writesAtAnOldEpoch_orToANodeCutOffFromTheMajority_areRefused() throws Exception {
    List<SssServer> servers = startThree();
    boolean[] closed = new boolean[3];
    try {
      long epoch = await(servers, closed, WHOLE, Duration.ofSeconds(40)).get(0).getView().getEpoch();
      Membership survivor = servers.get(0).membership();
      survivor.admitWrite(epoch, false, "t").close(); // admitted: the node's own epoch, its view confirmed
      assertTrue(epoch > 0, "the members recorded every node's store: " + epoch);
      org.sss.kvs.StoreException stale = assertThrows(org.sss.kvs.StoreException.class,
          () -> survivor.admitWrite(epoch - 1, false, "t"));
      assertEquals(org.sss.core.proto.ErrorCode.STALE_VIEW, stale.code(), stale.getMessage());
      // nodes 1 and 2 gone at once: node 0 alone cannot confirm its view with a majority of the voters
      List<Thread> closing = new ArrayList<>();
      for (int i = 1; i <= 2; i++) {
        SssServer s = servers.get(i);
        closed[i] = true;
        Thread t = new Thread(s::close, "close-node-" + i);
        t.start();
        closing.add(t);
      }
      for (Thread t : closing) {
        t.join();
      }
      long cut = System.nanoTime();
      org.sss.kvs.StoreException refused = null;
      while (refused == null) {
        try {
          // at the node's own epoch: what is refused is the write, not its epoch
          survivor.admitWrite(servers.get(0).membershipView().getView().getEpoch(), false, "t").close();
          assertTrue(System.nanoTime() - cut < TimeUnit.MILLISECONDS.toNanos(Membership.LEASE_MILLIS + 3_000),
              "node 0 still took writes " + (System.nanoTime() - cut) / 1_000_000 + " ms after losing the majority");
          Thread.sleep(50);
        } catch (org.sss.kvs.StoreException e) {
          refused = e;
        }
      }
      assertEquals(org.sss.core.proto.ErrorCode.NOT_SERVING, refused.code(), refused.getMessage());
      assertTrue(refused.getMessage().contains("cannot confirm the cluster's membership with a majority"),
          refused.getMessage());
      Thread.sleep(1_000);
      org.sss.kvs.StoreException still = assertThrows(org.sss.kvs.StoreException.class,
          () -> survivor.admitWrite(servers.get(0).membershipView().getView().getEpoch(), false, "t"),
          "a node without the majority takes no write later either");
      assertEquals(org.sss.core.proto.ErrorCode.NOT_SERVING, still.code());
    } finally {
      closeOpen(servers, closed);
    }
  }

  private static void closeOpen(List<SssServer> servers, boolean[] closed) {
    for (int i = 0; i < servers.size(); i++) {
      if (!closed[i]) {
        servers.get(i).close();
      }
    }
  }

  private static ClusterSpec threeNodeSpec(List<NodeListener> sockets) throws java.io.IOException {
    return threeNodeSpec(sockets, "membership-secret", false, null);
  }

  /** Three nodes on {@code sockets}, two copies, each on a host of its own, Raft on free ports. */
  static ClusterSpec threeNodeSpec(List<NodeListener> sockets, String secret, boolean tls, String trust)
      throws java.io.IOException {
    List<Integer> raftPorts = new ArrayList<>();
    for (int i = 0; i < 3; i++) {
      try (ServerSocket s = new ServerSocket(0)) {
        raftPorts.add(s.getLocalPort());
      }
    }
    List<ReplicaPlacement.Location> hosts = List.of(new ReplicaPlacement.Location("a", "r"),
        new ReplicaPlacement.Location("b", "r"), new ReplicaPlacement.Location("c", "r"));
    return new ClusterSpec(EmbeddedServers.addresses(sockets, "127.0.0.1"), PartitionMap.roundRobin(12, 3),
        secret, tls, trust, 2, hosts, raftPorts);
  }

  /** Waits until every open server's view meets {@code wanted} and all have one epoch; returns them. */
  private static List<ViewAnswer> await(List<SssServer> servers, boolean[] closed, Predicate<ViewAnswer> wanted,
                                        Duration within) throws InterruptedException {
    long end = System.nanoTime() + within.toNanos();
    List<ViewAnswer> views = new ArrayList<>();
    while (System.nanoTime() < end) {
      views.clear();
      for (int i = 0; i < servers.size(); i++) {
        if (!closed[i]) {
          views.add(servers.get(i).membershipView());
        }
      }
      boolean oneEpoch = views.stream().map(v -> v.getView().getEpoch()).distinct().count() == 1;
      if (oneEpoch && views.stream().allMatch(wanted)) {
        return List.copyOf(views);
      }
      Thread.sleep(100);
    }
    throw new AssertionError("the views did not settle within " + within + ": " + views);
  }

  private static RaftClient strangerClient(ClusterSpec spec) {
    List<RaftPeer> peers = new ArrayList<>();
    for (int v : Membership.voters(spec.nodeCount())) {
      peers.add(RaftPeer.newBuilder().setId("node" + v).setAddress(spec.raftAddress(v).hostPort()).build());
    }
    RaftProperties p = new RaftProperties();
    RaftConfigKeys.Rpc.setType(p, SupportedRpcType.GRPC);
    return RaftClient.newBuilder().setProperties(p).setRaftGroup(RaftGroup.valueOf(Membership.groupId(spec), peers))
        .setRetryPolicy(RetryPolicies.retryUpToMaximumCountWithFixedSleep(5, TimeDuration.valueOf(200,
            TimeUnit.MILLISECONDS))).build();
  }
}
