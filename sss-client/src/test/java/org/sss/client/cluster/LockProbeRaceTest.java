package org.sss.client.cluster;

import static org.junit.jupiter.api.Assertions.assertEquals;

import java.io.BufferedReader;
import java.io.InputStreamReader;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.io.TempDir;
import org.sss.core.cluster.ClusterSpec;
import org.sss.core.cluster.NodeAddress;

/**
 * Whether a node runs is read from its lock: the probe ({@code NodeLockProbe.held()})
 * reads it by TAKING it for a moment (tryLock, release). A node whose server reaches
 * {@code NodeLock.acquire} (a non-blocking tryLock) during that moment refuses to start, saying
 * its directory "is in use by another process (pid ...)" with the pid of whoever held it last.
 * Probes run while nodes start: a second {@code cluster start} polls {@code state()} of nodes the
 * first one launches, netns-cluster.sh polls {@code sss node state} every 0.5 s during {@code up}.
 * Here the probe runs in a loop to make the window easy to hit.
 */
@Timeout(value = 240, unit = TimeUnit.SECONDS)
class LockProbeRaceTest {
  @TempDir
  Path work;

  @Test
  void aStartingNodeIsNeverRefusedBecauseSomeoneProbedItsLock() throws Exception {
    int port = FreePorts.pick(1).get(0);
    ClusterSpec spec = ClusterSpec.of(List.of(new NodeAddress(0, "127.0.0.1", port)), 8, "s3cret");
    spec.save(work.resolve("cluster.properties"));
    Files.writeString(work.resolve("node.properties"), "cluster=cluster.properties\nnode.id=0\ndata.dir=data\n");
    Path data = work.resolve("data");
    Files.createDirectories(data);
    Files.writeString(data.resolve("node.lock"), "");

    AtomicBoolean probing = new AtomicBoolean(true);
    Thread prober = new Thread(() -> {
      NodeLockProbe probe = new NodeLockProbe(data);
      while (probing.get()) {
        probe.held();
      }
    }, "prober");
    prober.start();
    List<String> refusals = new ArrayList<>();
    int attempts = 0;
    try {
      String java = Path.of(System.getProperty("java.home"), "bin", "java").toString();
      for (; attempts < 8 && refusals.isEmpty(); attempts++) {
        Process p = new ProcessBuilder(java, "-Xmx128m", "-XX:TieredStopAtLevel=1", "-cp",
            System.getProperty("java.class.path"), "org.sss.server.ServerMain", "--config",
            work.resolve("node.properties").toString()).redirectErrorStream(true).start();
        StringBuilder said = new StringBuilder();
        try (BufferedReader r = new BufferedReader(new InputStreamReader(p.getInputStream(), StandardCharsets.UTF_8))) {
          String line;
          while ((line = r.readLine()) != null) {
            said.append(line).append('\n');
            if (line.startsWith("READY")) {
              break;
            }
          }
        } finally {
          p.destroy();
          if (!p.waitFor(30, TimeUnit.SECONDS)) {
            p.destroyForcibly().waitFor();
          }
        }
        if (said.toString().contains("in use by another process")) {
          refusals.add(said.toString().trim());
        }
      }
    } finally {
      probing.set(false);
      prober.join();
    }
    assertEquals(List.of(), refusals, "a stopped node refused to start because a probe held its lock (attempt "
        + attempts + ")");
  }
}
