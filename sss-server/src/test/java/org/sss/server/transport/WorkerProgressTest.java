package org.sss.server.transport;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;

import java.util.ArrayDeque;
import java.util.Deque;
import java.util.concurrent.RejectedExecutionException;
import java.util.concurrent.atomic.AtomicLong;
import org.junit.jupiter.api.Test;

/** Whether a node's workers move, against a clock the test turns. */
class WorkerProgressTest {
  private final AtomicLong nanos = new AtomicLong(1_000_000_000L);
  private final Deque<Runnable> held = new ArrayDeque<>();
  private final WorkerProgress progress = new WorkerProgress(held::add, nanos::get);

  private void advanceMillis(long ms) {
    nanos.addAndGet(ms * 1_000_000L);
  }

  @Test
  void nothingWaiting_isNeverStalled_howeverLongAgoAWorkerBegan() {
    advanceMillis(60_000);
    assertEquals(0, progress.stalledMillis());
  }

  @Test
  void requestsWaitingWithNoneBegun_stallFromWhenTheyBeganToWait() {
    advanceMillis(60_000); // idle for a minute first: that is not a stall
    progress.execute(() -> { });
    progress.execute(() -> { });
    advanceMillis(7_000);
    assertEquals(7_000, progress.stalledMillis());
    held.removeFirst().run(); // a worker begins one: the workers move
    assertEquals(0, progress.stalledMillis(), "one still waits, but a worker just began one");
    advanceMillis(3_000);
    assertEquals(3_000, progress.stalledMillis());
    held.removeFirst().run();
    advanceMillis(30_000);
    assertEquals(0, progress.stalledMillis(), "nothing waits");
  }

  /** Workers that hang while their clients only wait: the probe's sample waits, and shows it. */
  @Test
  void aSample_waitsLikeARequest_soWorkersThatHangWithNothingWaitingShow() {
    progress.execute(() -> { });
    held.removeFirst().run(); // a worker began it and hangs in it: nothing else waits
    advanceMillis(30_000);
    assertEquals(0, progress.stalledMillis(), "nothing waits yet");
    progress.sample();
    progress.sample(); // one sample at a time
    assertEquals(1, held.size());
    advanceMillis(11_000);
    assertEquals(11_000, progress.stalledMillis());
    held.removeFirst().run(); // the workers move again
    assertEquals(0, progress.stalledMillis());
    progress.sample();
    assertEquals(1, held.size(), "a new sample once the last one ran");
  }

  @Test
  void aRequestThePoolRefuses_doesNotCountAsWaiting() {
    WorkerProgress refusing = new WorkerProgress(r -> {
      throw new RejectedExecutionException("shut down");
    }, nanos::get);
    assertThrows(RejectedExecutionException.class, () -> refusing.execute(() -> { }));
    advanceMillis(20_000);
    assertEquals(0, refusing.stalledMillis());
  }
}
