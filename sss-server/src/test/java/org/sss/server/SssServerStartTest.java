package org.sss.server;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertInstanceOf;
import static org.junit.jupiter.api.Assertions.assertNotEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.io.DataInputStream;
import java.net.Socket;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.List;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.io.TempDir;
import org.sss.core.cluster.ClusterSpec;
import org.sss.core.cluster.NodeAddress;
import org.sss.core.proto.ErrorCode;
import org.sss.core.proto.ListTables;
import org.sss.core.proto.Request;
import org.sss.core.proto.Response;
import org.sss.core.transport.Connection;
import org.sss.core.transport.Frame;
import org.sss.core.transport.Pipelines;
import org.sss.core.transport.SssException;

/**
 * Starting a node: it listens where the cluster file says (on a socket bound beforehand or by
 * itself), answers authenticated requests there, and must not listen beyond loopback without a
 * cluster secret (a server runs user JARs).
 */
@Timeout(value = 60, unit = TimeUnit.SECONDS)
class SssServerStartTest {
  @TempDir
  Path dir;

  private static NodeConfig config(String host, int port, String bind, String secret, Path data) {
    ClusterSpec spec = ClusterSpec.of(List.of(new NodeAddress(0, host, port)), 8, secret);
    NodeConfig defaults = NodeConfig.of(spec, 0, data);
    return new NodeConfig(spec, 0, data, bind, defaults.maxFrameBytes(), defaults.maxValueBytes(),
        defaults.workerThreads(), null, null);
  }

  /** Connects as a client would, authenticates with {@code secret}, and lists the node's tables. */
  private static Response listTables(NodeConfig config, String secret) throws Exception {
    try (Connection c = Connection.open(config.cluster().node(0), secret, "start-test", null,
        Pipelines.DEFAULT_MAX_FRAME, Duration.ofSeconds(30)).get(30, TimeUnit.SECONDS)) {
      Frame<Response> r = c.call(Request.newBuilder().setListTables(ListTables.getDefaultInstance()))
          .get(30, TimeUnit.SECONDS);
      r.release();
      return r.header();
    }
  }

  @Test
  void start_beyondLoopbackWithoutSecret_refusesBeforeTouchingTheStore_andReleasesTheSocket() throws Exception {
    Path data = dir.resolve("data");
    NodeListener socket = NodeListener.bind("0.0.0.0", 0);
    NodeConfig open = config("127.0.0.1", socket.port(), "0.0.0.0", "", data);
    IllegalArgumentException e = assertThrows(IllegalArgumentException.class, () -> SssServer.start(open, socket));
    assertTrue(e.getMessage().contains("without a cluster secret"), e.getMessage());
    assertFalse(Files.exists(data), "no store was opened");
    assertFalse(socket.isOpen(), "the socket handed to a server that refused to start is released");
  }

  @Test
  void start_onLoopbackWithoutSecret_listensAndAnswersOnTheBoundPort() throws Exception {
    NodeListener socket = NodeListener.bind("127.0.0.1", 0);
    assertNotEquals(0, socket.port(), "port 0 binds a port the kernel picks");
    NodeConfig config = config("127.0.0.1", socket.port(), null, "", dir.resolve("a"));
    try (SssServer server = SssServer.start(config, socket)) {
      assertEquals(socket.port(), server.port());
      Response r = listTables(config, "");
      assertTrue(r.hasTables(), r.toString());
      assertEquals(0, r.getTables().getTablesCount());
    }
    assertFalse(socket.isOpen(), "closing the server closes its socket");
  }

  @Test
  void start_onAllInterfacesWithASecret_listens_andRefusesAWrongSecret() throws Exception {
    NodeListener socket = NodeListener.bind("0.0.0.0", 0);
    NodeConfig config = config("127.0.0.1", socket.port(), "0.0.0.0", "s3cret", dir.resolve("b"));
    try (SssServer server = SssServer.start(config, socket)) {
      assertTrue(listTables(config, "s3cret").hasTables());
      ExecutionException e = assertThrows(ExecutionException.class, () -> listTables(config, "wrong"));
      SssException refused = assertInstanceOf(SssException.class, e.getCause());
      assertEquals(ErrorCode.UNAUTHENTICATED, refused.code(), refused.getMessage());
    }
  }

  @Test
  void start_withoutASocket_bindsThePortOfTheClusterFile() throws Exception {
    int port;
    try (NodeListener probe = NodeListener.bind("127.0.0.1", 0)) {
      port = probe.port(); // released again: the server binds it itself below
    }
    NodeConfig config = config("127.0.0.1", port, null, "", dir.resolve("c"));
    SssServer server;
    try {
      server = SssServer.start(config);
    } catch (IllegalStateException taken) {
      // another process took the port between the probe and the start: the message says so
      assertTrue(taken.getMessage().contains("cannot listen on 127.0.0.1:" + port), taken.getMessage());
      return;
    }
    try (server) {
      assertEquals(port, server.port());
      assertTrue(listTables(config, "").hasTables());
    }
  }

  @Test
  void start_onAPortInUse_failsNamingIt_andLeavesTheDataDirectoryFree() throws Exception {
    try (NodeListener holder = NodeListener.bind("127.0.0.1", 0)) {
      NodeConfig config = config("127.0.0.1", holder.port(), null, "", dir.resolve("d"));
      IllegalStateException e = assertThrows(IllegalStateException.class, () -> SssServer.start(config));
      assertTrue(e.getMessage().contains("cannot listen on 127.0.0.1:" + holder.port()), e.getMessage());
      assertTrue(holder.isOpen(), "the other socket is untouched");
      // the failed start released the node's lock: the node starts on a socket of its own
      NodeListener socket = NodeListener.bind("127.0.0.1", 0);
      NodeConfig moved = config("127.0.0.1", socket.port(), null, "", dir.resolve("d"));
      try (SssServer server = SssServer.start(moved, socket)) {
        assertTrue(listTables(moved, "").hasTables());
      }
    }
  }

  @Test
  void start_onASocketOfAnotherPort_isRefused() throws Exception {
    NodeListener socket = NodeListener.bind("127.0.0.1", 0);
    int other = socket.port() == 65535 ? socket.port() - 1 : socket.port() + 1;
    NodeConfig config = config("127.0.0.1", other, null, "", dir.resolve("e"));
    IllegalArgumentException e = assertThrows(IllegalArgumentException.class, () -> SssServer.start(config, socket));
    assertTrue(e.getMessage().contains("bound to port " + socket.port()), e.getMessage());
    assertFalse(socket.isOpen());
    assertFalse(Files.exists(dir.resolve("e")), "no store was opened");
  }

  @Test
  void connectionMadeBeforeTheNodeStarts_waitsInTheBacklog_andGetsTheChallenge() throws Exception {
    NodeListener socket = NodeListener.bind("127.0.0.1", 0);
    try (Socket early = new Socket("127.0.0.1", socket.port())) {
      early.setSoTimeout(30_000);
      NodeConfig config = config("127.0.0.1", socket.port(), null, "", dir.resolve("f"));
      try (SssServer server = SssServer.start(config, socket)) {
        DataInputStream in = new DataInputStream(early.getInputStream());
        int frameLength = in.readInt();
        int headerLength = in.readInt();
        byte[] header = new byte[headerLength];
        in.readFully(header);
        assertTrue(frameLength >= 4 + headerLength, "frame " + frameLength + ", header " + headerLength);
        assertTrue(Response.parseFrom(header).hasChallenge(), "a node opens every connection with a challenge");
      }
    }
  }
}
