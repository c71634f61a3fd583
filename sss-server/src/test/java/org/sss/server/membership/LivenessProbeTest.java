package org.sss.server.membership;

import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import org.junit.jupiter.api.Test;
import org.sss.core.proto.ViewAnswer;

/** What a probe's answer must say for its node to count as answering. */
class LivenessProbeTest {
  private static ViewAnswer answer(long confirmedMillisAgo, long stalledMillis) {
    return ViewAnswer.newBuilder().setReplicated(true).setConfirmedMillisAgo(confirmedMillisAgo)
        .setWorkersStalledMillis(stalledMillis).build();
  }

  @Test
  void aConfirmedViewAndWorkersThatMove_serve() {
    assertTrue(LivenessProbe.serves(answer(100, 0)));
    assertTrue(LivenessProbe.serves(answer(100, LivenessProbe.STALLED_MILLIS - 1)), "busy for a while, not hung");
  }

  @Test
  void noLease_orWorkersThatHaveNotMovedForLong_countAsSilent() {
    assertFalse(LivenessProbe.serves(answer(Membership.LEASE_MILLIS + 1, 0)), "cut off from the majority");
    assertFalse(LivenessProbe.serves(answer(100, LivenessProbe.STALLED_MILLIS)), "workers hung");
  }

  @Test
  void aRequestRunningForLong_countsAsSilent_whileOthersMove() {
    ViewAnswer.Builder a = answer(100, 0).toBuilder();
    assertTrue(LivenessProbe.serves(a.setLongestRequestMillis(LivenessProbe.HUNG_REQUEST_MILLIS - 1).build()),
        "a long request, not yet a hung one");
    assertFalse(LivenessProbe.serves(a.setLongestRequestMillis(LivenessProbe.HUNG_REQUEST_MILLIS).build()),
        "one worker hung on a disk that does not answer");
  }
}
