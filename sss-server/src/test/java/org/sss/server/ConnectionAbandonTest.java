package org.sss.server;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertInstanceOf;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.netty.buffer.Unpooled;
import java.nio.file.Path;
import java.time.Duration;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.io.TempDir;
import org.sss.core.cluster.ClusterSpec;
import org.sss.core.cluster.NodeAddress;
import org.sss.core.proto.ListTables;
import org.sss.core.proto.PutBatch;
import org.sss.core.proto.Request;
import org.sss.core.proto.Response;
import org.sss.core.transport.Connection;
import org.sss.core.transport.Frame;
import org.sss.core.transport.NodeUnavailableException;
import org.sss.core.transport.Pipelines;

/**
 * Abandoning a connection to a node decided gone ({@code Connection.abandon}, what
 * {@code PeerLinks.drop} and the client's {@code GoneNodeWatch} do): the requests waiting on it
 * fail at once as a lost connection naming why, and the node itself keeps serving.
 */
@Timeout(value = 60, unit = TimeUnit.SECONDS)
class ConnectionAbandonTest {
  @TempDir
  Path dir;

  @Test
  void abandon_failsWhatWaitsAtOnceNamingWhy_andTheNodeServesANewConnection() throws Exception {
    NodeListener socket = NodeListener.bind("127.0.0.1", 0);
    ClusterSpec spec = ClusterSpec.of(List.of(new NodeAddress(0, "127.0.0.1", socket.port())), 8, "");
    try (SssServer server = SssServer.start(NodeConfig.of(spec, 0, dir.resolve("data")), socket)) {
      Connection c = open(spec);
      // a batch of 16 MiB: its answer cannot come before the whole frame has crossed
      CompletableFuture<Frame<Response>> waiting = c.call(Request.newBuilder().setPutBatch(PutBatch.newBuilder()
          .setTable("no-such-table").setPairCount(1)), Unpooled.wrappedBuffer(new byte[16 << 20]));
      c.abandon("decided down by the members (membership epoch 4)");
      ExecutionException e = assertThrows(ExecutionException.class, () -> waiting.get(5, TimeUnit.SECONDS));
      assertInstanceOf(NodeUnavailableException.class, e.getCause());
      assertTrue(e.getCause().getMessage().contains("lost connection to")
          && e.getCause().getMessage().contains("decided down by the members (membership epoch 4)"), e.getCause().getMessage());
      assertFalse(c.isActive(), "abandoned: closed");
      assertFalse(c.waiting());
      // a request on the abandoned connection fails at once too
      assertThrows(ExecutionException.class, () -> c.call(Request.newBuilder().setListTables(ListTables.getDefaultInstance()))
          .get(5, TimeUnit.SECONDS));
      try (Connection again = open(spec)) {
        Frame<Response> r = again.call(Request.newBuilder().setListTables(ListTables.getDefaultInstance()))
            .get(30, TimeUnit.SECONDS);
        r.release();
        assertEquals(0, r.header().getTables().getTablesCount(), "the node serves a new connection");
      }
    }
  }

  private static Connection open(ClusterSpec spec) throws Exception {
    return Connection.open(spec.node(0), "", "abandon-test", null, Pipelines.DEFAULT_MAX_FRAME, Duration.ofSeconds(30))
        .get(30, TimeUnit.SECONDS);
  }
}
