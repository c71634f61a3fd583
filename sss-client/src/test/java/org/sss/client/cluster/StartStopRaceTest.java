package org.sss.client.cluster;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.io.TempDir;

/**
 * {@code cluster stop} while a {@code cluster start} is under way. A node whose JVM was
 * launched but has not yet taken its lock is "not running" to the stop, which reports it
 * stopped; the node then comes up and stays up after a stop that said "stopped".
 */
@Timeout(value = 240, unit = TimeUnit.SECONDS)
class StartStopRaceTest {
  @TempDir
  Path work;

  @Test
  void stopDuringStart_leavesNoNodeRunning_whenItSaysStopped() throws Exception {
    Path dir = work.resolve("c");
    LocalProcessCluster.start(dir, 2, 0, "256m").stopAll();
    CompletableFuture<LocalProcessCluster> start = CompletableFuture.supplyAsync(() -> {
      try {
        return LocalProcessCluster.start(dir, 0, 0, null);
      } catch (Exception e) {
        throw new IllegalStateException(e);
      }
    });
    Thread.sleep(150); // the servers' JVMs are booting: launched, no lock yet
    LocalProcessCluster attached = LocalProcessCluster.attach(dir);
    List<String> report = attached.stop();
    String startOutcome;
    try {
      start.get(120, TimeUnit.SECONDS);
      startOutcome = "start succeeded";
    } catch (Exception e) {
      startOutcome = "start failed: " + e.getCause();
    }
    List<Integer> running = new ArrayList<>();
    for (int n = 0; n < 2; n++) {
      if (new NodeLockProbe(dir.resolve("node-" + n + "/data")).held()) {
        running.add(n);
      }
    }
    try {
      boolean saidAllStopped = report.stream().noneMatch(l -> l.contains("NOT STOPPED"));
      assertTrue(!saidAllStopped || running.isEmpty(), "stop said " + report + " (" + startOutcome
          + ") yet nodes " + running + " run");
    } finally {
      attached.stop();
    }
  }
}
