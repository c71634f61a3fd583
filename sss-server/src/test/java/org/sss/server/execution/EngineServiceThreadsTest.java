package org.sss.server.execution;

import static org.junit.jupiter.api.Assertions.assertEquals;

import java.nio.file.Path;
import java.util.List;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;
import org.sss.core.cluster.ClusterSpec;
import org.sss.core.cluster.NodeAddress;
import org.sss.kvs.NodeStore;

/**
 * The nodes open in one JVM divide its worker threads among them for a job that does not say
 * how many tasks run at once; closing a node, once or twice, gives its share back.
 */
class EngineServiceThreadsTest {
  @TempDir
  Path dir;

  private final ClusterSpec spec = ClusterSpec.of(List.of(new NodeAddress(0, "127.0.0.1", 20_001),
      new NodeAddress(1, "127.0.0.1", 20_002), new NodeAddress(2, "127.0.0.1", 20_003)), 8, "s");

  @Test
  void nodesSharingTheJvmDivideItsThreads() {
    try (NodeStore s0 = NodeStore.open(dir.resolve("0")); NodeStore s1 = NodeStore.open(dir.resolve("1"));
         NodeStore s2 = NodeStore.open(dir.resolve("2"))) {
      int before = EngineService.openInThisJvm(); // engines other tests left open count too
      EngineService first = new EngineService(s0, spec, 0, 6, 1 << 20);
      EngineService second = null;
      EngineService third = null;
      try {
        assertEquals(before + 1, EngineService.openInThisJvm());
        assertEquals(share(6, before + 1), first.defaultTasksAtOnce());
        second = new EngineService(s1, spec, 1, 6, 1 << 20);
        third = new EngineService(s2, spec, 2, 6, 1 << 20);
        assertEquals(before + 3, EngineService.openInThisJvm());
        assertEquals(share(6, before + 3), third.defaultTasksAtOnce());
        if (before == 0) {
          assertEquals(2, first.defaultTasksAtOnce()); // six threads, three nodes
        }
        second.close();
        second.close(); // idempotent: its share is given back once
        assertEquals(before + 2, EngineService.openInThisJvm());
        third.close();
        assertEquals(before + 1, EngineService.openInThisJvm());
        assertEquals(share(6, before + 1), first.defaultTasksAtOnce());
      } finally {
        first.close();
        if (second != null) {
          second.close();
        }
        if (third != null) {
          third.close();
        }
      }
      assertEquals(before, EngineService.openInThisJvm());
    }
  }

  /** Three nodes of six threads in one JVM run two tasks each; one task at least, however many nodes. */
  @Test
  void theShareRoundsUpAndNeverReachesZero() {
    assertEquals(6, share(6, 1));
    assertEquals(2, share(6, 3));
    assertEquals(1, share(2, 3));
    assertEquals(1, share(1, 8));
  }

  private static int share(int threads, int nodes) {
    return EngineService.share(threads, nodes);
  }
}
