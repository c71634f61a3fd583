package org.sss.client.cluster;

import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.time.Duration;
import java.util.Optional;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;

/** When a stop counts a node's process as ended: gone, or a zombie nobody reaps. */
class ProcessEndTest {
  @Test
  void aRunningProcess_hasNotEnded_aZombie_has_andOneThatExits_isWaitedFor() throws Exception {
    // sh starts a short child, then becomes a sleep that never reaps it: the child, ending after
    // the exec in any shell, stays a zombie
    Process parent = new ProcessBuilder("sh", "-c", "sleep 1 & exec sleep 30").start();
    try {
      ProcessHandle zombie = null;
      for (long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(10); zombie == null; ) {
        zombie = parent.toHandle().children().findFirst().filter(NodeControl::ended).orElse(null);
        assertTrue(System.nanoTime() < deadline, "the child did not become a zombie");
        Thread.sleep(20);
      }
      assertTrue(zombie.isAlive(), "the JDK counts a zombie alive: ended() saw its state");
      assertFalse(NodeControl.ended(parent.toHandle()), "the sleep runs");
      assertTrue(NodeControl.awaitExit(Optional.of(zombie), Duration.ofMillis(100)));
      assertFalse(NodeControl.awaitExit(Optional.of(parent.toHandle()), Duration.ofMillis(200)), "still running");
      parent.destroy();
      assertTrue(NodeControl.awaitExit(Optional.of(parent.toHandle()), Duration.ofSeconds(10)), "ended once killed");
    } finally {
      parent.destroyForcibly();
    }
  }
}
