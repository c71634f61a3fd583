package org.sss.server;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertSame;
import static org.junit.jupiter.api.Assertions.assertThrows;

import java.io.IOException;
import java.util.ArrayList;
import java.util.List;
import org.junit.jupiter.api.Test;

/** Every step runs whatever the ones before it threw, and no failure is lost. */
class CleanupStepsTest {
  private final List<String> ran = new ArrayList<>();

  private CleanupSteps.Step step(String name, Throwable throwing) {
    return () -> {
      ran.add(name);
      if (throwing instanceof Exception e) {
        throw e;
      }
      if (throwing instanceof Error e) {
        throw e;
      }
    };
  }

  @Test
  void aReleaseRunsEveryStep_andThrowsTheFirstFailureWithTheOthersSuppressed() {
    IllegalStateException first = new IllegalStateException("engine");
    IllegalArgumentException second = new IllegalArgumentException("store");
    CleanupSteps steps = CleanupSteps.release()
        .run(step("listener", null))
        .run(step("engine", first))
        .run(step("store", second))
        .run(step("lock", null));
    assertEquals(List.of("listener", "engine", "store", "lock"), ran);
    IllegalStateException thrown = assertThrows(IllegalStateException.class, steps::done);
    assertSame(first, thrown);
    assertArrayEquals(new Throwable[] {second}, thrown.getSuppressed());
  }

  @Test
  void aReleaseWithoutFailures_endsQuietly() {
    CleanupSteps.release().run(step("a", null)).run(step("b", null)).done();
    assertEquals(List.of("a", "b"), ran);
  }

  @Test
  void afterAFailure_theStepsFailuresAreSuppressedInIt_andDoneLeavesTheThrowToItsCaller() {
    RuntimeException startFailed = new RuntimeException("start failed");
    IOException socket = new IOException("socket");
    AssertionError lock = new AssertionError("lock");
    CleanupSteps steps = CleanupSteps.after(startFailed)
        .run(step("socket", socket))
        .run(step("lock", lock))
        .run(step("last", startFailed)); // the same failure again is not suppressed in itself
    steps.done();
    assertEquals(List.of("socket", "lock", "last"), ran);
    assertArrayEquals(new Throwable[] {socket, lock}, startFailed.getSuppressed());
  }

  @Test
  void aCheckedFailureIsWrapped_andAnErrorStaysAnError() {
    IOException io = new IOException("disk");
    IllegalStateException wrapped = assertThrows(IllegalStateException.class,
        () -> CleanupSteps.release().run(step("a", io)).done());
    assertSame(io, wrapped.getCause());
    OutOfMemoryError oom = new OutOfMemoryError("fds");
    assertSame(oom, assertThrows(OutOfMemoryError.class, () -> CleanupSteps.release().run(step("b", oom)).done()));
  }

  @Test
  void anInterruptedStep_keepsTheFlag_andTheNextStepsRun() {
    try {
      CleanupSteps steps = CleanupSteps.release()
          .run(step("waits", new InterruptedException("stop")))
          .run(step("after", null));
      assertEquals(List.of("waits", "after"), ran);
      assertEquals(true, Thread.currentThread().isInterrupted());
      assertThrows(IllegalStateException.class, steps::done);
    } finally {
      Thread.interrupted();
    }
  }
}
