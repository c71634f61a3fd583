package org.sss.cluster;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Random;
import java.util.StringTokenizer;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.Assumptions;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.MethodOrderer;
import org.junit.jupiter.api.Order;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.TestMethodOrder;
import org.sss.client.ScanOptions;
import org.sss.client.SssClient;
import org.sss.client.TableScan;
import org.sss.client.cli.SssCommand;
import org.sss.client.io.BulkIO;
import org.sss.client.job.Job;
import org.sss.client.job.JobFailedException;
import org.sss.client.job.RunningJob;
import org.sss.core.api.Pair;
import org.sss.core.api.Serdes;
import org.sss.examples.WordCount;

/**
 * Three hosts on network namespaces (docker/netns-cluster.sh): WordCount and the quick
 * benchmark over a real bridge, then a host cut off mid-job. Needs root; skipped otherwise.
 */
@TestMethodOrder(MethodOrderer.OrderAnnotation.class)
class NetnsClusterTest {
  static final Path SCRIPT = Path.of("..", "docker", "netns-cluster.sh").toAbsolutePath().normalize();
  static Path dir;
  static Path clusterFile;
  static Map<String, Long> expected = new HashMap<>();
  static Path text;

  @BeforeAll
  static void up() throws Exception {
    boolean root = "root".equals(System.getProperty("user.name"));
    Assumptions.assumeTrue(root, "network namespaces need root: skipping the namespace-host tests");
    Assumptions.assumeTrue(run("ip", "netns", "list") == 0, "no `ip netns` here: skipping the namespace-host tests");
    dir = Files.createTempDirectory("sss-netns-");
    assertEquals(0, run(SCRIPT.toString(), "up", "3", "--dir", dir.toString(), "--rate", "1gbit", "--heap", "512m"),
        "netns-cluster.sh up");
    clusterFile = dir.resolve("cluster.properties");
    StringBuilder sb = new StringBuilder();
    Random rnd = new Random(5);
    for (int i = 0; i < 20_000; i++) {
      for (int w = rnd.nextInt(10); w > 0; w--) {
        sb.append("word").append(rnd.nextInt(500)).append(' ');
      }
      sb.append('\n');
    }
    text = dir.resolve("in.txt");
    Files.writeString(text, sb, StandardCharsets.UTF_8);
    for (String line : sb.toString().split("\n")) {
      StringTokenizer t = new StringTokenizer(line);
      while (t.hasMoreTokens()) {
        expected.merge(t.nextToken(), 1L, Long::sum);
      }
    }
  }

  @AfterAll
  static void down() throws Exception {
    if (dir != null) {
      run(SCRIPT.toString(), "down", "--dir", dir.toString());
    }
  }

  static int run(String... cmd) throws IOException, InterruptedException {
    ProcessBuilder pb = new ProcessBuilder(cmd).inheritIO();
    pb.environment().put("SSS_SERVER_CP", System.getProperty("java.class.path"));
    return pb.start().waitFor();
  }

  static Map<String, Long> counts(SssClient client, String table) {
    Map<String, Long> out = new HashMap<>();
    try (TableScan s = client.scan(table, ScanOptions.anyOrder())) {
      while (s.hasNext()) {
        Pair p = s.next();
        out.put(Serdes.STRING.decodeKey(p.key()), Serdes.LONG.decodeValue(p.value()));
      }
    }
    return out;
  }

  @Test
  @Order(1)
  void wordcount_acrossNamespaceHosts() throws Exception {
    try (SssClient client = SssClient.connect(clusterFile)) {
      BulkIO.load(client, "text", text, n -> {});
      client.submit(WordCount.job("text", "counts", true)).await();
      assertEquals(expected, counts(client, "counts"));
    }
  }

  @Test
  @Order(2)
  void quickBenchmark_verifiesOnNamespaceHosts() {
    Path params = Path.of("params", "quick.properties").toAbsolutePath();
    int rc = SssCommand.commandLine().execute("--cluster", clusterFile.toString(), "bench", params.toString(),
        "--engines", "sss", "--out", dir.resolve("bench").toString());
    assertEquals(0, rc, "the quick benchmark (every run verifies its output) must pass");
  }

  @Test
  @Order(3)
  void hostCutOffMidJob_failsNamingIt_thenRerunIsCorrect() throws Exception {
    try (SssClient client = SssClient.connect(clusterFile)) {
      long before = client.count("text");
      RunningJob job = client.submit(Job.named("slow").input("text", Serdes.LONG, Serdes.STRING)
          .map(SlowTokenize.class, Serdes.STRING, Serdes.LONG)
          .reduce(WordCount.Sum.class, Serdes.STRING, Serdes.LONG)
          .output("slow-counts").overwrite().build());
      Thread.sleep(1500);
      assertEquals(0, run(SCRIPT.toString(), "link", "down", "1", "--dir", dir.toString()));
      long t0 = System.nanoTime();
      try {
        JobFailedException e = assertThrows(JobFailedException.class, job::await);
        double seconds = (System.nanoTime() - t0) / 1e9;
        assertTrue(seconds < 40, "the failure took " + seconds + " s");
        assertTrue(e.getMessage().contains("node 1"), e.getMessage());
      } finally {
        assertEquals(0, run(SCRIPT.toString(), "link", "up", "1", "--dir", dir.toString()));
      }
    }
    try (SssClient client = SssClient.connect(clusterFile)) {
      assertEquals(List.copyOf(expected.keySet()).size(), expected.size());
      assertEquals(20_000, client.count("text"), "no user data lost");
      client.submit(WordCount.job("text", "counts-again", true)).await();
      assertEquals(expected, counts(client, "counts-again"));
    }
  }

  /** WordCount's mapper, slowed down so that a job is still running when the link goes. */
  public static final class SlowTokenize implements org.sss.core.api.Mapper<Long, String, String, Long> {
    @Override
    public void map(Long line, String value, org.sss.core.api.Emitter<String, Long> out) throws Exception {
      Thread.sleep(1);
      StringTokenizer t = new StringTokenizer(value);
      while (t.hasMoreTokens()) {
        out.emit(t.nextToken(), 1L);
      }
    }
  }
}
