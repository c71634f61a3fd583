package org.sss.client.cli;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.io.BufferedReader;
import java.io.IOException;
import java.io.InputStreamReader;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.io.TempDir;
import org.sss.client.SssClient;
import org.sss.client.TableSpec;
import org.sss.core.api.Serdes;
import org.sss.core.cluster.ClusterSpec;
import org.sss.core.cluster.NodeAddress;
import org.sss.core.keys.PairTypes;
import org.sss.core.proto.DataType;
import org.sss.core.transport.Auth;

/**
 * {@code sss server --config FILE} in a process of its own, as a container runs it: it says
 * READY with its port, serves clients, stops (flushing) when asked over the wire and exits 0,
 * starts again on its data, and fails with one line and exit 1 on a bad node file.
 */
@Timeout(value = 120, unit = TimeUnit.SECONDS)
class ServerCommandTest {
  @TempDir
  Path dir;

  /** A running {@code sss server} process and what it printed. */
  record Server(Process process, List<String> out, CompletableFuture<String> ready) {}

  static Server launch(Path nodeFile) throws IOException {
    String javaBin = Path.of(System.getProperty("java.home"), "bin", "java").toString();
    Process p = new ProcessBuilder(javaBin, "-Xmx256m", "-cp", System.getProperty("java.class.path"),
        SssCommand.class.getName(), "server", "--config", nodeFile.toString())
        .redirectErrorStream(true).start();
    List<String> out = java.util.Collections.synchronizedList(new ArrayList<>());
    CompletableFuture<String> ready = new CompletableFuture<>();
    Thread reader = new Thread(() -> {
      try (BufferedReader r = new BufferedReader(new InputStreamReader(p.getInputStream(), StandardCharsets.UTF_8))) {
        for (String line = r.readLine(); line != null; line = r.readLine()) {
          out.add(line);
          if (line.startsWith("READY ")) {
            ready.complete(line);
          }
        }
      } catch (IOException ignored) {
        // the process ended
      } finally {
        ready.complete(null); // ended without READY
      }
    }, "server-output");
    reader.setDaemon(true);
    reader.start();
    return new Server(p, out, ready);
  }

  /** A one-node cluster file and node file in {@code dir}, the node on {@code port}. */
  static Path files(Path dir, int port, String secret) throws IOException {
    Files.createDirectories(dir);
    ClusterSpec.of(List.of(new NodeAddress(0, "127.0.0.1", port)), 4, secret).save(dir.resolve("cluster.properties"));
    Path node = dir.resolve("node.properties");
    Files.writeString(node, "cluster=cluster.properties\nnode.id=0\ndata.dir=data\nworker.threads=2\n");
    return node;
  }

  /**
   * Starts a server on a port that was free a moment ago. A process cannot be handed a socket
   * bound here, so the port is released before the server binds it: when another process took it
   * meanwhile the server says so and exits, and another port is tried.
   */
  static Server start(Path dir, String secret) throws Exception {
    List<String> attempts = new ArrayList<>();
    for (int attempt = 0; attempt < 3; attempt++) {
      int port;
      try (java.net.ServerSocket probe = new java.net.ServerSocket(0, 1, java.net.InetAddress.getLoopbackAddress())) {
        port = probe.getLocalPort();
      }
      Server s = launch(files(dir, port, secret));
      String ready = s.ready().get(60, TimeUnit.SECONDS);
      if (ready != null) {
        assertEquals("READY node 0 port " + port, ready);
        return s;
      }
      assertTrue(s.process().waitFor(30, TimeUnit.SECONDS));
      attempts.add(String.join("\n", s.out()));
      assertTrue(String.join("\n", s.out()).contains("cannot listen on 127.0.0.1:" + port),
          "the server ended without READY: " + s.out());
    }
    throw new AssertionError("no free port in 3 attempts: " + attempts);
  }

  @Test
  void server_servesUntilStopped_thenStartsAgainOnItsData() throws Exception {
    Path node = dir.resolve("node");
    String secret = Auth.randomSecret();
    Server first = start(node, secret);
    try {
      ClusterSpec spec = ClusterSpec.load(node.resolve("cluster.properties"));
      try (SssClient client = SssClient.connect(spec)) {
        client.createTable("t", TableSpec.of(PairTypes.of(DataType.STRING, DataType.STRING)), false);
        client.put("t", PairTypes.of(DataType.STRING, DataType.STRING), Serdes.STRING.encodeKey("k"), Serdes.STRING.encodeValue("v"));
      }
      assertEquals(0, CommandLineTest.sss("--cluster", node.resolve("cluster.properties").toString(), "ping").status());
      CommandLineTest.Run serving = CommandLineTest.sss("node", "state", "--config", node.resolve("node.properties")
          .toString(), "--serving");
      assertEquals(0, serving.status(), serving::toString);
      assertEquals("running", serving.out().strip(), serving::toString);
      CommandLineTest.Run stop = CommandLineTest.sss("node", "stop", "--config", node.resolve("node.properties").toString());
      assertEquals(0, stop.status(), stop::toString);
      assertEquals("node 0: stopped, 1 table(s) flushed", stop.out().strip(), stop::toString);
      CommandLineTest.Run stopped = CommandLineTest.sss("node", "state", "--config", node.resolve("node.properties")
          .toString(), "--serving");
      assertEquals(3, stopped.status(), stopped::toString);
      assertEquals("stopped", stopped.out().strip(), stopped::toString);
      assertTrue(first.process().waitFor(30, TimeUnit.SECONDS), "the server process ends after a stop");
      assertEquals(0, first.process().exitValue(), String.join("\n", first.out()));
    } finally {
      first.process().destroyForcibly();
    }

    Server second = launch(node.resolve("node.properties"));
    try {
      assertTrue(second.ready().get(60, TimeUnit.SECONDS) != null, String.join("\n", second.out()));
      try (SssClient client = SssClient.connect(node.resolve("cluster.properties"))) {
        assertEquals("v", Serdes.STRING.decodeValue(client.get("t", Serdes.STRING.encodeKey("k")).orElseThrow()),
            "the data written before the stop");
      }
      CommandLineTest.Run stop = CommandLineTest.sss("node", "stop", "--config", node.resolve("node.properties").toString());
      assertEquals(0, stop.status(), stop::toString);
      assertTrue(second.process().waitFor(30, TimeUnit.SECONDS));
      assertEquals(0, second.process().exitValue());
    } finally {
      second.process().destroyForcibly();
    }
  }

  @Test
  void server_badNodeFile_failsWithOneLineAndExitOne() throws Exception {
    Path node = files(dir.resolve("bad"), 9, "s");
    Files.writeString(node, "cluster=cluster.properties\nnode.id=0\ndata.dir=data\nno.such.key=1\n");
    Server s = launch(node);
    assertTrue(s.process().waitFor(60, TimeUnit.SECONDS));
    assertEquals(1, s.process().exitValue(), String.join("\n", s.out()));
    assertEquals(null, s.ready().get(10, TimeUnit.SECONDS), "never ready");
    List<String> said = s.out().stream().filter(l -> l.startsWith("sss server: ")).toList();
    assertEquals(1, said.size(), String.join("\n", s.out()));
    assertTrue(said.get(0).contains("unknown keys [no.such.key]"), said.get(0));
    assertTrue(Files.notExists(dir.resolve("bad/data")), "no store was created");
  }
}
