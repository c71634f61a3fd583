package org.sss.server.membership;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertThrows;
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
  void aDiskThatDoesNotAnswer_countsAsSilent_whileTheWorkersMove() {
    ViewAnswer.Builder a = answer(100, 0).toBuilder();
    assertTrue(LivenessProbe.serves(a.setDiskStalledMillis(LivenessProbe.DISK_STALLED_MILLIS - 1).build()),
        "a slow sync, not yet a hung disk");
    assertFalse(LivenessProbe.serves(a.setDiskStalledMillis(LivenessProbe.DISK_STALLED_MILLIS).build()),
        "a disk that does not answer");
  }

  @Test
  void theDiskRulesSetting_mustBeAPositiveNumber() {
    try {
      System.setProperty(LivenessProbe.DISK_STALLED_PROPERTY, "60000");
      assertEquals(60_000, LivenessProbe.diskStalledMillis());
      for (String wrong : new String[] {"0", "-5", "60s", ""}) {
        System.setProperty(LivenessProbe.DISK_STALLED_PROPERTY, wrong);
        IllegalArgumentException e = assertThrows(IllegalArgumentException.class, LivenessProbe::diskStalledMillis);
        assertTrue(e.getMessage().contains(LivenessProbe.DISK_STALLED_PROPERTY) && e.getMessage().contains("'" + wrong + "'"),
            e.getMessage());
      }
    } finally {
      System.clearProperty(LivenessProbe.DISK_STALLED_PROPERTY);
    }
    assertEquals(LivenessProbe.DISK_STALLED_MILLIS, LivenessProbe.diskStalledMillis());
  }
}
