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

  /** Sends node 0's challenge, then answers the hello with OK and no proof of its own. */
  private static void acceptEveryHello(ServerSocket server) {
    try (Socket s = server.accept();
         DataOutputStream out = new DataOutputStream(s.getOutputStream());
         DataInputStream in = new DataInputStream(s.getInputStream())) {
      write(out, Response.newBuilder().setChallenge(Challenge.newBuilder()
          .setNonce(com.google.protobuf.ByteString.copyFrom(new byte[32])).setProtocolVersion(1).setNodeId(0)).build());
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

  private static void write(DataOutputStream out, Response r) throws java.io.IOException {
    byte[] header = r.toByteArray();
    out.writeInt(4 + header.length);
    out.writeInt(header.length);
    out.write(header);
    out.flush();
  }
}
