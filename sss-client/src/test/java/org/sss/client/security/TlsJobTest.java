package org.sss.client.security;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;

import java.net.ServerSocket;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.TreeMap;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;
import org.sss.client.BulkWriter;
import org.sss.client.ScanOptions;
import org.sss.client.SssClient;
import org.sss.client.TableScan;
import org.sss.client.io.BulkIO;
import org.sss.client.job.Job;
import org.sss.client.job.TestJobs;
import org.sss.core.api.Pair;
import org.sss.core.api.Serdes;
import org.sss.core.cluster.ClusterSpec;
import org.sss.core.cluster.NodeAddress;
import org.sss.core.cluster.PartitionMap;
import org.sss.core.transport.SssException;
import org.sss.server.NodeConfig;
import org.sss.server.SssServer;

/** A job over TLS, between the client and the servers and between the servers (the shuffle). */
class TlsJobTest {
  @TempDir
  Path dir;

  @Test
  void jobOverTls_isCorrect_andPlaintextClientsGetNothing() throws Exception {
    long t0 = System.nanoTime();
    Path cert = dir.resolve("cert.pem");
    Path key = dir.resolve("key.pem");
    Process p = new ProcessBuilder("openssl", "req", "-x509", "-newkey", "rsa:2048", "-nodes", "-days", "1",
        "-subj", "/CN=localhost", "-keyout", key.toString(), "-out", cert.toString())
        .redirectErrorStream(true).start();
    p.getInputStream().readAllBytes();
    assertEquals(0, p.waitFor(), "openssl must create a certificate");
    List<NodeAddress> nodes = new ArrayList<>();
    for (int i = 0; i < 3; i++) {
      try (ServerSocket s = new ServerSocket(0)) {
        nodes.add(new NodeAddress(i, "127.0.0.1", s.getLocalPort()));
      }
    }
    ClusterSpec spec = new ClusterSpec(nodes, PartitionMap.roundRobin(12, 3), "tls-secret", true, cert.toString());
    List<SssServer> servers = new ArrayList<>();
    try {
      for (int i = 0; i < 3; i++) {
        servers.add(SssServer.start(new NodeConfig(spec, i, dir.resolve("node-" + i), null,
            NodeConfig.DEFAULT_MAX_FRAME, NodeConfig.DEFAULT_MAX_VALUE, 2, cert, key)));
      }
      try (SssClient client = SssClient.connect(spec)) {
        client.createTable("rows", BulkIO.textTable(), false);
        try (BulkWriter w = client.writer("rows")) {
          for (long i = 1; i <= 5000; i++) {
            w.put(Serdes.LONG.encodeKey(i), Serdes.STRING.encodeValue("r" + i));
          }
        }
        client.submit(Job.named("tls").input("rows", Serdes.LONG, Serdes.STRING)
            .map(TestJobs.ModTen.class, Serdes.LONG, Serdes.LONG)
            .reduce(TestJobs.SumLongs.class, Serdes.LONG, Serdes.LONG)
            .output("out").build()).await();
        Map<Long, Long> actual = new TreeMap<>();
        try (TableScan s = client.scan("out", ScanOptions.inKeyOrder())) {
          while (s.hasNext()) {
            Pair pair = s.next();
            actual.put(Serdes.LONG.decodeKey(pair.key()), Serdes.LONG.decodeValue(pair.value()));
          }
        }
        Map<Long, Long> expected = new TreeMap<>();
        for (long k = 0; k < 10; k++) {
          expected.put(k, 500L);
        }
        assertEquals(expected, actual);
      }
      System.err.println("TLS job part done after " + (System.nanoTime() - t0) / 1e9 + " s");
      ClusterSpec plain = new ClusterSpec(nodes, spec.partitionMap(), "tls-secret", false);
      try (SssClient client = SssClient.connect(plain)) {
        assertThrows(SssException.class, () -> client.channels().get(0));
      }
      System.err.println("plaintext part done after " + (System.nanoTime() - t0) / 1e9 + " s");
    } finally {
      servers.forEach(SssServer::close);
    }
  }
}
