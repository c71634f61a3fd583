package org.sss.server.transport;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.util.concurrent.atomic.AtomicInteger;
import org.junit.jupiter.api.Test;

class QueuedRequestsTest {
  @Test
  void pastTheBound_enterSaysNo_andPausedConnectionsResumeAtHalf() {
    QueuedRequests q = new QueuedRequests(4);
    for (int i = 0; i < 4; i++) {
      assertTrue(q.enter(), "request " + i + " is within the bound");
    }
    assertFalse(q.enter(), "the fifth request is past the bound");
    AtomicInteger resumed = new AtomicInteger();
    q.pause(resumed::incrementAndGet);
    q.pause(resumed::incrementAndGet);
    assertEquals(0, resumed.get(), "5 held: nobody reads yet");
    q.leave(); // 4
    q.leave(); // 3
    assertEquals(0, resumed.get(), "3 held is over half of 4");
    q.leave(); // 2
    assertEquals(2, resumed.get(), "both paused connections read again at half the bound");
    q.leave();
    q.leave();
    assertEquals(2, resumed.get(), "each pause resumes once");
    assertEquals(0, q.held());
    assertEquals(5, q.peak());
  }

  @Test
  void aPauseAfterEverythingFinished_resumesAtOnce() {
    QueuedRequests q = new QueuedRequests(2);
    q.enter();
    q.enter();
    assertFalse(q.enter());
    // the three finish before the connection that saw "no" registers its pause
    q.leave();
    q.leave();
    q.leave();
    AtomicInteger resumed = new AtomicInteger();
    q.pause(resumed::incrementAndGet);
    assertEquals(1, resumed.get(), "nothing is left to resume it later");
  }

  @Test
  void aBoundBelowTwo_isRefused() {
    assertThrows(IllegalArgumentException.class, () -> new QueuedRequests(1));
  }
}
