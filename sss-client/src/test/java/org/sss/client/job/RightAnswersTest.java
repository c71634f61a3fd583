package org.sss.client.job;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.TreeMap;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;
import org.sss.client.BulkWriter;
import org.sss.client.ScanOptions;
import org.sss.client.SssClient;
import org.sss.client.TableScan;
import org.sss.client.TableSpec;
import org.sss.client.TableStatus;
import org.sss.client.cluster.SssCluster;
import org.sss.client.io.BulkIO;
import org.sss.client.it.LeakDetection;
import org.sss.core.api.Pair;
import org.sss.core.api.Serdes;
import org.sss.core.cluster.PartitionMap;
import org.sss.core.keys.PairTypes;
import org.sss.core.proto.DataType;
import org.sss.core.proto.ErrorCode;
import org.sss.core.transport.SssException;

/**
 * Ways a job or a writer could return a wrong answer or lose data without an error, each
 * pinned by a test that checks against an answer computed here, independently of the engine.
 */
class RightAnswersTest {
  static final int ROWS = 3_000;
  static SssCluster cluster;
  static SssClient client;

  /** Answers are what these check; buffer leaks are LeakWatch's: sampled detection, not paranoid (its cost is most of a job here). */
  static LeakDetection leakDetection;

  @BeforeAll
  static void start() throws Exception {
    leakDetection = LeakDetection.sampled();
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
    leakDetection.close();
  }

  /** (row mod 10, count): what {@link #modTen} must produce, computed without the engine. */
  static Map<Long, Long> modTenExpected() {
    Map<Long, Long> expected = new TreeMap<>();
    for (long i = 1; i <= ROWS; i++) {
      expected.merge(i % 10, 1L, Long::sum);
    }
    return expected;
  }

  static Job modTen(String output) {
    return Job.named("modten").input("rows", Serdes.LONG, Serdes.STRING)
        .map(TestJobs.ModTen.class, Serdes.LONG, Serdes.LONG)
        .reduce(TestJobs.SumLongs.class, Serdes.LONG, Serdes.LONG)
        .output(output).overwrite().build();
  }

  static Map<Long, Long> readLongs(String table) {
    Map<Long, Long> out = new TreeMap<>();
    try (TableScan s = client.scan(table, ScanOptions.inKeyOrder())) {
      while (s.hasNext()) {
        Pair p = s.next();
        out.put(Serdes.LONG.decodeKey(p.key()), Serdes.LONG.decodeValue(p.value()));
      }
    }
    return out;
  }

  static boolean exists(String table) {
    return client.listTables().stream().anyMatch(t -> t.name().equals(table));
  }

  static void assertNoJobTables() {
    for (TableStatus t : client.listTables()) {
      assertFalse(t.name().startsWith("sss-tmp-"), "left behind: " + t.name());
    }
  }

  @Test
  void failedJobsStragglers_neverWriteIntoTheNextJobsOutput() throws Exception {
    Job failing = Job.named("straggling").input("rows", Serdes.LONG, Serdes.STRING)
        .map(RightAnswerJobs.FailsOnNodeZeroSlowElsewhere.class, Serdes.LONG, Serdes.LONG)
        .reduce(TestJobs.SumLongs.class, Serdes.LONG, Serdes.LONG)
        .output("shared-out").overwrite().build();
    JobFailedException e = assertThrows(JobFailedException.class, () -> client.submit(failing).await());
    assertEquals(ErrorCode.USER_CODE_FAILED, e.code(), e.getMessage());
    // a failed job is reported only once its tasks have stopped everywhere
    client.submit(modTen("shared-out")).await();
    Map<Long, Long> expected = modTenExpected();
    assertEquals(expected, readLongs("shared-out"));
    Thread.sleep(2_000); // time for any straggler still running to write, were it able to
    assertEquals(expected, readLongs("shared-out"));
    assertNoJobTables();
  }

  @Test
  void overwrite_thatFails_leavesThePreviousOutputWhole() {
    client.submit(modTen("kept-out")).await();
    Job failing = Job.named("failing").input("rows", Serdes.LONG, Serdes.STRING)
        .map(RightAnswerJobs.AlwaysFails.class, Serdes.LONG, Serdes.LONG)
        .reduce(TestJobs.SumLongs.class, Serdes.LONG, Serdes.LONG)
        .output("kept-out").overwrite().build();
    assertThrows(JobFailedException.class, () -> client.submit(failing).await());
    assertEquals(modTenExpected(), readLongs("kept-out"));
    assertNoJobTables();
  }

  @Test
  void outputWithoutOverwrite_existing_failsBeforeAnyStageAndKeepsIt() {
    client.createTable("mine", BulkIO.textTable(), false);
    client.put("mine", BulkIO.textTable().types(), Serdes.LONG.encodeKey(7L), Serdes.STRING.encodeValue("seven"));
    Job job = Job.named("clash").input("rows", Serdes.LONG, Serdes.STRING)
        .map(TestJobs.ModTen.class, Serdes.LONG, Serdes.LONG)
        .reduce(TestJobs.SumLongs.class, Serdes.LONG, Serdes.LONG)
        .output("mine").build();
    JobFailedException e = assertThrows(JobFailedException.class, () -> client.submit(job).await());
    assertEquals(ErrorCode.TABLE_EXISTS, e.code(), e.getMessage());
    assertEquals("seven", new String(client.get("mine", Serdes.LONG.encodeKey(7L)).orElseThrow(),
        StandardCharsets.UTF_8));
    assertEquals(1, client.count("mine"));
    assertNoJobTables();
  }

  @Test
  void runningJobsOutputName_isReservedAgainstOtherCreates_untilItCommits(@TempDir Path dir) throws Exception {
    Gate gate = new Gate(dir);
    RunningJob running = client.submit(gated(gate, "gated", "rows", 0).output("reserved-out").build());
    try {
      gate.awaitStarted(Duration.ofSeconds(30)); // the job runs, and cannot commit before the gate opens
      SssException e = assertThrows(SssException.class,
          () -> client.createTable("reserved-out", BulkIO.textTable(), false));
      assertEquals(ErrorCode.TABLE_EXISTS, e.code());
      assertTrue(e.getMessage().contains("being written by job " + running.id()), e.getMessage());
      assertFalse(exists("reserved-out"), "the output must not be visible before the job commits");
    } finally {
      gate.open();
    }
    running.await();
    assertEquals(modTenExpected(), readLongs("reserved-out"));
  }

  /** ModTen behind {@code gate} over {@code input}, reduced by SumLongs; {@code threads} 0: the node's. */
  static Job.Builder gated(Gate gate, String name, String input, int threads) {
    return gate.configure(Job.named(name).input(input, Serdes.LONG, Serdes.STRING)
        .map(Gate.Gated.class, Serdes.LONG, Serdes.LONG).threads(threads)
        .reduce(TestJobs.SumLongs.class, Serdes.LONG, Serdes.LONG));
  }

  @Test
  void laterWriteOfAKey_winsOverTheEarlierOne_throughAPipelinedWriter() {
    client.createTable("order", BulkIO.textTable(), false);
    PartitionMap map = client.spec().partitionMap();
    byte[] key = Serdes.LONG.encodeKey(-1L);
    int node = map.nodeOf(key);
    List<byte[]> sameNode = new ArrayList<>();
    for (long k = 0; sameNode.size() < 2_000; k++) {
      byte[] other = Serdes.LONG.encodeKey(k);
      if (map.nodeOf(other) == node) {
        sameNode.add(other);
      }
    }
    byte[] filler = new byte[2_000]; // 2,000 pairs of 2 KB: four batches between the two writes
    for (int trial = 0; trial < 20; trial++) {
      byte[] old = ("OLD " + trial).getBytes(StandardCharsets.UTF_8);
      byte[] fresh = ("NEW " + trial).getBytes(StandardCharsets.UTF_8);
      try (BulkWriter w = client.writer("order", BulkIO.textTable().types())) {
        w.put(key, old);
        for (byte[] k : sameNode) {
          w.put(k, filler);
        }
        w.put(key, fresh);
      }
      assertArrayEquals(fresh, client.get("order", key).orElseThrow(), "trial " + trial);
    }
  }

  @Test
  void putAll_refusedOnANode_writesNothingThere() {
    client.createTable("atomic", BulkIO.textTable(), false);
    PartitionMap map = client.spec().partitionMap();
    byte[] small = Serdes.LONG.encodeKey(1L);
    byte[] big = null;
    for (long k = 2; big == null; k++) {
      if (map.nodeOf(Serdes.LONG.encodeKey(k)) == map.nodeOf(small)) {
        big = Serdes.LONG.encodeKey(k);
      }
    }
    List<Pair> pairs = List.of(new Pair(small, new byte[] {1}), new Pair(big, new byte[(32 << 20) + 1]));
    SssException e = assertThrows(SssException.class, () -> client.putAll("atomic", BulkIO.textTable().types(), pairs));
    assertEquals(ErrorCode.VALUE_TOO_LARGE, e.code());
    assertTrue(client.get("atomic", small).isEmpty(), "the small pair of the refused batch was stored");
    assertEquals(0, client.count("atomic"));
  }

  @Test
  void mapMapReduce_keepsEveryValueBetweenTheMaps() {
    client.createTable("ten", BulkIO.textTable(), false);
    try (BulkWriter w = client.writer("ten", BulkIO.textTable().types())) {
      for (long i = 1; i <= 10; i++) {
        w.put(Serdes.LONG.encodeKey(i), Serdes.STRING.encodeValue("line " + i));
      }
    }
    for (boolean twoMaps : new boolean[] {false, true}) {
      Job.Builder b = Job.named("chain").input("ten", Serdes.LONG, Serdes.STRING)
          .map(RightAnswerJobs.AllUnderX.class, Serdes.STRING, Serdes.LONG);
      if (twoMaps) {
        b.map(RightAnswerJobs.IdentityStringLong.class, Serdes.STRING, Serdes.LONG);
      }
      client.submit(b.reduce(TestJobs.CountValues.class, Serdes.STRING, Serdes.LONG)
          .output("chain-out").overwrite().build()).await();
      assertEquals(10L, Serdes.LONG.decodeValue(client.get("chain-out", Serdes.STRING.encodeKey("x")).orElseThrow()),
          twoMaps ? "map -> map -> reduce" : "map -> reduce");
    }
  }

  @Test
  void keptIntermediates_areScannableMultiValuedTablesThatOutliveTheClient() throws Exception {
    JobResult r = client.submit(Job.named("keep").input("rows", Serdes.LONG, Serdes.STRING)
        .map(TestJobs.ModTen.class, Serdes.LONG, Serdes.LONG)
        .reduce(TestJobs.SumLongs.class, Serdes.LONG, Serdes.LONG)
        .output("keep-out").overwrite().keepIntermediate().build()).await();
    assertEquals(List.of("keep-out.stage0"), r.intermediateTables());
    try (SssClient other = cluster.client()) {
      other.listTables(); // a second client that comes and goes
    }
    client.close();
    client = cluster.client(); // the job's own client disconnected too
    assertTrue(exists("keep-out.stage0"));
    assertTrue(client.tableStats("keep-out.stage0").spec().multiValued());
    Map<Long, Long> counts = new TreeMap<>();
    try (TableScan s = client.scan("keep-out.stage0", ScanOptions.inKeyOrder())) {
      while (s.hasNext()) {
        Pair p = s.next();
        byte[] key = BulkIO.userKey(client.tableStats("keep-out.stage0").spec(), p.key());
        counts.merge(Serdes.LONG.decodeKey(key), Serdes.LONG.decodeValue(p.value()), Long::sum);
      }
    }
    assertEquals(modTenExpected(), counts);
    assertEquals(ROWS, client.count("keep-out.stage0"));
    // a reduce-only job reads the kept table
    client.submit(Job.named("again").input("keep-out.stage0", Serdes.LONG, Serdes.LONG)
        .reduce(TestJobs.SumLongs.class, Serdes.LONG, Serdes.LONG).output("again-out").overwrite().build()).await();
    assertEquals(modTenExpected(), readLongs("again-out"));
  }

  @Test
  void doubleKeyedOutput_recordsItsTypeAndDumps(@TempDir Path dir) throws Exception {
    client.submit(Job.named("doubles").input("rows", Serdes.LONG, Serdes.STRING)
        .map(RightAnswerJobs.DoubleKeys.class, Serdes.DOUBLE, Serdes.LONG)
        .output("doubles-out").overwrite().build()).await();
    TableSpec o = client.tableStats("doubles-out").spec();
    assertEquals(DataType.DOUBLE, o.types().key());
    Path out = dir.resolve("doubles.txt");
    assertEquals(ROWS, BulkIO.dump(client, "doubles-out", out, n -> { }));
    List<String> lines = Files.readAllLines(out);
    assertEquals(ROWS, lines.size());
    for (int i = 0; i < ROWS; i++) {
      long n = i + 1;
      assertEquals((n / 4.0) + "\t" + n, lines.get(i));
    }
  }

  @Test
  void multiValuedTable_clientPutsAddValues_getReturnsThemAll_andReduceSeesThem() {
    TableSpec mv = TableSpec.of(PairTypes.of(DataType.STRING, DataType.LONG)).multiValued(true);
    client.createTable("many", mv, false);
    byte[] key = Serdes.STRING.encodeKey("k");
    for (long v = 1; v <= 10; v++) {
      client.put("many", mv.types(), key, Serdes.LONG.encodeValue(v));
    }
    List<Long> values = new ArrayList<>();
    client.getAll("many", key).forEach(v -> values.add(Serdes.LONG.decodeValue(v)));
    values.sort(null);
    assertEquals(List.of(1L, 2L, 3L, 4L, 5L, 6L, 7L, 8L, 9L, 10L), values);
    assertTrue(client.get("many", key).isPresent());
    assertEquals(10, client.count("many"));
    client.submit(Job.named("count-many").input("many", Serdes.STRING, Serdes.LONG)
        .reduce(TestJobs.CountValues.class, Serdes.STRING, Serdes.LONG)
        .output("many-out").overwrite().build()).await();
    assertEquals(10L, Serdes.LONG.decodeValue(client.get("many-out", key).orElseThrow()));
    client.delete("many", List.of(key));
    assertTrue(client.getAll("many", key).isEmpty());
  }

  @Test
  void inputDroppedMidJob_failsTheJobPromptly(@TempDir Path dir) throws Exception {
    client.createTable("doomed", BulkIO.textTable(), false);
    try (BulkWriter w = client.writer("doomed", BulkIO.textTable().types())) {
      for (long i = 1; i <= ROWS; i++) {
        w.put(Serdes.LONG.encodeKey(i), Serdes.STRING.encodeValue("row " + i));
      }
    }
    Gate gate = new Gate(dir);
    // one task at a time per node: the other partitions are read after the drop
    RunningJob running = client.submit(gated(gate, "doomed", "doomed", 1).output("doomed-out").build());
    try {
      gate.awaitStarted(Duration.ofSeconds(30));
      client.dropTable("doomed", false);
    } finally {
      gate.open();
    }
    long start = System.nanoTime();
    JobFailedException e = assertThrows(JobFailedException.class, running::await);
    assertTrue(e.getMessage().contains("doomed"), e.getMessage());
    assertTrue(System.nanoTime() - start < 30e9, "the job should fail, not hang");
    assertFalse(exists("doomed-out"));
    assertNoJobTables();
  }

  @Test
  void clientGoneMidJob_leavesNoOutputAndNoJobTables(@TempDir Path dir) throws Exception {
    Gate gate = new Gate(dir);
    try {
      SssClient doomed = cluster.client();
      doomed.submit(gated(gate, "orphan", "rows", 0).output("orphan-out").build());
      gate.awaitStarted(Duration.ofSeconds(30)); // running, and it cannot commit before the gate opens
      doomed.close();
      long deadline = System.nanoTime() + 20_000_000_000L;
      while (client.listTables().stream().anyMatch(t -> t.name().startsWith("sss-tmp-"))
          && System.nanoTime() < deadline) {
        Thread.sleep(50);
      }
    } finally {
      gate.open();
    }
    assertNoJobTables();
    assertFalse(exists("orphan-out"), "a partial output must not appear");
  }

  @Test
  void emittedValueOverTheLimit_failsTheJobWhereverItsOwnerIs() {
    Job job = Job.named("huge").input("rows", Serdes.LONG, Serdes.STRING)
        .map(RightAnswerJobs.HugeValue.class, Serdes.LONG, Serdes.BYTES)
        .config("value.bytes", Integer.toString((32 << 20) + 1))
        .output("huge-out").build();
    JobFailedException e = assertThrows(JobFailedException.class, () -> client.submit(job).await());
    assertTrue(e.getMessage().contains("exceeds the limit"), e.getMessage());
    assertFalse(exists("huge-out"));
    assertNoJobTables();
  }

  @Test
  void reservedNamespace_cannotBeCreatedByUsers() {
    SssException e = assertThrows(SssException.class,
        () -> client.createTable("sss-tmp-a-1", BulkIO.textTable(), false));
    assertEquals(ErrorCode.BAD_REQUEST, e.code());
    assertTrue(e.getMessage().contains("reserved"), e.getMessage());
    assertFalse(exists("sss-tmp-a-1"));
  }

  @Test
  void loadWholeFiles_refusesNamesThatDoNotDecode_andCountsWhatItStored(@TempDir Path dir) throws Exception {
    Files.writeString(dir.resolve("plain.txt"), "one");
    Files.createDirectories(dir.resolve("sub"));
    Files.writeString(dir.resolve("sub/two.txt"), "two");
    assertEquals(2, BulkIO.loadWholeFiles(client, "files-ok", dir, TableSpec.Compression.LZ4, n -> { }));
    assertEquals(2, client.count("files-ok"));
    // two names that differ only in a byte no encoding decodes
    Process p = new ProcessBuilder("bash", "-c", "cd \"$0\" && touch \"$(printf 'a\\377')\" \"$(printf 'a\\376')\"",
        dir.toString()).inheritIO().start();
    assertEquals(0, p.waitFor());
    java.io.IOException refused = assertThrows(java.io.IOException.class,
        () -> BulkIO.loadWholeFiles(client, "files-bad", dir, TableSpec.Compression.LZ4, n -> { }));
    assertTrue(refused.getMessage().contains("file-name encoding"), refused.getMessage());
    assertFalse(exists("files-bad"), "a load that fails leaves no table it made");
    assertEquals(2, client.count("files-ok"));
  }

  @Test
  void cancel_reachesUserCodeThatSleeps_andTheJobEndsAtOnce(@TempDir Path dir) throws Exception {
    Gate gate = new Gate(dir);
    // the mappers sleep (in their setup, 10 ms at a time) for up to 25 s waiting for a gate
    // that never opens; only an interrupt ends that sooner
    RunningJob running = client.submit(gated(gate, "sleepy", "rows", 0).output("sleepy-out")
        .config(Gate.MAX_MILLIS, "25000").build());
    gate.awaitStarted(Duration.ofSeconds(30)); // the mappers are inside their sleep
    long start = System.nanoTime();
    running.cancel();
    JobFailedException e = assertThrows(JobFailedException.class, running::await);
    assertEquals(ErrorCode.JOB_ABORTED, e.code(), e.getMessage());
    double seconds = (System.nanoTime() - start) / 1e9;
    assertTrue(seconds < 8, "cancel took " + seconds + " s: the sleeping mappers were not interrupted");
    gate.open();
    assertFalse(exists("sleepy-out"));
    assertNoJobTables();
  }
}
