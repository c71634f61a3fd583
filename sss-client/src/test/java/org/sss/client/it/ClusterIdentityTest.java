package org.sss.client.it;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.io.DataInputStream;
import java.io.DataOutputStream;
import java.net.InetAddress;
import java.net.ServerSocket;
import java.net.Socket;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;
import org.sss.core.transport.Pipelines;
import org.sss.client.SssClient;
import org.sss.client.cluster.SssCluster;
import org.sss.client.io.BulkIO;
import org.sss.core.cluster.ClusterSpec;
import org.sss.core.cluster.NodeAddress;
import org.sss.core.cluster.PartitionMap;
import org.sss.core.proto.Challenge;
import org.sss.core.proto.ErrorCode;
import org.sss.core.proto.Request;
import org.sss.core.proto.Response;
import org.sss.core.transport.SssException;

/**
 * A client talks only to the cluster its file describes: the node it reaches must prove it
 * knows the secret and be the node the file names, and the node refuses a client whose file
 * places keys differently (another partition count or map), which would write keys where no
 * task or scan of the cluster looks.
 */
class ClusterIdentityTest {
  @Test
  void clientWithAnotherPartitionCount_isRefusedAtConnect() throws Exception {
    try (SssCluster cluster = SssCluster.embedded(2)) {
      ClusterSpec real = cluster.spec();
      ClusterSpec edited = new ClusterSpec(real.nodes(), PartitionMap.roundRobin(real.partitionMap().partitions() / 2,
          real.nodeCount()), real.secret(), false);
      try (SssClient wrong = SssClient.connect(edited)) {
        SssException e = assertThrows(SssException.class,
            () -> wrong.createTable("t", BulkIO.textTable(), false));
        assertTrue(e.getMessage().contains("partition layout"), e.getMessage());
      }
      try (SssClient right = cluster.client()) {
        assertTrue(right.listTables().isEmpty(), "the refused client wrote nothing");
      }
    }
  }

  @Test
  void anImpostorThatDoesNotKnowTheSecret_isRefusedByTheClient() throws Exception {
    try (ServerSocket impostor = new ServerSocket(0, 10, InetAddress.getLoopbackAddress())) {
      CompletableFuture<Void> serving = CompletableFuture.runAsync(() -> acceptEveryHello(impostor));
      ClusterSpec spec = ClusterSpec.of(List.of(new NodeAddress(0, "127.0.0.1", impostor.getLocalPort())), 8, "s3cret");
      try (SssClient client = SssClient.connect(spec)) {
        SssException e = assertThrows(SssException.class, client::listTables);
        assertEquals(ErrorCode.UNAUTHENTICATED, e.code(), e.getMessage());
        assertTrue(e.getMessage().contains("did not prove that it knows the cluster secret"), e.getMessage());
      }
      serving.get(10, TimeUnit.SECONDS);
    }
  }

  /**
   * count asks a partition at a time; a node that cannot be reached is tried once, not once per
   * partition (a node that hangs instead of refusing cost a connect timeout per partition).
   */
  @Test
  void count_triesAnUnreachableNodeOnce_notOncePerPartition() throws Exception {
    try (ServerSocket a = new ServerSocket(0, 50, InetAddress.getLoopbackAddress());
         ServerSocket b = new ServerSocket(0, 50, InetAddress.getLoopbackAddress())) {
      java.util.concurrent.atomic.AtomicInteger accepted = new java.util.concurrent.atomic.AtomicInteger();
      for (ServerSocket s : List.of(a, b)) {
        Thread t = new Thread(() -> {
          while (true) {
            try (Socket c = s.accept()) {
              accepted.incrementAndGet(); // and closed at once: a node that is not there
            } catch (java.io.IOException closed) {
              return;
            }
          }
        });
        t.setDaemon(true);
        t.start();
      }
      ClusterSpec spec = ClusterSpec.of(List.of(new NodeAddress(0, "127.0.0.1", a.getLocalPort()),
          new NodeAddress(1, "127.0.0.1", b.getLocalPort())), 16, "s3cret");
      try (SssClient client = SssClient.connect(spec)) {
        assertThrows(SssException.class, () -> client.count("t"));
      }
      assertEquals(2, accepted.get(), "connection attempts: one per node");
    }
  }

  /**
   * A count request's timeout runs from when it is sent: all of a node's partitions sent at once
   * made the last wait for every other, so a large table's count ran into the timeout as one
   * request for the whole node did. A node gets a few at a time.
   */
  @Test
  void count_sendsANodeAFewPartitionsAtATime_andAddsThemUp() throws Exception {
    try (ServerSocket node = new ServerSocket(0, 10, InetAddress.getLoopbackAddress())) {
      java.util.concurrent.atomic.AtomicInteger maxOutstanding = new java.util.concurrent.atomic.AtomicInteger();
      CompletableFuture<Void> serving = CompletableFuture.runAsync(() -> countSlowly(node, "s3cret", maxOutstanding));
      ClusterSpec spec = ClusterSpec.of(List.of(new NodeAddress(0, "127.0.0.1", node.getLocalPort())), 32, "s3cret");
      try (SssClient client = SssClient.connect(spec)) {
        assertEquals(32 * 3, client.count("t"), "3 pairs a partition");
      }
      serving.get(10, TimeUnit.SECONDS);
      assertTrue(maxOutstanding.get() <= 8, "count requests at the node at once: " + maxOutstanding.get());
    }
  }

  /** Node 0 that knows the secret and answers each Count with 3 pairs, one at a time, 10 ms each. */
  private static void countSlowly(ServerSocket server, String secret, java.util.concurrent.atomic.AtomicInteger max) {
    try (Socket s = server.accept();
         DataOutputStream out = new DataOutputStream(s.getOutputStream());
         DataInputStream in = new DataInputStream(s.getInputStream())) {
      byte[] nonce = new byte[32];
      write(out, Response.newBuilder().setChallenge(Challenge.newBuilder()
          .setNonce(com.google.protobuf.ByteString.copyFrom(nonce)).setProtocolVersion(Pipelines.PROTOCOL_VERSION).setNodeId(0)).build());
      Request hello = read(in);
      write(out, Response.newBuilder().setId(hello.getId()).setCode(ErrorCode.OK).setWelcome(
          org.sss.core.proto.Welcome.newBuilder().setProof(com.google.protobuf.ByteString.copyFrom(
              org.sss.core.transport.Auth.serverProof(secret, nonce, hello.getHello().getClientNonce().toByteArray()))))
          .build());
      java.util.concurrent.BlockingQueue<Long> received = new java.util.concurrent.LinkedBlockingQueue<>();
      java.util.concurrent.atomic.AtomicInteger outstanding = new java.util.concurrent.atomic.AtomicInteger();
      Thread answering = new Thread(() -> {
        try {
          while (true) {
            long id = received.take();
            Thread.sleep(10);
            outstanding.decrementAndGet();
            write(out, Response.newBuilder().setId(id).setCode(ErrorCode.OK)
                .setCount(org.sss.core.proto.CountResult.newBuilder().setPairs(3)).build());
          }
        } catch (InterruptedException | java.io.IOException e) {
          // done
        }
      });
      answering.setDaemon(true);
      answering.start();
      s.setSoTimeout(5000);
      while (true) {
        Request r;
        try {
          r = read(in);
        } catch (java.io.EOFException | java.net.SocketTimeoutException end) {
          break;
        }
        max.accumulateAndGet(outstanding.incrementAndGet(), Math::max);
        received.add(r.getId());
      }
      answering.interrupt();
    } catch (java.io.IOException ignored) {
      // the client closed the connection
    }
  }

  private static Request read(DataInputStream in) throws java.io.IOException {
    int length = in.readInt();
    int headerLength = in.readInt();
    byte[] header = new byte[headerLength];
    in.readFully(header);
    in.skipNBytes(length - 4 - headerLength);
    return Request.parseFrom(header);
  }

  /** Sends node 0's challenge, then answers the hello with OK and no proof of its own. */
  private static void acceptEveryHello(ServerSocket server) {
    try (Socket s = server.accept();
         DataOutputStream out = new DataOutputStream(s.getOutputStream());
         DataInputStream in = new DataInputStream(s.getInputStream())) {
      write(out, Response.newBuilder().setChallenge(Challenge.newBuilder()
          .setNonce(com.google.protobuf.ByteString.copyFrom(new byte[32])).setProtocolVersion(Pipelines.PROTOCOL_VERSION).setNodeId(0)).build());
      int length = in.readInt();
      int headerLength = in.readInt();
      byte[] header = new byte[headerLength];
      in.readFully(header);
      in.skipNBytes(length - 4 - headerLength);
      Request hello = Request.parseFrom(header);
      write(out, Response.newBuilder().setId(hello.getId()).setCode(ErrorCode.OK).build());
      s.setSoTimeout(5000);
      in.read(); // until the client gives up on us
    } catch (java.io.IOException ignored) {
      // the client closed the connection: what it should do
    }
  }

  private static synchronized void write(DataOutputStream out, Response r) throws java.io.IOException {
    byte[] header = r.toByteArray();
    out.writeInt(4 + header.length);
    out.writeInt(header.length);
    out.write(header);
    out.flush();
  }
}
