package org.sss.server.membership;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNull;

import java.util.List;
import org.junit.jupiter.api.Test;
import org.sss.core.proto.ClusterView;
import org.sss.core.proto.ViewChange;

/** The decisions the members' log applies, and the signatures that keep strangers out of it. */
class ViewStateMachineTest {
  private static ViewChange down(long epoch, int node) {
    return ViewChange.newBuilder().setExpectEpoch(epoch).setMarkDown(node).build();
  }

  private static ViewChange up(long epoch, int node) {
    return ViewChange.newBuilder().setExpectEpoch(epoch).setMarkUp(node).build();
  }

  /** Three nodes, two copies of each of 12 partitions: every pair of nodes shares partitions. */
  private static final org.sss.core.cluster.InSyncCopies THREE = new org.sss.core.cluster.InSyncCopies(spec(3).placement());

  private static org.sss.core.cluster.ClusterSpec spec(int nodes) {
    java.util.Properties p = new java.util.Properties();
    p.setProperty("partitions", "12");
    p.setProperty("replication", "2");
    for (int i = 0; i < nodes; i++) {
      p.setProperty("node." + i, "127.0.0.1:" + (7000 + 10 * i));
      p.setProperty("node." + i + ".host", "host-" + i);
    }
    return org.sss.core.cluster.ClusterSpec.fromProperties(p);
  }

  private static ClusterView apply(ClusterView v, ViewChange c) {
    return ViewStateMachine.apply(v, c, THREE);
  }

  private static ViewChange out(long epoch, int node) {
    return ViewChange.newBuilder().setExpectEpoch(epoch).setMarkOut(node).build();
  }

  private static ViewChange joining(long epoch, int node) {
    return ViewChange.newBuilder().setExpectEpoch(epoch).setMarkJoining(node).build();
  }

  private static ViewChange store(long epoch, int node, String id) {
    return ViewChange.newBuilder().setExpectEpoch(epoch)
        .setStoreSeen(org.sss.core.proto.StoreSeen.newBuilder().setNode(node).setStore(id)).build();
  }

  @Test
  void aNodeBackOnAnotherStore_leavesTheInSyncCopies_unlessItHoldsTheLastOne() {
    ClusterView v = ClusterView.getDefaultInstance();
    for (int n = 0; n < 3; n++) {
      v = apply(v, store(v.getEpoch(), n, "s" + n));
    }
    assertEquals(ClusterView.newBuilder().setEpoch(3).putStores(0, "s0").putStores(1, "s1").putStores(2, "s2").build(), v,
        "first stores recorded; nothing else changes");
    assertEquals(v, apply(v, store(3, 1, "s1")), "the same store: nothing to decide");
    assertEquals(v, apply(v, store(3, 1, "")), "no store named: nothing");
    ClusterView replaced = apply(v, store(3, 1, "new"));
    assertEquals(ClusterView.newBuilder().setEpoch(4).addOut(1).putStores(0, "s0").putStores(1, "new")
        .putStores(2, "s2").build(), replaced, "up on another store: out, its new store recorded");
    ClusterView twoDown = apply(apply(v, down(3, 1)), store(4, 1, "new"));
    assertEquals(List.of(1), twoDown.getOutList(), "down and back on another store: out, not up");
    assertEquals(List.of(), twoDown.getDownList());
    // node 2 then comes back on another store while node 1 is out: it holds the last copies in sync it shares
    ClusterView stuck = apply(replaced, store(4, 2, "other"));
    assertEquals(List.of(2), stuck.getDownList(), "the last copy in sync is never decided out: down, not serving");
    assertEquals(List.of(1), stuck.getOutList());
    assertEquals("s2", stuck.getStoresMap().get(2), "its new store is not recorded: it does not serve from it");
    assertEquals(stuck, apply(stuck, store(5, 2, "other")), "asked again: nothing more");
    assertEquals(stuck, apply(stuck, out(5, 0)), "node 0 cannot leave on node 2's account");
    // a node catching up that comes back on another store: recorded, it stays out and starts over
    ClusterView joined = apply(replaced, joining(4, 1));
    ClusterView again = apply(joined, store(5, 1, "newer"));
    assertEquals("newer", again.getStoresMap().get(1));
    assertEquals(List.of(1), again.getJoiningList());
    assertEquals(6, again.getEpoch());
    // every other decision keeps the stores
    assertEquals(replaced.getStoresMap(), apply(replaced, down(4, 0)).getStoresMap());
  }

  @Test
  void aNodesLife_downOutJoiningUp_andTheLastInSyncCopyNeverLeaves() {
    ClusterView v = apply(ClusterView.getDefaultInstance(), down(0, 1));
    assertEquals(v, apply(v, joining(1, 1)), "only a node out starts joining");
    assertEquals(v, apply(v, out(1, 2)), "node 2, up, cannot leave: node 1, down, holds the other copies it shares");
    v = apply(v, out(1, 1));
    assertEquals(ClusterView.newBuilder().setEpoch(2).addOut(1).build(), v);
    assertEquals(v, apply(v, up(2, 1)), "a node out comes back only by catching up");
    assertEquals(v, apply(v, down(2, 1)), "a node out is not down");
    ClusterView twoDown = apply(v, down(2, 2));
    assertEquals(List.of(2), twoDown.getDownList());
    assertEquals(twoDown, apply(twoDown, out(3, 2)),
        "node 2 holds the only in-sync copy of the partitions it shares with node 1: it stays in sync");
    org.junit.jupiter.api.Assertions.assertFalse(THREE.onlyCopies(twoDown, 0).isEmpty(),
        "node 0 shares partitions with nodes 1 and 2, neither serving");
    assertEquals(THREE.placement().partitionsHeldBy(0).size(), THREE.onlyCopies(twoDown, 0).size());
    v = apply(v, joining(2, 1));
    assertEquals(ClusterView.newBuilder().setEpoch(3).addJoining(1).build(), v);
    assertEquals(v, apply(v, down(3, 1)), "a node joining that stops goes out, not down");
    ClusterView again = apply(v, out(3, 1));
    assertEquals(ClusterView.newBuilder().setEpoch(4).addOut(1).build(), again, "joining, then stopped: out again");
    v = apply(v, up(3, 1));
    assertEquals(ClusterView.newBuilder().setEpoch(4).build(), v, "caught up: in sync and up");
  }

  @Test
  void aNodeUpThatCrashed_leavesTheInSyncCopiesWhenTheOthersServeItsPartitions() {
    ClusterView v = apply(ClusterView.getDefaultInstance(), out(0, 1));
    assertEquals(ClusterView.newBuilder().setEpoch(1).addOut(1).build(), v, "up, and nodes 0 and 2 serve its partitions");
    assertEquals(v, apply(v, out(1, 2)), "node 2 now holds the only copies in sync of partitions it shares with node 1");
    assertEquals(v, apply(v, out(1, 1)), "out already: nothing to decide");
  }

  @Test
  void changes_applyOnlyOnTheEpochTheyWereProposedOn_andOnlyWhenTheyChangeSomething() {
    ClusterView v0 = ClusterView.getDefaultInstance();
    ClusterView v1 = apply(v0, down(0, 2));
    assertEquals(ClusterView.newBuilder().setEpoch(1).addDown(2).build(), v1);
    assertEquals(v1, apply(v1, down(0, 1)), "proposed on an old view: dropped");
    assertEquals(v1, apply(v1, down(1, 2)), "down already: nothing to decide");
    assertEquals(v1, apply(v1, up(1, 0)), "up already: nothing to decide");
    ClusterView v2 = apply(v1, down(1, 0));
    assertEquals(List.of(0, 2), v2.getDownList(), "kept in order");
    ClusterView v3 = apply(v2, up(2, 2));
    assertEquals(ClusterView.newBuilder().setEpoch(3).addDown(0).build(), v3);
    assertEquals(v3, apply(v3, null), "an entry that is not a signed change: nothing");
    assertEquals(v3, apply(v3, ViewChange.newBuilder().setExpectEpoch(3).build()), "no change named");
  }

  @Test
  void signatures_openOnlyWithTheSameSecret_andUntouched() {
    SignedChanges ours = new SignedChanges("s3cret");
    byte[] entry = ours.sign(down(4, 1));
    assertEquals(down(4, 1), ours.open(entry));
    assertNull(new SignedChanges("other").open(entry), "another cluster's secret");
    byte[] tampered = entry.clone();
    tampered[1] ^= 1;
    assertNull(ours.open(tampered), "a changed byte");
    assertNull(ours.open(down(4, 1).toByteArray()), "unsigned");
    assertNull(ours.open(new byte[3]), "too short to hold a signature");
    assertArrayEquals(entry, ours.sign(down(4, 1)), "deterministic: every voter checks the same bytes");
  }

  @Test
  void voters_areAnOddNumberOfTheFirstNodes_atMostFive() {
    assertEquals(List.of(0), Membership.voters(2));
    assertEquals(List.of(0, 1, 2), Membership.voters(3));
    assertEquals(List.of(0, 1, 2), Membership.voters(4));
    assertEquals(List.of(0, 1, 2, 3, 4), Membership.voters(5));
    assertEquals(List.of(0, 1, 2, 3, 4), Membership.voters(40));
  }

  @Test
  void groupId_differsWithTheSecret_andIsTheSameOnEveryNode() {
    org.sss.core.cluster.ClusterSpec a = org.sss.core.cluster.ClusterSpec.of(
        List.of(new org.sss.core.cluster.NodeAddress(0, "h", 1)), 8, "one");
    org.sss.core.cluster.ClusterSpec b = org.sss.core.cluster.ClusterSpec.of(
        List.of(new org.sss.core.cluster.NodeAddress(0, "h", 1)), 8, "two");
    assertEquals(Membership.groupId(a), Membership.groupId(org.sss.core.cluster.ClusterSpec.of(
        List.of(new org.sss.core.cluster.NodeAddress(0, "h", 1)), 8, "one")));
    org.junit.jupiter.api.Assertions.assertNotEquals(Membership.groupId(a), Membership.groupId(b));
  }
}
