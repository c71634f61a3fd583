package org.sss.client.internal;

import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.net.InetSocketAddress;
import java.net.ServerSocket;
import java.net.Socket;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;
import org.sss.client.cluster.SssCluster;
import org.sss.core.cluster.ClusterSpec;
import org.sss.core.cluster.NodeAddress;
import org.sss.core.transport.Connection;
import org.sss.core.transport.NodeUnavailableException;

/**
 * A node that does not answer at all: connected on its own, it holds up no other node, and once
 * its connection timed out it is refused at once for a while instead of costing the timeout again.
 * The silent node is a listening socket whose accept queue is full: the kernel drops the SYNs of
 * any further connection, as a host cut off does.
 */
class NodeChannelsTest {
  @Test
  void aSilentNode_holdsUpNoOther_andIsRefusedAtOnceAfterItsTimeout() throws Exception {
    try (SssCluster cluster = SssCluster.embedded(2);
         ServerSocket silent = new ServerSocket()) {
      silent.bind(new InetSocketAddress("127.0.0.1", 0), 1);
      List<Socket> filling = new ArrayList<>();
      // never accepted: the queue fills, and the kernel drops the SYNs of the next connection
      boolean full = false;
      for (int i = 0; i < 16 && !full; i++) {
        Socket s = new Socket();
        filling.add(s);
        try {
          s.connect(silent.getLocalSocketAddress(), 500);
        } catch (java.net.SocketTimeoutException e) {
          full = true;
        }
      }
      assertTrue(full, "the accept queue filled");
      ClusterSpec real = cluster.spec();
      List<NodeAddress> nodes = List.of(real.node(0), new NodeAddress(1, "127.0.0.1", silent.getLocalPort()));
      ClusterSpec spec = new ClusterSpec(nodes, real.partitionMap(), real.secret(), false);
      try (NodeChannels channels = new NodeChannels(spec, "test", Duration.ofSeconds(30))) {
        long t0 = System.nanoTime();
        CompletableFuture<Connection> toSilent = channels.connection(1);
        Connection toLive = channels.get(0); // while node 1's connection waits for its timeout
        long liveMillis = TimeUnit.NANOSECONDS.toMillis(System.nanoTime() - t0);
        assertTrue(toLive.isActive());
        assertTrue(liveMillis < 5_000, "node 0 was held up " + liveMillis + " ms by the silent node");
        assertTrue(!toSilent.isDone(), "node 1's connection waits for its timeout");

        NodeUnavailableException first = assertThrows(NodeUnavailableException.class, () -> channels.get(1));
        assertTrue(first.silent(), first.getMessage());
        long t1 = System.nanoTime();
        NodeUnavailableException again = assertThrows(NodeUnavailableException.class, () -> channels.get(1));
        long againMillis = TimeUnit.NANOSECONDS.toMillis(System.nanoTime() - t1);
        assertTrue(againMillis < 1_000, "refused at once, not after another timeout: " + againMillis + " ms");
        assertTrue(again.getMessage().contains("did not answer a connection"), again.getMessage());
        assertTrue(channels.get(0).isActive(), "node 0 still served");
      } finally {
        for (Socket s : filling) {
          s.close();
        }
      }
    }
  }
}
