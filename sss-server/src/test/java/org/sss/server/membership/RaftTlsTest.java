package org.sss.server.membership;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.TimeUnit;
import javax.net.ssl.X509TrustManager;
import org.apache.ratis.RaftConfigKeys;
import org.apache.ratis.client.RaftClient;
import org.apache.ratis.conf.Parameters;
import org.apache.ratis.conf.RaftProperties;
import org.apache.ratis.protocol.RaftGroup;
import org.apache.ratis.protocol.RaftPeer;
import org.apache.ratis.protocol.RaftPeerId;
import org.apache.ratis.retry.RetryPolicies;
import org.apache.ratis.rpc.SupportedRpcType;
import org.apache.ratis.util.TimeDuration;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.io.TempDir;
import org.sss.core.cluster.ClusterSpec;
import org.sss.core.cluster.NodeAddress;
import org.sss.core.cluster.PartitionMap;
import org.sss.core.proto.ViewAnswer;
import org.sss.server.EmbeddedServers;
import org.sss.server.NodeConfig;
import org.sss.server.NodeListener;
import org.sss.server.SssServer;

/**
 * In a cluster speaking TLS the members' Raft traffic is mutual TLS: three nodes whose
 * certificate names {@code localhost} (reached at 127.0.0.1) elect a leader and confirm their
 * views through it; a stranger reaching a Raft port gets no administration request through,
 * whether it speaks plaintext, TLS without a certificate, or TLS with a certificate the cluster
 * does not trust; and the members go on deciding.
 */
@Timeout(value = 120, unit = TimeUnit.SECONDS)
class RaftTlsTest {
  @TempDir
  static Path certs;
  static Path cert;
  static Path key;
  static Path strangerCert;
  static Path strangerKey;

  @TempDir
  Path dir;

  @BeforeAll
  static void certificates() throws Exception {
    cert = certs.resolve("cert.pem");
    key = certs.resolve("key.pem");
    strangerCert = certs.resolve("stranger-cert.pem");
    strangerKey = certs.resolve("stranger-key.pem");
    selfSigned(cert, key);
    selfSigned(strangerCert, strangerKey);
  }

  private static void selfSigned(Path certFile, Path keyFile) throws Exception {
    Process p = new ProcessBuilder("openssl", "req", "-x509", "-newkey", "ec", "-pkeyopt", "ec_paramgen_curve:prime256v1", "-nodes", "-days", "1",
        "-subj", "/CN=localhost", "-keyout", keyFile.toString(), "-out", certFile.toString())
        .redirectErrorStream(true).start();
    String output = new String(p.getInputStream().readAllBytes());
    assertEquals(0, p.waitFor(), "openssl must create a certificate: " + output);
  }

  @Test
  void membersMeetOverMutualTls_andStrangersGetNoRequestThrough() throws Exception {
    List<NodeListener> sockets = EmbeddedServers.bindAll(3, "127.0.0.1");
    ClusterSpec spec = MembershipTest.threeNodeSpec(sockets, "raft-tls-secret", true, cert.toString());
    List<SssServer> servers = EmbeddedServers.startAll(sockets, i -> new NodeConfig(spec, i, dir.resolve("node-" + i),
        null, NodeConfig.DEFAULT_MAX_FRAME, NodeConfig.DEFAULT_MAX_VALUE, 2, cert, key));
    try {
      awaitConfirmed(servers);
      RaftPeerId node0 = RaftPeerId.valueOf("node0");
      // plaintext, TLS trusting the cluster but showing no certificate, TLS with an untrusted one
      ClusterSpec trustingTheCluster = spec;
      List<Parameters> strangers = new ArrayList<>();
      strangers.add(null);
      X509TrustManager clusters = RaftTls.trusted(Path.of(trustingTheCluster.tlsTrust()));
      strangers.add(RaftTls.parameters(clusters, null, null));
      strangers.add(RaftTls.parameters(clusters, strangerCert, strangerKey)); // unchecked: the node's own check refuses it
      for (Parameters tls : strangers) {
        try (RaftClient stranger = client(spec, tls)) {
          assertThrows(Exception.class, () -> stranger.getGroupManagementApi(node0).list(),
              "a stranger listed the groups of node 0" + (tls == null ? " in plaintext" : " over TLS"));
        }
      }
      // a member's own credentials do get through: the refusals above were the certificates'
      try (RaftClient member = client(spec, RaftTls.parameters(spec, cert, key))) {
        assertEquals(1, member.getGroupManagementApi(node0).list().getGroupIds().size());
      }
      awaitConfirmed(servers); // the members go on deciding: every view confirmed again since
    } finally {
      servers.forEach(SssServer::close);
    }
  }

  @Test
  void aPemWithoutCertificates_isRefusedNamingTheFile_andOtherBlocksInTheTrustAreSkipped() throws Exception {
    Path empty = Files.writeString(certs.resolve("empty.pem"), "");
    IllegalArgumentException e = assertThrows(IllegalArgumentException.class, () -> RaftTls.trusted(empty));
    assertTrue(e.getMessage().contains(empty.toString()), e.getMessage());
    // a trust file holding a key beside the certificate, which SSS's own TLS reads
    Path mixed = Files.writeString(certs.resolve("mixed.pem"), Files.readString(key) + Files.readString(cert));
    RaftTls.checkTakenAsClient(RaftTls.trusted(mixed), cert, mixed.toString());
  }

  /**
   * A node certificate an authority made for servers only works for SSS's own connections but
   * not for the members' mutual TLS: refused at start, naming it, rather than members that never
   * meet. One that also allows client authentication is taken.
   */
  @Test
  void aCertificateForServersOnly_isRefusedNamingIt() throws Exception {
    Path caKey = certs.resolve("ca-key.pem");
    Path ca = certs.resolve("ca.pem");
    run("openssl", "req", "-x509", "-newkey", "ec", "-pkeyopt", "ec_paramgen_curve:prime256v1", "-nodes", "-days", "1", "-subj", "/CN=sss-test-ca",
        "-addext", "basicConstraints=critical,CA:TRUE", "-addext", "keyUsage=critical,keyCertSign",
        "-keyout", caKey.toString(), "-out", ca.toString());
    Path serverOnly = signed(ca, caKey, "server-only", "extendedKeyUsage=serverAuth");
    Path both = signed(ca, caKey, "both", "extendedKeyUsage=serverAuth,clientAuth");
    ClusterSpec spec = new ClusterSpec(List.of(new NodeAddress(0, "127.0.0.1", 7070)), PartitionMap.roundRobin(4, 1),
        "raft-tls-secret", true, ca.toString()); // what the membership reads of it: tls and the trust
    IllegalArgumentException e = assertThrows(IllegalArgumentException.class,
        () -> RaftTls.parameters(spec, serverOnly, certs.resolve("server-only-key.pem")));
    assertTrue(e.getMessage().contains("tls.cert " + serverOnly), e.getMessage());
    assertTrue(e.getCause() != null && e.getCause().getMessage().contains("client authentication"), e.getMessage());
    RaftTls.parameters(spec, both, certs.resolve("both-key.pem")); // taken
  }

  /** A certificate for {@code localhost} that {@code ca} signed with extension {@code ext}; its key beside it. */
  private static Path signed(Path ca, Path caKey, String name, String ext) throws Exception {
    Path key = certs.resolve(name + "-key.pem");
    Path csr = certs.resolve(name + ".csr");
    Path out = certs.resolve(name + ".pem");
    Path extFile = Files.writeString(certs.resolve(name + ".ext"), ext + "\n");
    run("openssl", "req", "-newkey", "ec", "-pkeyopt", "ec_paramgen_curve:prime256v1", "-nodes", "-subj", "/CN=localhost", "-keyout", key.toString(),
        "-out", csr.toString());
    run("openssl", "x509", "-req", "-in", csr.toString(), "-CA", ca.toString(), "-CAkey", caKey.toString(),
        "-CAcreateserial", "-days", "1", "-extfile", extFile.toString(), "-out", out.toString());
    return out;
  }

  private static void run(String... command) throws Exception {
    Process p = new ProcessBuilder(command).redirectErrorStream(true).start();
    String output = new String(p.getInputStream().readAllBytes());
    assertEquals(0, p.waitFor(), String.join(" ", command) + ": " + output);
  }

  /** Every node serving on a view a majority confirmed within the last second. */
  private static void awaitConfirmed(List<SssServer> servers) throws InterruptedException {
    long end = System.nanoTime() + TimeUnit.SECONDS.toNanos(60);
    List<ViewAnswer> views = new ArrayList<>();
    while (System.nanoTime() < end) {
      views.clear();
      servers.forEach(s -> views.add(s.membershipView()));
      if (views.stream().allMatch(v -> v.getServing() && v.getLeader() >= 0 && v.getConfirmedMillisAgo() < 1_000)) {
        return;
      }
      Thread.sleep(100);
    }
    throw new AssertionError("the members never confirmed every view over TLS: " + views);
  }

  private static RaftClient client(ClusterSpec spec, Parameters tls) {
    List<RaftPeer> peers = new ArrayList<>();
    for (int v : Membership.voters(spec.nodeCount())) {
      peers.add(RaftPeer.newBuilder().setId("node" + v).setAddress(spec.raftAddress(v).hostPort()).build());
    }
    RaftProperties p = new RaftProperties();
    RaftConfigKeys.Rpc.setType(p, SupportedRpcType.GRPC);
    org.apache.ratis.client.RaftClientConfigKeys.Rpc.setRequestTimeout(p, TimeDuration.valueOf(3, TimeUnit.SECONDS));
    return RaftClient.newBuilder().setProperties(p).setParameters(tls)
        .setRaftGroup(RaftGroup.valueOf(Membership.groupId(spec), peers))
        .setRetryPolicy(RetryPolicies.noRetry()).build();
  }
}
