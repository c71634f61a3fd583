package org.sss.core.cluster;

import static org.junit.jupiter.api.Assertions.assertEquals;

import java.util.List;
import org.junit.jupiter.api.Test;
import org.sss.core.proto.ClusterView;

/** What a view says was decided about its nodes, as the links dropped on it name it. */
class ViewDecisionsTest {
  @Test
  void downOrOut_inOrder_andEachDecisionNamedWithItsEpoch() {
    ClusterView v = ClusterView.newBuilder().setEpoch(7).addDown(3).addOut(1).addJoining(2).build();
    assertEquals(List.of(1, 3), List.copyOf(InSyncCopies.downOrOut(v)), "joining is neither");
    assertEquals("decided down by the members (membership epoch 7)", InSyncCopies.decision(v, 3));
    assertEquals("decided out by the members (membership epoch 7)", InSyncCopies.decision(v, 1));
  }
}
