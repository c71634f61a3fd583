package org.sss.client.cluster;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.nio.file.Path;
import java.util.List;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.io.TempDir;
import org.sss.client.SssClient;
import org.sss.core.cluster.ClusterSpec;
import org.sss.core.cluster.NodeAddress;
import org.sss.core.transport.SssException;
import org.sss.server.NodeConfig;
import org.sss.server.SssServer;

/** The client refuses a node whose challenge names another node id. */
@Timeout(value = 60, unit = TimeUnit.SECONDS)
class NodeIdCheckTest {
  @TempDir
  Path work;

  @Test
  void swappedAddresses_areRefusedNamingBothIds_andTheNodeIsNotTakenForRunning() throws Exception {
    List<Integer> ports = FreePorts.pick(2);
    ClusterSpec real = ClusterSpec.of(List.of(new NodeAddress(0, "127.0.0.1", ports.get(0)),
        new NodeAddress(1, "127.0.0.1", ports.get(1))), 16, "s3cret");
    ClusterSpec swapped = ClusterSpec.of(List.of(new NodeAddress(0, "127.0.0.1", ports.get(1)),
        new NodeAddress(1, "127.0.0.1", ports.get(0))), 16, "s3cret");
    try (SssServer n0 = SssServer.start(NodeConfig.of(real, 0, work.resolve("n0")));
         SssServer n1 = SssServer.start(NodeConfig.of(real, 1, work.resolve("n1")))) {
      try (SssClient ok = SssClient.connect(real)) {
        ok.ping();
      }
      try (SssClient wrong = SssClient.connect(swapped)) {
        SssException e = assertThrows(SssException.class, wrong::ping);
        assertTrue(e.getMessage().contains("is node 1") && e.getMessage().contains("not node 0"), e.getMessage());
        // a second attempt on the same client is refused the same way (no half-open connection kept)
        SssException again = assertThrows(SssException.class, () -> wrong.ping(0));
        assertTrue(again.getMessage().contains("not node 0"), again.getMessage());
      }
      NodeControl c = new NodeControl(swapped, 0, work.resolve("n1"));
      assertEquals(NodeControl.State.UNRESPONSIVE, c.state(), "holds n1's lock but answers as node 0 at node 1's address");
    }
  }
}
