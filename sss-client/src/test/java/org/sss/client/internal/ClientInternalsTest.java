package org.sss.client.internal;

import static org.junit.jupiter.api.Assertions.assertSame;
import static org.junit.jupiter.api.Assertions.assertThrows;

import java.util.List;
import org.junit.jupiter.api.Test;
import org.sss.client.SssClient;
import org.sss.core.cluster.ClusterSpec;
import org.sss.core.cluster.NodeAddress;
import org.sss.core.proto.ViewAnswer;
import org.sss.core.transport.NodeUnavailableException;

/**
 * The engine reaches a client's own connections here, not through its public API: the same
 * channels the client uses and closes, and no second way in.
 */
class ClientInternalsTest {
  /** A node nobody listens on: port 1 refuses at once. Nothing is contacted before a request. */
  private static final ClusterSpec NOWHERE = ClusterSpec.of(List.of(new NodeAddress(0, "127.0.0.1", 1)), 8, "secret");

  @Test
  void channels_areTheClientsOwn_andCloseWithIt() {
    SssClient client = SssClient.connect(NOWHERE);
    NodeChannels channels = ClientInternals.channels(client);
    assertSame(channels, ClientInternals.channels(client));
    assertSame(NOWHERE, channels.spec());
    client.close();
    assertThrows(IllegalStateException.class, () -> channels.get(0), "closing the client closed them");
  }

  @Test
  void view_asksTheNodes() {
    try (SssClient client = SssClient.connect(NOWHERE)) {
      assertThrows(NodeUnavailableException.class, () -> ClientInternals.view(client));
      assertThrows(NodeUnavailableException.class, client::view);
      assertThrows(NodeUnavailableException.class, () -> client.ping(0));
    }
  }

  @Test
  void access_isInstalledOnce_bySssClient() {
    SssClient.connect(NOWHERE).close(); // its class initializer has run
    assertThrows(IllegalStateException.class, () -> ClientInternals.install(new ClientInternals.Access() {
      @Override
      public NodeChannels channels(SssClient client) {
        return null;
      }

      @Override
      public ViewAnswer view(SssClient client) {
        return null;
      }

      @Override
      public int batchesInFlight(org.sss.client.BulkWriter writer) {
        return 0;
      }
    }));
    assertThrows(NullPointerException.class, () -> ClientInternals.channels(null));
  }
}
