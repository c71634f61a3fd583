package org.sss.client.job;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.TreeMap;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.io.TempDir;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;
import org.sss.client.BulkWriter;
import org.sss.client.ScanOptions;
import org.sss.client.SssClient;
import org.sss.client.TableScan;
import org.sss.client.TableSpec;
import org.sss.client.TableStatus;
import org.sss.client.cluster.SssCluster;
import org.sss.client.io.BulkIO;
import org.sss.core.api.Pair;
import org.sss.core.api.Serdes;
import org.sss.core.keys.PairTypes;
import org.sss.core.proto.ErrorCode;

/** Jobs that fail, are cancelled, run concurrently, or chain stages — each followed by a correct job. */
@Timeout(value = 5, unit = TimeUnit.MINUTES) // a hang fails the test instead of the build
class JobLifecycleTest {
  static final int ROWS = 10_000;
  static SssCluster cluster;
  static SssClient client;

  @BeforeAll
  static void start() throws Exception {
    cluster = SssCluster.embedded(3);
    client = cluster.client();
    client.createTable("rows", BulkIO.textTable(), false);
    try (BulkWriter w = client.writer("rows", BulkIO.textTable().types())) {
      for (long i = 1; i <= ROWS; i++) {
        w.put(Serdes.LONG.encodeKey(i), Serdes.STRING.encodeValue("row " + i));
      }
    }
  }

  @AfterAll
  static void stop() {
    client.close();
    cluster.close();
  }

  static Job modTen(String output) {
    return Job.named("modten").input("rows", Serdes.LONG, Serdes.STRING)
        .map(TestJobs.ModTen.class, Serdes.LONG, Serdes.LONG)
        .combine(TestJobs.SumLongs.class)
        .reduce(TestJobs.CountingSum.class, Serdes.LONG, Serdes.LONG)
        .output(output).overwrite().build();
  }

  static Map<Long, Long> read(String table) {
    Map<Long, Long> out = new TreeMap<>();
    try (TableScan s = client.scan(table, ScanOptions.inKeyOrder())) {
      while (s.hasNext()) {
        Pair p = s.next();
        out.put(Serdes.LONG.decodeKey(p.key()), Serdes.LONG.decodeValue(p.value()));
      }
    }
    return out;
  }

  static void assertModTenCorrect(String table) {
    Map<Long, Long> expected = new TreeMap<>();
    for (long i = 1; i <= ROWS; i++) {
      expected.merge(i % 10, 1L, Long::sum);
    }
    assertEquals(expected, read(table));
  }

  static void assertNoTemporaryTables() {
    for (TableStatus t : client.listTables()) {
      assertTrue(!t.name().startsWith("sss-tmp-"), "left behind: " + t.name());
    }
  }

  @Test
  void submit_countsAndCounters() {
    JobResult r = client.submit(modTen("out-counters")).await();
    assertModTenCorrect("out-counters");
    assertEquals(10, r.counter("keys"));
    assertEquals(ROWS, r.stages().get(0).recordsIn());
    assertEquals(ROWS, r.stages().get(0).recordsOut());
    assertTrue(r.stages().get(0).recordsShuffled() <= 10 * 3 * 24, "combiner must shrink the shuffle");
    assertNoTemporaryTables();
  }

  @Test
  void outputCompression_isTheOutputTablesOwnAndDefaultsToLz4() {
    client.submit(Job.named("plain").input("rows", Serdes.LONG, Serdes.STRING)
        .map(TestJobs.ModTen.class, Serdes.LONG, Serdes.LONG)
        .reduce(TestJobs.CountingSum.class, Serdes.LONG, Serdes.LONG)
        .output("out-plain").overwrite().outputCompression(TableSpec.Compression.NONE).build()).await();
    assertModTenCorrect("out-plain");
    assertEquals(TableSpec.Compression.NONE, client.tableStats("out-plain").spec().compression());
    client.submit(modTen("out-default-compression")).await();
    assertEquals(TableSpec.Compression.LZ4,
        client.tableStats("out-default-compression").spec().compression());
  }

  @Test
  void combiner_mergesAcrossThePartitionsOfOneRunner() {
    Job job = Job.named("modten-one-runner").input("rows", Serdes.LONG, Serdes.STRING)
        .map(TestJobs.ModTen.class, Serdes.LONG, Serdes.LONG)
        .combine(TestJobs.SumLongs.class)
        .reduce(TestJobs.CountingSum.class, Serdes.LONG, Serdes.LONG)
        .output("out-one-runner").overwrite().threads(1).build();
    JobResult r = client.submit(job).await();
    assertModTenCorrect("out-one-runner");
    // one runner per node maps all 8 of its partitions into one buffer: 10 keys per node, not per partition
    assertTrue(r.stages().get(0).recordsShuffled() <= 10 * 3, "combined: " + r.stages().get(0).recordsShuffled());
  }

  @Test
  void combiner_groupsByteArrayKeysByContent() {
    JobResult r = client.submit(Job.named("bytes").input("rows", Serdes.LONG, Serdes.STRING)
        .map(TestJobs.ThreeByteKeys.class, Serdes.BYTES, Serdes.LONG)
        .combine(TestJobs.SumByBytes.class)
        .reduce(TestJobs.SumByBytes.class, Serdes.BYTES, Serdes.LONG)
        .output("out-bytes").overwrite().build()).await();
    assertTrue(r.stages().get(0).recordsShuffled() <= 3 * 24, "combined: " + r.stages().get(0).recordsShuffled());
    long total = 0;
    try (TableScan s = client.scan("out-bytes", ScanOptions.inKeyOrder())) {
      while (s.hasNext()) {
        total += Serdes.LONG.decodeValue(s.next().value());
      }
    }
    assertEquals(ROWS, total);
    assertEquals(3, client.count("out-bytes"));
  }

  @Test
  void userCodeFailure_failsWithStackTraceThenNextJobWorks() {
    Job bad = Job.named("bad").input("rows", Serdes.LONG, Serdes.STRING)
        .map(TestJobs.FailsOnRecord.class, Serdes.LONG, Serdes.LONG)
        .reduce(TestJobs.SumLongs.class, Serdes.LONG, Serdes.LONG)
        .output("out-bad").overwrite().build();
    // the failing task fails the job: await returns (the class's timeout catches a hang)
    JobFailedException e = assertThrows(JobFailedException.class, () -> client.submit(bad).await());
    assertEquals(ErrorCode.USER_CODE_FAILED, e.code());
    assertTrue(e.getMessage().contains("bad record 4242"), e.getMessage());
    assertTrue(e.getMessage().contains("FailsOnRecord.map"), "user stack trace expected: " + e.getMessage());
    assertNoTemporaryTables();
    assertTrue(client.listTables().stream().noneMatch(t -> t.name().equals("out-bad")));
    client.submit(modTen("out-after-failure")).await();
    assertModTenCorrect("out-after-failure");
  }

  /** ModTen behind a gate: the job runs until the test opens the gate (or aborts it). */
  static Job gated(String name, Gate gate, String output) {
    return gate.configure(Job.named(name).input("rows", Serdes.LONG, Serdes.STRING)
        .map(Gate.Gated.class, Serdes.LONG, Serdes.LONG)
        .reduce(TestJobs.SumLongs.class, Serdes.LONG, Serdes.LONG)
        .output(output).overwrite()).build();
  }

  @Test
  void cancel_stopsJobThenNextJobWorks(@TempDir Path dir) throws Exception {
    Gate gate = new Gate(dir);
    try {
      RunningJob job = client.submit(gated("gated", gate, "out-slow"));
      gate.awaitStarted(Duration.ofSeconds(30)); // the job is in its map stage, and stays there
      job.cancel();
      // the gate stays closed until after await: the job can only end because the cancel took effect
      JobFailedException e = assertThrows(JobFailedException.class, job::await);
      assertEquals(ErrorCode.JOB_ABORTED, e.code());
      assertEquals(List.of(), gate.passed(), "the cancel stopped the tasks while they waited at the gate");
    } finally {
      gate.open();
    }
    assertNoTemporaryTables();
    assertTrue(client.listTables().stream().noneMatch(t -> t.name().equals("out-slow")), "no output");
    client.submit(modTen("out-after-cancel")).await();
    assertModTenCorrect("out-after-cancel");
  }

  @Test
  void clientDisconnectMidJob_nodesAbortAndDropTheJobsTables(@TempDir Path dir) throws Exception {
    Gate gate = new Gate(dir);
    try {
      SssClient doomed = cluster.client();
      doomed.submit(gated("orphan", gate, "out-orphan"));
      gate.awaitStarted(Duration.ofSeconds(30));
      assertTrue(client.listTables().stream().anyMatch(t -> t.name().startsWith("sss-tmp-")),
          "a running job has its intermediate table");
      doomed.close();
      long deadline = System.nanoTime() + 10_000_000_000L;
      while (client.listTables().stream().anyMatch(t -> t.name().startsWith("sss-tmp-"))) {
        assertTrue(System.nanoTime() < deadline, "intermediate tables still there 10 s after the client left");
        Thread.sleep(50);
      }
    } finally {
      gate.open();
    }
    assertTrue(client.listTables().stream().noneMatch(t -> t.name().equals("out-orphan")), "no output");
    client.submit(modTen("out-after-orphan")).await();
    assertModTenCorrect("out-after-orphan");
  }

  @Test
  void reduceThenReduce_theSecondGroupsWhatTheFirstEmitted() {
    // rows -> (i mod 10, 1) -> per key 0..9 the count, emitted under (key mod 3) -> summed per key mod 3
    Job job = Job.named("reduce-reduce").input("rows", Serdes.LONG, Serdes.STRING)
        .map(TestJobs.ModTen.class, Serdes.LONG, Serdes.LONG)
        .reduce(TestJobs.SumUnderKeyModThree.class, Serdes.LONG, Serdes.LONG)
        .reduce(TestJobs.CountingSum.class, Serdes.LONG, Serdes.LONG)
        .output("out-reduce-reduce").overwrite().build();
    JobResult r = client.submit(job).await();
    Map<Long, Long> expected = new TreeMap<>();
    for (long i = 1; i <= ROWS; i++) {
      expected.merge(i % 10 % 3, 1L, Long::sum);
    }
    assertEquals(Map.of(0L, 4000L, 1L, 3000L, 2L, 3000L), expected); // rows 1..10000: 1000 per i mod 10
    assertEquals(expected, read("out-reduce-reduce"));
    assertEquals(3, r.stages().size());
    assertEquals(10, r.stages().get(1).recordsOut(), "the first reduce emits one pair per key 0..9");
    assertEquals(3, r.counter("keys"), "the second reduce sees the three keys");
    assertNoTemporaryTables();
  }

  @Test
  void reducerThatThrows_failsTheJobWithItsStackTrace_andLeavesNothing() {
    Job bad = Job.named("badreduce").input("rows", Serdes.LONG, Serdes.STRING)
        .map(TestJobs.ModTen.class, Serdes.LONG, Serdes.LONG)
        .reduce(TestJobs.FailsOnKeySeven.class, Serdes.LONG, Serdes.LONG)
        .output("out-badreduce").overwrite().build();
    JobFailedException e = assertThrows(JobFailedException.class, () -> client.submit(bad).await());
    assertEquals(ErrorCode.USER_CODE_FAILED, e.code());
    assertTrue(e.getMessage().contains("reduce task of job"), e.getMessage());
    assertTrue(e.getMessage().contains("stage 1"), e.getMessage());
    assertTrue(e.getMessage().contains("bad key 7"), e.getMessage());
    assertTrue(e.getMessage().contains("FailsOnKeySeven.reduce"), "user stack trace expected: " + e.getMessage());
    assertNoTemporaryTables();
    assertTrue(client.listTables().stream().noneMatch(t -> t.name().equals("out-badreduce")), "no output");
  }

  /** A three-stage job failing in stage 1 or 2 (not the first): the cause, no intermediate table, no output. */
  @ParameterizedTest
  @ValueSource(ints = {1, 2})
  void threeStageJob_failingAfterTheFirstStage_failsWithTheCause_andLeavesNothing(int failingStage) {
    String output = "out-fails-in-" + failingStage;
    Job.Builder b = Job.named("late-failure").input("rows", Serdes.LONG, Serdes.STRING)
        .map(TestJobs.ModTen.class, Serdes.LONG, Serdes.LONG);
    if (failingStage == 1) {
      b.reduce(TestJobs.FailsOnKeySeven.class, Serdes.LONG, Serdes.LONG)
          .map(TestJobs.IdentityLongs.class, Serdes.LONG, Serdes.LONG);
    } else {
      b.reduce(TestJobs.SumLongs.class, Serdes.LONG, Serdes.LONG)
          .map(TestJobs.FailsOnKeySevenMap.class, Serdes.LONG, Serdes.LONG);
    }
    Job job = b.output(output).overwrite().build();
    JobFailedException e = assertThrows(JobFailedException.class, () -> client.submit(job).await());
    assertEquals(ErrorCode.USER_CODE_FAILED, e.code());
    String kind = failingStage == 1 ? "reduce" : "map";
    assertTrue(e.getMessage().contains(kind + " task of job"), e.getMessage());
    assertTrue(e.getMessage().contains("stage " + failingStage), e.getMessage());
    assertTrue(e.getMessage().contains("bad key 7"), e.getMessage());
    assertNoTemporaryTables();
    assertTrue(client.listTables().stream().noneMatch(t -> t.name().equals(output)), "no output");
    assertEquals(ROWS, client.count("rows"), "the input is untouched");
  }

  @Test
  void combinerThatChangesKeys_failsNamingTheCombiner() {
    Job bad = Job.named("badcombiner").input("rows", Serdes.LONG, Serdes.STRING)
        .map(TestJobs.ModTen.class, Serdes.LONG, Serdes.LONG)
        .combine(TestJobs.KeyChangingCombiner.class)
        .reduce(TestJobs.SumLongs.class, Serdes.LONG, Serdes.LONG)
        .output("out-badcombiner").overwrite().build();
    JobFailedException e = assertThrows(JobFailedException.class, () -> client.submit(bad).await());
    assertTrue(e.getMessage().contains("KeyChangingCombiner"), e.getMessage());
    assertTrue(e.getMessage().contains("keep keys unchanged"), e.getMessage());
  }

  @Test
  void outputExists_failsUnlessOverwrite() {
    client.submit(modTen("out-exists")).await();
    Job again = Job.named("again").input("rows", Serdes.LONG, Serdes.STRING)
        .map(TestJobs.ModTen.class, Serdes.LONG, Serdes.LONG)
        .reduce(TestJobs.SumLongs.class, Serdes.LONG, Serdes.LONG)
        .output("out-exists").build();
    JobFailedException e = assertThrows(JobFailedException.class, () -> client.submit(again).await());
    assertEquals(ErrorCode.TABLE_EXISTS, e.code());
    assertModTenCorrect("out-exists");
  }

  @Test
  void overwrite_replacesTheOldOutputAndLeavesNoIntermediateTable() {
    client.submit(modTen("out-replaced")).await();
    client.put("out-replaced", PairTypes.of(Serdes.LONG, Serdes.LONG), Serdes.LONG.encodeKey(12345L), Serdes.LONG.encodeValue(1L));
    client.submit(modTen("out-replaced")).await();
    assertModTenCorrect("out-replaced"); // the stray key is gone with the old output
    assertTrue(client.listTables().stream().noneMatch(t -> t.name().startsWith("sss-tmp-")),
        "intermediate tables are dropped by the stage that read them");
  }

  @Test
  void outputSameAsInput_isRefusedAndTheInputKept() {
    Job job = Job.named("self").input("rows", Serdes.LONG, Serdes.STRING)
        .map(TestJobs.ModTen.class, Serdes.LONG, Serdes.LONG)
        .reduce(TestJobs.SumLongs.class, Serdes.LONG, Serdes.LONG)
        .output("rows").overwrite().build();
    JobFailedException e = assertThrows(JobFailedException.class, () -> client.submit(job).await());
    assertEquals(ErrorCode.BAD_REQUEST, e.code());
    assertTrue(e.getMessage().contains("reads and writes table 'rows'"), e.getMessage());
    assertEquals(ROWS, client.count("rows"));
  }

  @Test
  void concurrentJobsFromTwoClients_doNotInterfere() throws Exception {
    try (SssClient other = cluster.client()) {
      CompletableFuture<JobResult> a = CompletableFuture.supplyAsync(() -> client.submit(modTen("out-a")).await());
      CompletableFuture<JobResult> b = CompletableFuture.supplyAsync(() -> other.submit(modTen("out-b")).await());
      a.get();
      b.get();
    }
    assertModTenCorrect("out-a");
    assertModTenCorrect("out-b");
  }

  @Test
  void chainOfFourStages_mapReduceMapReduce() {
    Job chain = Job.named("chain").input("rows", Serdes.LONG, Serdes.STRING)
        .map(TestJobs.ModTen.class, Serdes.LONG, Serdes.LONG)
        .reduce(TestJobs.SumLongs.class, Serdes.LONG, Serdes.LONG)
        .map(TestJobs.ValueModThree.class, Serdes.LONG, Serdes.LONG)
        .reduce(TestJobs.SumLongs.class, Serdes.LONG, Serdes.LONG)
        .output("out-chain").overwrite().build();
    JobResult r = client.submit(chain).await();
    assertEquals(4, r.stages().size());
    // stage 2 sees (k in 0..9, 1000): 1000 mod 3 = 1, so one key 1 with the sum of 0..9
    assertEquals(Map.of(1L, 45L), read("out-chain"));
    assertNoTemporaryTables();
  }

  @Test
  void mapOnlyThenReduceOnly_overAKeptMultiValuedTable() {
    Job mapOnly = Job.named("maponly").input("rows", Serdes.LONG, Serdes.STRING)
        .map(TestJobs.ModTen.class, Serdes.LONG, Serdes.LONG)
        .output("grouped").multiValuedOutput().overwrite().build();
    client.submit(mapOnly).await();
    assertEquals(ROWS, client.count("grouped"));
    Job reduceOnly = Job.named("reduceonly").input("grouped", Serdes.LONG, Serdes.LONG)
        .reduce(TestJobs.SumLongs.class, Serdes.LONG, Serdes.LONG)
        .output("out-reduceonly").overwrite().build();
    client.submit(reduceOnly).await();
    assertModTenCorrect("out-reduceonly");
  }

  @Test
  void iterativeJob_reusesTablesUntilCounterSaysStop() {
    // Each pass maps the previous output through identity and re-reduces; stop when the sum is stable.
    client.submit(modTen("iter-0")).await();
    String current = "iter-0";
    int passes = 0;
    List<Map<Long, Long>> history = new ArrayList<>();
    while (passes < 3) {
      String next = "iter-" + (passes + 1);
      JobResult r = client.submit(Job.named("iterate").input(current, Serdes.LONG, Serdes.LONG)
          .map(TestJobs.IdentityLongs.class, Serdes.LONG, Serdes.LONG)
          .reduce(TestJobs.CountingSum.class, Serdes.LONG, Serdes.LONG)
          .output(next).overwrite().build()).await();
      history.add(read(next));
      passes++;
      client.dropTable(current, false);
      current = next;
      if (r.counter("keys") == 10 && passes >= 2) {
        break;
      }
    }
    assertEquals(2, passes);
    // every pass is the modTen answer again, computed here rather than taken from the last pass
    Map<Long, Long> expected = new TreeMap<>();
    for (long i = 1; i <= ROWS; i++) {
      expected.merge(i % 10, 1L, Long::sum);
    }
    assertEquals(List.of(expected, expected), history);
    assertTrue(client.listTables().stream().noneMatch(t -> t.name().equals("iter-1")), "each pass drops its input");
  }

  @Test
  void emptyInput_producesEmptyOutput() {
    client.createTable("empty", BulkIO.textTable(), true);
    Job job = Job.named("empty").input("empty", Serdes.LONG, Serdes.STRING)
        .map(TestJobs.ModTen.class, Serdes.LONG, Serdes.LONG)
        .reduce(TestJobs.SumLongs.class, Serdes.LONG, Serdes.LONG)
        .output("out-empty").overwrite().build();
    JobResult r = client.submit(job).await();
    assertEquals(0, client.count("out-empty"));
    assertEquals(0, r.stages().get(0).recordsIn());
  }

  @Test
  void missingInput_failsNamingTheTable() {
    Job job = Job.named("missing").input("no-such-table", Serdes.LONG, Serdes.STRING)
        .map(TestJobs.ModTen.class, Serdes.LONG, Serdes.LONG)
        .output("out-missing").build();
    JobFailedException e = assertThrows(JobFailedException.class, () -> client.submit(job).await());
    assertTrue(e.getMessage().contains("no-such-table"), e.getMessage());
  }
}
