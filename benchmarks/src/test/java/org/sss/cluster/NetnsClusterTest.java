package org.sss.cluster;

import static org.junit.jupiter.api.Assertions.assertEquals;
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
import org.junit.jupiter.api.Tag;
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
import org.sss.client.job.RunningJob;
import org.sss.core.api.Pair;
import org.sss.core.api.Serdes;
import org.sss.examples.WordCount;

/**
 * Three hosts on network namespaces (docker/netns-cluster.sh): WordCount and the quick
 * benchmark over a real bridge, then a host cut off mid-job: the job runs again on the others. Needs root with the right to create
 * namespaces and links (NET_ADMIN); skipped otherwise.
 */
@Tag("serial") // timing it checks (decisions after 5 s of silence, reruns, synced writes): alone on the cores
@TestMethodOrder(MethodOrderer.OrderAnnotation.class)
class NetnsClusterTest {
  static final Path SCRIPT = Path.of("..", "docker", "netns-cluster.sh").toAbsolutePath().normalize();
  static Path dir;
  static Path clusterFile;
  static Map<String, Long> expected = new HashMap<>();
  static Path text;

  @BeforeAll
  static void up() throws Exception {
    String missing = namespacesUnavailable();
    Assumptions.assumeTrue(missing == null, () -> "skipping the namespace-host tests: " + missing);
    dir = Files.createTempDirectory("sss-netns-");
    assertEquals(0, run(SCRIPT.toString(), "up", "3", "--dir", dir.toString(), "--rate", "1gbit", "--heap", "512m"),
        "netns-cluster.sh up");
    clusterFile = dir.resolve("cluster.properties");
    awaitServing(); // `up` returns once every node answers; its view may not be confirmed yet
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
    expected = hadoopWordCount(text, dir.resolve("hadoop"));
  }

  /**
   * What Hadoop's own WordCount ({@code org.apache.hadoop.examples.WordCount}, the local job
   * runner, one reduce task) counts in {@code in}: every WordCount here must give its output.
   */
  static Map<String, Long> hadoopWordCount(Path in, Path work) throws Exception {
    org.apache.hadoop.conf.Configuration conf = new org.sss.bench.classic.HadoopClassic(2, work).configuration();
    Path out = work.resolve("out");
    org.apache.hadoop.mapreduce.Job job = org.sss.bench.classic.HadoopClassic.wordCountJob(conf,
        new org.apache.hadoop.fs.Path(in.toUri()), new org.apache.hadoop.fs.Path(out.toUri()), 1);
    assertTrue(job.waitForCompletion(false), "Hadoop's WordCount failed");
    Map<String, Long> counts = new HashMap<>();
    for (String line : Files.readAllLines(out.resolve("part-r-00000"), StandardCharsets.UTF_8)) {
      int tab = line.lastIndexOf('\t');
      counts.put(line.substring(0, tab), Long.parseLong(line.substring(tab + 1)));
    }
    assertTrue(counts.size() > 400, "words counted by Hadoop: " + counts.size());
    return counts;
  }

  /**
   * Waits until every node serves with a view confirmed by the members: a load committed before
   * that is refused by a node whose store the members have not recorded yet.
   */
  static void awaitServing() throws InterruptedException {
    long deadline = System.nanoTime() + 60_000_000_000L;
    try (SssClient client = SssClient.connect(clusterFile)) {
      int nodes = org.sss.core.cluster.ClusterSpec.load(clusterFile).nodeCount();
      for (int i = 0; i < nodes; i++) {
        while (true) {
          String why;
          try {
            org.sss.client.MembershipView v = client.view(i);
            if (v.serving() && v.confirmedMillisAgo() < 2_000 && client.view().whole()) {
              break;
            }
            why = v.toString();
          } catch (RuntimeException e) {
            why = e.getMessage();
          }
          assertTrue(System.nanoTime() < deadline, "node " + i + " did not serve within 60 s: " + why);
          Thread.sleep(100);
        }
      }
    } catch (IOException e) {
      throw new java.io.UncheckedIOException(e);
    }
  }

  @AfterAll
  static void down() throws Exception {
    if (dir != null) {
      run(SCRIPT.toString(), "down", "--dir", dir.toString());
      // the nodes' data (hundreds of MB) must not pile up in the temporary directory run after run
      try (java.util.stream.Stream<Path> files = Files.walk(dir)) {
        files.sorted(java.util.Comparator.reverseOrder()).forEach(f -> f.toFile().delete());
      }
    }
  }

  /**
   * Null when this process can do what netns-cluster.sh does (create a network namespace, a
   * bridge, and a veth pair with one end in the namespace), else why not. Listing namespaces is
   * not enough: a root container without NET_ADMIN lists them but may not create links.
   */
  static String namespacesUnavailable() throws IOException, InterruptedException {
    if (!"root".equals(System.getProperty("user.name"))) {
      return "network namespaces need root";
    }
    String tag = "sssq" + ProcessHandle.current().pid() % 100_000; // interface names: at most 15 characters
    String ns = tag + "ns";
    String bridge = tag + "br";
    String veth = tag + "v";
    List<String> problems = new java.util.ArrayList<>();
    try {
      probe(problems, "ip", "netns", "add", ns);
      if (problems.isEmpty()) {
        probe(problems, "ip", "link", "add", bridge, "type", "bridge");
      }
      if (problems.isEmpty()) {
        probe(problems, "ip", "link", "add", veth, "type", "veth", "peer", "name", "eth0", "netns", ns);
      }
    } finally {
      quiet("ip", "link", "del", veth);
      quiet("ip", "link", "del", bridge);
      quiet("ip", "netns", "del", ns);
    }
    return problems.isEmpty() ? null : String.join("; ", problems);
  }

  private static void probe(List<String> problems, String... cmd) throws IOException, InterruptedException {
    Process p = new ProcessBuilder(cmd).redirectErrorStream(true).start();
    String output = new String(p.getInputStream().readAllBytes(), StandardCharsets.UTF_8).strip();
    if (p.waitFor() != 0) {
      problems.add("`" + String.join(" ", cmd) + "` refused: " + output);
    }
  }

  private static void quiet(String... cmd) throws IOException, InterruptedException {
    Process p = new ProcessBuilder(cmd).redirectErrorStream(true).start();
    p.getInputStream().readAllBytes();
    p.waitFor();
  }

  static int run(String... cmd) throws IOException, InterruptedException {
    ProcessBuilder pb = new ProcessBuilder(cmd).inheritIO();
    pb.environment().put("SSS_SERVER_CP", System.getProperty("java.class.path"));
    return pb.start().waitFor();
  }

  static long scanCount(SssClient client, String table) {
    long n = 0;
    try (TableScan s = client.scan(table, ScanOptions.anyOrder())) {
      while (s.hasNext()) {
        s.next();
        n++;
      }
    }
    return n;
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
  void quickBenchmark_verifiesOnNamespaceHosts() throws java.io.IOException {
    // the quick benchmark's largest point of each workload (and the shuffle's with and without
    // its combiner), each run once: what is tested is that each run's output verifies on
    // namespace hosts, not how fast it is (every point runs embedded in README's main command)
    String quick = Files.readString(Path.of("params", "quick.properties").toAbsolutePath());
    Path params = dir.resolve("quick-once.properties");
    Files.writeString(params, quick.replaceAll("(?m)^repeats=.*$", "repeats=1").replaceAll("(?m)^warmups=.*$",
        "warmups=0").replaceAll("(?m)^(\\S+\\.sweep\\.\\S+)=.*,([^,\\s]+)[ \\t]*$", "$1=$2"));
    int rc = SssCommand.commandLine().execute("--cluster", clusterFile.toString(), "bench", params.toString(),
        "--engines", "sss", "--out", dir.resolve("bench").toString());
    assertEquals(0, rc, "the quick benchmark (every run verifies its output) must pass");
  }

  @Test
  @Order(3)
  void hostCutOffMidJob_jobRunsAgainOnTheOthers_thenTheHostCatchesUp() throws Exception {
    Path gate = Files.createDirectories(dir.resolve("gate"));
    try (SssClient client = SssClient.connect(clusterFile); SssClient loader = SssClient.connect(clusterFile)) {
      org.sss.core.keys.PairTypes types = BulkIO.textTable().types();
      loader.createTable("loaded", BulkIO.textTable(), false);
      java.util.concurrent.CountDownLatch cut = new java.util.concurrent.CountDownLatch(1);
      // a bulk load under way when the link goes: it goes on to the copies in sync
      java.util.concurrent.CompletableFuture<Long> load = loadPausedAtAQuarter(loader, "loaded", types, cut);
      RunningJob job = submitGated(client, "gated", "gated-counts", gate);
      try {
        // node 1 maps, and the job cannot end before the gate opens: the link goes mid-job
        awaitMapping(gate, 1);
        assertEquals(0, run(SCRIPT.toString(), "link", "down", "1", "--dir", dir.toString()));
        cut.countDown();
        Files.writeString(gate.resolve("open"), "");
        long t0 = System.nanoTime();
        // the attempt with node 1 fails; once the others decide it out, the job runs again without it
        org.sss.client.job.JobResult result = job.await();
        double seconds = (System.nanoTime() - t0) / 1e9;
        System.out.println("job after the cut: " + seconds + " s");
        // about 25 s here: 10 s until the stage gives node 1 up, the members' decision (about 8 s
        // after the cut), the rerun. The client's reads of the view wait at most a second for
        // the cut host once another node has answered (they waited out their timeout at each
        // read before, 40-75 s in all)
        assertTrue(seconds < 60, "the job took " + seconds + " s after the cut");
        assertEquals(1L, result.counter(org.sss.client.job.JobResult.RERUNS_COUNTER), result.counters().toString());
        assertEquals(expected, counts(client, "gated-counts"), "WordCount's answer, computed without node 1");
        // writes go on while node 1 is cut off, to the copies in sync
        client.put("text", BulkIO.textTable().types(), Serdes.LONG.encodeKey(1_000_000L),
            Serdes.STRING.encodeValue("written while node 1 was cut off"));
        // a writer on node 1's side of the cut, sending node 1 (all it reaches) a pair of a
        // partition it holds, at node 1's epoch: node 1, without the majority, refuses it
        Process cutOffWriter = new ProcessBuilder(SCRIPT.toString(), "exec", "1", "--dir", dir.toString(), "--",
            "timeout", "60", Path.of(System.getProperty("java.home"), "bin", "java").toString(), "-cp",
            System.getProperty("java.class.path"), CutSideWriter.class.getName(), clusterFile.toString(), "1", "text",
            String.valueOf(cutSideKey()), "written on the cut-off side").redirectErrorStream(true).start();
        String said = new String(cutOffWriter.getInputStream().readAllBytes(), StandardCharsets.UTF_8);
        int exit = cutOffWriter.waitFor();
        System.out.println("the cut-off side's write: exit " + exit + ": " + said.strip());
        assertEquals(3, exit, "refused (3), not acknowledged (0) nor failed otherwise: " + said);
        assertTrue(said.contains("cannot confirm the cluster's membership with a majority"), said);
        assertEquals(LOADED, load.get(120, java.util.concurrent.TimeUnit.SECONDS), "every loaded pair acknowledged once");
        assertEquals(LOADED, client.count("loaded"), "the load, read while node 1 is cut off");
      } finally {
        cut.countDown();
        Files.writeString(gate.resolve("open"), "");
        assertEquals(0, run(SCRIPT.toString(), "link", "up", "1", "--dir", dir.toString()));
      }
    }
    try (SssClient client = SssClient.connect(clusterFile)) {
      // cut off for longer than 8 s, node 1 was decided out: it catches up before it serves
      long deadline = System.nanoTime() + 90_000_000_000L;
      while (!client.view().whole()) {
        assertTrue(System.nanoTime() < deadline, "node 1 did not catch up within 90 s: " + client.view());
        Thread.sleep(200);
      }
      assertEquals(20_001, client.count("text"), "no user data lost, the write made during the cut kept");
      assertTrue(client.get("text", Serdes.LONG.encodeKey(cutSideKey())).isEmpty(),
          "the cut-off side's write is on no copy");
      assertCopiesAgree(client, "text");
      Map<Long, String> loaded = new java.util.TreeMap<>();
      try (TableScan scan = client.scan("loaded", ScanOptions.anyOrder())) {
        while (scan.hasNext()) {
          Pair p = scan.next();
          loaded.put(Serdes.LONG.decodeKey(p.key()), Serdes.STRING.decodeValue(p.value()));
        }
      }
      assertEquals(LOADED, loaded.size(), "the load, read after node 1 caught up");
      for (long i = 0; i < LOADED; i += 997) {
        assertEquals("loaded " + i, loaded.get(i));
      }
      assertEquals(expected, counts(client, "gated-counts"));
      client.delete("text", List.of(Serdes.LONG.encodeKey(1_000_000L)));
      client.submit(WordCount.job("text", "counts-again", true)).await();
      assertEquals(expected, counts(client, "counts-again"));
    }
  }

  /** Pairs a bulk load writes while node 1's link goes down. */
  static final long LOADED = 200_000;
  /** The key a writer on the cut-off side tries to write: the first from 2,000,000 of which node 1 holds a copy. */
  static long cutSideKey() throws IOException {
    org.sss.core.cluster.ClusterSpec spec = org.sss.core.cluster.ClusterSpec.load(clusterFile);
    for (long key = 2_000_000L; ; key++) {
      if (spec.placement().replicasOf(spec.partitionMap().partitionOf(Serdes.LONG.encodeKey(key))).contains(1)) {
        return key;
      }
    }
  }

  /** Every partition's copies hold the same pairs ({@code table verify}'s check). */
  static void assertCopiesAgree(SssClient client, String table) {
    org.sss.client.cluster.CopyCheck.Report r = org.sss.client.cluster.CopyCheck.run(client, table);
    assertEquals(List.of(), r.differing(), "copies of '" + table + "' that differ");
    assertEquals(List.of(), r.incomplete(), "copies of '" + table + "' not compared");
  }

  /**
   * kill -9 of a host's server while a bulk load and a WordCount run: the job runs again on the
   * others and gives Hadoop's output, every acknowledged pair is read while the node is down,
   * and the node, started again, catches up: counts are exact and its copies agree.
   */
  @Test
  @Order(4)
  void hostKilledMidLoadAndMidJob_jobGivesHadoopsOutput_thenTheHostRestartsAndCatchesUp() throws Exception {
    Path gate = Files.createDirectories(dir.resolve("gate-kill"));
    try (SssClient client = SssClient.connect(clusterFile); SssClient loader = SssClient.connect(clusterFile)) {
      org.sss.core.keys.PairTypes types = BulkIO.textTable().types();
      long rows = client.count("text");
      // a node that does not lead the members: killing the leader leaves the others unable to
      // confirm their view until a new one is elected, and reads may be refused for that while
      int victim = client.view().leader() == 2 ? 1 : 2;
      loader.createTable("loaded-kill", BulkIO.textTable(), false);
      java.util.concurrent.CountDownLatch killed = new java.util.concurrent.CountDownLatch(1);
      // a quarter sent before the kill, the rest after
      java.util.concurrent.CompletableFuture<Long> load = loadPausedAtAQuarter(loader, "loaded-kill", types, killed);
      RunningJob job = submitGated(client, "gated-kill", "killed-counts", gate);
      try {
        awaitMapping(gate, victim);
        assertEquals(0, run(SCRIPT.toString(), "kill", String.valueOf(victim), "--dir", dir.toString()));
        // at once, before the members decide the node down: reads go to the other copies
        long t0 = System.nanoTime();
        assertEquals(rows, client.count("text"), "count with node " + victim + " just killed");
        assertTrue(client.listTables().stream().anyMatch(t -> t.name().equals("text")), "table list, node just killed");
        assertEquals(rows, scanCount(client, "text"), "scan with node " + victim + " just killed");
        System.out.println("reads right after the kill took " + (System.nanoTime() - t0) / 1_000_000 + " ms; view: "
            + client.view());
        killed.countDown();
        Files.writeString(gate.resolve("open"), "");
        org.sss.client.job.JobResult result = job.await();
        assertEquals(1L, result.counter(org.sss.client.job.JobResult.RERUNS_COUNTER), result.counters().toString());
        assertEquals(expected, counts(client, "killed-counts"), "Hadoop's WordCount output, computed without the node");
        assertEquals(LOADED, load.get(120, java.util.concurrent.TimeUnit.SECONDS), "every loaded pair acknowledged once");
        // read while the node is down: every acknowledged pair, from the copies that survive
        assertEquals(LOADED, client.count("loaded-kill"));
        for (long i = 0; i < LOADED; i += 1_999) {
          assertEquals("loaded " + i, Serdes.STRING.decodeValue(client.get("loaded-kill", Serdes.LONG.encodeKey(i))
              .orElseThrow()));
        }
        assertEquals(rows, client.count("text"));
      } finally {
        killed.countDown();
        Files.writeString(gate.resolve("open"), "");
      }
      assertEquals(0, run(SCRIPT.toString(), "restart", String.valueOf(victim), "--dir", dir.toString()));
      long deadline = System.nanoTime() + 90_000_000_000L;
      while (!client.view().whole()) {
        assertTrue(System.nanoTime() < deadline, "node " + victim + " did not catch up within 90 s: " + client.view());
        Thread.sleep(200);
      }
      assertEquals(LOADED, client.count("loaded-kill"), "after node " + victim + " caught up");
      assertEquals(rows, client.count("text"));
      assertEquals(expected, counts(client, "killed-counts"));
      assertCopiesAgree(client, "loaded-kill");
      assertCopiesAgree(client, "killed-counts");
    }
  }

  /**
   * Bulk-loads {@link #LOADED} lines into {@code table} in the background, waiting at a quarter
   * for {@code resume}; completes with the pairs the nodes acknowledged.
   */
  private static java.util.concurrent.CompletableFuture<Long> loadPausedAtAQuarter(
      SssClient loader, String table, org.sss.core.keys.PairTypes types, java.util.concurrent.CountDownLatch resume) {
    return java.util.concurrent.CompletableFuture.supplyAsync(() -> {
      try (org.sss.client.BulkWriter w = loader.writer(table, types)) {
        for (long i = 0; i < LOADED; i++) {
          if (i == LOADED / 4) {
            resume.await();
          }
          w.put(Serdes.LONG.encodeKey(i), Serdes.STRING.encodeValue("loaded " + i));
        }
        w.flush();
        return w.acknowledged();
      } catch (Exception e) {
        throw new java.util.concurrent.CompletionException(e);
      }
    });
  }

  /** WordCount of {@code text} whose map tasks wait at {@code gate} (see {@link GatedTokenize}). */
  private static RunningJob submitGated(SssClient client, String name, String output, Path gate) {
    return client.submit(Job.named(name).input("text", Serdes.LONG, Serdes.STRING)
        .map(GatedTokenize.class, Serdes.STRING, Serdes.LONG)
        .reduce(WordCount.Sum.class, Serdes.STRING, Serdes.LONG)
        .output(output).overwrite().config(GatedTokenize.GATE, gate.toString()).build());
  }

  /** Waits (60 s at most) until a gated map task has started on {@code node}. */
  private static void awaitMapping(Path gate, int node) throws IOException, InterruptedException {
    long deadline = System.nanoTime() + 60_000_000_000L;
    while (!startedOn(gate, node)) {
      assertTrue(System.nanoTime() < deadline, "node " + node + " did not start mapping within 60 s");
      Thread.sleep(20);
    }
  }

  static boolean startedOn(Path gate, int node) throws IOException {
    try (var files = Files.list(gate)) {
      return files.anyMatch(f -> f.getFileName().toString().startsWith("started node " + node + " "));
    }
  }

  /**
   * WordCount's mapper behind a gate: each task announces itself with the file
   * {@code GATE/started node N partition P}, then waits (at most 120 s) until {@code GATE/open}
   * exists, so that the job is running for as long as the test needs.
   */
  public static final class GatedTokenize implements org.sss.core.api.Mapper<Long, String, String, Long> {
    static final String GATE = "gate.dir";

    @Override
    public void setup(org.sss.core.api.TaskContext context) throws Exception {
      Path gate = Path.of(context.get(GATE, "gate-directory-not-configured"));
      Files.createFile(gate.resolve("started node " + context.nodeId() + " partition " + context.partition() + " "
          + System.nanoTime())); // a job run again maps the partition again
      long deadline = System.nanoTime() + 120_000_000_000L;
      while (!Files.exists(gate.resolve("open")) && System.nanoTime() < deadline) {
        Thread.sleep(10); // an abort interrupts this
      }
    }

    @Override
    public void map(Long line, String value, org.sss.core.api.Emitter<String, Long> out) {
      StringTokenizer t = new StringTokenizer(value);
      while (t.hasMoreTokens()) {
        out.emit(t.nextToken(), 1L);
      }
    }
  }
}
