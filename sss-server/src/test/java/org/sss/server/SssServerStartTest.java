package org.sss.server;

import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;
import org.sss.core.cluster.ClusterSpec;
import org.sss.core.cluster.NodeAddress;

/** A server runs user JARs, so it must not listen beyond loopback without a cluster secret. */
class SssServerStartTest {
  @TempDir
  Path dir;

  private static int freePort() throws java.io.IOException {
    try (java.net.ServerSocket s = new java.net.ServerSocket(0)) {
      return s.getLocalPort();
    }
  }

  private static NodeConfig config(String host, String bind, String secret, Path data) throws java.io.IOException {
    ClusterSpec spec = ClusterSpec.of(List.of(new NodeAddress(0, host, freePort())), 8, secret);
    NodeConfig defaults = NodeConfig.of(spec, 0, data);
    return new NodeConfig(spec, 0, data, bind, defaults.maxFrameBytes(), defaults.maxValueBytes(),
        defaults.workerThreads(), null, null);
  }

  @Test
  void start_beyondLoopbackWithoutSecret_refusesBeforeTouchingTheStore() throws Exception {
    Path data = dir.resolve("data");
    NodeConfig open = config("127.0.0.1", "0.0.0.0", "", data);
    IllegalArgumentException e = assertThrows(IllegalArgumentException.class, () -> SssServer.start(open));
    assertTrue(e.getMessage().contains("without a cluster secret"), e.getMessage());
    assertFalse(Files.exists(data), "no store was opened");
  }

  @Test
  void start_onLoopbackWithoutSecret_orAnywhereWithOne_listens() throws Exception {
    SssServer.start(config("127.0.0.1", null, "", dir.resolve("a"))).close();
    SssServer.start(config("127.0.0.1", "0.0.0.0", "s3cret", dir.resolve("b"))).close();
  }
}
