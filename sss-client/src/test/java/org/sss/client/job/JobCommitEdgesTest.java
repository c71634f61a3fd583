package org.sss.client.job;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNotNull;
import static org.junit.jupiter.api.Assertions.assertTrue;
import static org.junit.jupiter.api.Assertions.fail;

import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.Map;
import java.util.TreeMap;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;
import java.util.concurrent.atomic.AtomicBoolean;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;
import org.sss.client.BulkWriter;
import org.sss.client.ScanOptions;
import org.sss.client.SssClient;
import org.sss.client.TableScan;
import org.sss.client.TableSpec;
import org.sss.client.TableStatus;
import org.sss.client.cluster.SssCluster;
import org.sss.client.internal.ClientInternals;
import org.sss.client.internal.NodeChannels;
import org.sss.client.internal.WireTypes;
import org.sss.client.io.BulkIO;
import org.sss.core.api.Emitter;
import org.sss.core.api.Mapper;
import org.sss.core.api.Pair;
import org.sss.core.api.Partitioner;
import org.sss.core.api.Serdes;
import org.sss.core.api.TaskContext;
import org.sss.core.cluster.ClusterSpec;
import org.sss.core.cluster.PartitionMap;
import org.sss.core.keys.PairTypes;
import org.sss.core.proto.AbortJob;
import org.sss.core.proto.CommitJob;
import org.sss.core.proto.CreateTable;
import org.sss.core.proto.DataType;
import org.sss.core.proto.ErrorCode;
import org.sss.core.proto.Request;
import org.sss.core.proto.RunStage;
import org.sss.core.proto.StageSpec;
import org.sss.core.proto.TableOptions;
import org.sss.core.transport.Auth;
import org.sss.core.transport.SssException;
import org.sss.server.EmbeddedServers;
import org.sss.server.NodeConfig;
import org.sss.server.NodeListener;
import org.sss.server.SssServer;

/**
 * Edges of the job output commit and fencing: restarts between the last stage and the commit,
 * reserved names, answers near the frame limit, limits that must hold wherever a key's owner is.
 */
class JobCommitEdgesTest {
  static final int ROWS = 3_000;

  /** Nodes in this JVM that the test can restart one by one, with a chosen value limit. */
  static final class OwnCluster implements AutoCloseable {
    final ClusterSpec spec;
    final Path dir;
    final SssServer[] servers;
    final int maxValue;

    OwnCluster(Path dir, int n, int maxValue) throws Exception {
      this.dir = dir;
      this.maxValue = maxValue;
      List<NodeListener> sockets = EmbeddedServers.bindAll(n, "127.0.0.1");
      spec = ClusterSpec.of(EmbeddedServers.addresses(sockets, "127.0.0.1"), n * 8, Auth.randomSecret());
      servers = EmbeddedServers.startAll(sockets, this::config).toArray(SssServer[]::new);
    }

    NodeConfig config(int i) {
      return new NodeConfig(spec, i, dir.resolve("node-" + i), null, NodeConfig.DEFAULT_MAX_FRAME, maxValue, 2,
          null, null);
    }

    void restart(int i) {
      servers[i].close();
      try {
        servers[i] = SssServer.start(config(i));
      } catch (InterruptedException e) {
        throw new IllegalStateException(e);
      }
    }

    @Override
    public void close() {
      for (SssServer s : servers) {
        s.close();
      }
    }
  }

  static void loadRows(SssClient client, String table, int rows) {
    client.createTable(table, BulkIO.textTable(), false);
    try (BulkWriter w = client.writer(table, BulkIO.textTable().types())) {
      for (long i = 1; i <= rows; i++) {
        w.put(Serdes.LONG.encodeKey(i), Serdes.STRING.encodeValue("row " + i));
      }
    }
  }

  static Map<Long, Long> modTenExpected(int rows) {
    Map<Long, Long> expected = new TreeMap<>();
    for (long i = 1; i <= rows; i++) {
      expected.merge(i % 10, 1L, Long::sum);
    }
    return expected;
  }

  static Map<Long, Long> readLongs(SssClient client, String table) {
    Map<Long, Long> out = new TreeMap<>();
    try (TableScan s = client.scan(table, ScanOptions.inKeyOrder())) {
      while (s.hasNext()) {
        Pair p = s.next();
        out.put(Serdes.LONG.decodeKey(p.key()), Serdes.LONG.decodeValue(p.value()));
      }
    }
    return out;
  }

  /** ModTen whose map tasks wait at {@code gate}: the job runs until the test opens it. */
  static Job gatedModTen(Gate gate, String output) {
    return gate.configure(Job.named("gated").input("rows", Serdes.LONG, Serdes.STRING)
        .map(Gate.Gated.class, Serdes.LONG, Serdes.LONG)
        .reduce(TestJobs.SumLongs.class, Serdes.LONG, Serdes.LONG)
        .output(output)).build();
  }

  static Job slowModTen(String output) {
    return Job.named("slow").input("rows", Serdes.LONG, Serdes.STRING)
        .map(TestJobs.Slow.class, Serdes.LONG, Serdes.LONG)
        .reduce(TestJobs.SumLongs.class, Serdes.LONG, Serdes.LONG)
        .output(output).build();
  }

  // ------------------------------------------------------------------------------------------

  /**
   * A node that restarts after the last stage and before CommitJob: its reservation (memory
   * only) and its job table (dropped at start as a leftover) are gone, its CommitJob renames
   * nothing and answers OK. The job must then fail, or its output must be whole.
   */
  @Test
  void nodeRestartedBetweenLastStageAndCommit_jobMustNotSucceedWithPartialOutput(@TempDir Path dir)
      throws Exception {
    try (OwnCluster c = new OwnCluster(dir, 3, NodeConfig.DEFAULT_MAX_VALUE);
         SssClient client = SssClient.connect(c.spec)) {
      loadRows(client, "rows", ROWS);
      AtomicBoolean restarted = new AtomicBoolean();
      RunningJob job = client.submit(slowModTen("out"));
      JobFailedException failure = null;
      try {
        job.await((stage, stages, kind, done, total, in, out, bytes, seconds) -> {
          // the last stage with every task done: its final report comes just before commit()
          if (stage == stages - 1 && total > 0 && done == total && restarted.compareAndSet(false, true)) {
            c.restart(2);
          }
        });
      } catch (JobFailedException e) {
        failure = e;
      }
      assertTrue(restarted.get(), "the test did not get to restart the node");
      if (failure == null) {
        // the job says it succeeded: its output must be complete on every node
        Map<Long, Long> actual;
        try {
          actual = readLongs(client, "out");
        } catch (RuntimeException e) {
          throw new AssertionError("job " + job.id() + " reported success but its output cannot be read: " + e, e);
        }
        assertEquals(modTenExpected(ROWS), actual, "job reported success with a partial output");
      }
    }
  }

  /**
   * A client get of one key of a multi-valued table returns every value in one frame. With
   * many values (a hot key of a kept intermediate) the answer exceeds the client's frame limit:
   * the get should fail alone, not break the connection other work of the client shares (a
   * running job coordinated over it is aborted when it closes).
   */
  @Test
  void getOfAHotMultiValuedKey_mustNotKillAJobOfTheSameClient(@TempDir Path dir) throws Exception {
    try (SssCluster cluster = SssCluster.embedded(3); SssClient client = cluster.client()) {
      loadRows(client, "rows", ROWS);
      TableSpec mv = TableSpec.of(PairTypes.of(DataType.STRING, DataType.BYTES)).multiValued(true);
      client.createTable("hot", mv, false);
      byte[] key = Serdes.STRING.encodeKey("hot");
      byte[] mb = new byte[1 << 20];
      for (int i = 0; i < 70; i++) {
        client.put("hot", mv.types(), key, mb); // 70 values of 1 MiB: 70 MiB under one key
      }
      Gate gate = new Gate(dir);
      RunningJob job = client.submit(gatedModTen(gate, "bystander-out"));
      Throwable getFailure = null;
      try {
        gate.awaitStarted(Duration.ofSeconds(30)); // the job runs until the gate opens
        List<byte[]> all = client.getAll("hot", key);
        assertEquals(70, all.size());
      } catch (RuntimeException e) {
        getFailure = e;
      } finally {
        gate.open();
      }
      if (getFailure != null) { // refused alone, as one answer cannot carry 70 MiB
        assertTrue(getFailure.getMessage().contains("read them with a scan of the key"), getFailure.toString());
      }
      try {
        job.await();
      } catch (JobFailedException e) {
        fail("a get of a hot multi-valued key (" + getFailure + ") killed an unrelated job of the same client: "
            + e.getMessage());
      }
      assertEquals(modTenExpected(ROWS), readLongs(client, "bystander-out"));
    }
  }

  /** put/get/delete on a multi-valued table were made consistent; multiGet was not. */
  @Test
  void multiGet_ofAMultiValuedTable_findsWhatGetFinds() throws Exception {
    try (SssCluster cluster = SssCluster.embedded(3); SssClient client = cluster.client()) {
      TableSpec mv = TableSpec.of(PairTypes.of(DataType.STRING, DataType.LONG)).multiValued(true);
      client.createTable("mvget", mv, false);
      byte[] key = Serdes.STRING.encodeKey("k");
      client.put("mvget", mv.types(), key, Serdes.LONG.encodeValue(5L));
      assertTrue(client.get("mvget", key).isPresent(), "get finds it");
      List<byte[]> got = client.multiGet("mvget", List.of(key));
      assertNotNull(got.get(0), "multiGet misses a key that get finds");
    }
  }

  /**
   * A user's createTable while a job's reservation of the name has reached only some nodes
   * (the job's creates are in flight): the nodes that say TABLE_EXISTS ("being written by job")
   * are taken for leftovers of an interrupted create and createTable retries itself with
   * ifAbsent, which reserved nodes refuse again, forever (recursion).
   */
  @Test
  void createTable_racingAJobsReservation_mustAnswerPromptly() throws Exception {
    try (SssCluster cluster = SssCluster.embedded(3); SssClient jobSide = cluster.client();
         SssClient user = cluster.client()) {
      String jobId = "abcdef012345";
      // the job's create has reached node 0 only so far
      NodeChannels.await(ClientInternals.channels(jobSide).get(0).call(Request.newBuilder().setCreateTable(CreateTable.newBuilder()
          .setTable("sss-tmp-" + jobId + "-0").setJobId(jobId).setOptions(WireTypes.toProto(BulkIO.textTable()))
          .setCommitAs("contested").setCommitReplaces(true))), Duration.ofSeconds(10)).release();
      CompletableFuture<Void> create = CompletableFuture.runAsync(
          () -> user.createTable("contested", BulkIO.textTable(), false));
      try {
        create.get(10, TimeUnit.SECONDS);
        fail("createTable('contested') succeeded while node 0 holds a job's reservation of the name");
      } catch (ExecutionException refused) {
        // a refusal with the node's reason is a fine answer; a blown stack is not
        if (refused.getCause() instanceof StackOverflowError) {
          fail("createTable('contested') recursed until StackOverflowError while node 0 holds a job's reservation");
        }
        assertTrue(refused.getCause().getMessage().contains("being written by job"), refused.getCause().toString());
        // all or nothing: nodes 1 and 2 made the table before node 0 refused; the create took it back
        assertTrue(user.listTables().stream().noneMatch(t -> t.name().equals("contested")),
            "a refused create left 'contested' on some nodes: " + user.listTables());
      } catch (TimeoutException spinning) {
        fail("createTable('contested') did not return within 10 s while node 0 holds a job's reservation");
      } finally {
        NodeChannels.await(ClientInternals.channels(jobSide).get(0).call(Request.newBuilder().setAbortJob(
            AbortJob.newBuilder().setJobId(jobId).setReason("test"))), Duration.ofSeconds(20)).release();
        try {
          create.get(30, TimeUnit.SECONDS);
        } catch (Exception ignored) {
          // released
        }
      }
    }
  }

  /** Emits one pair per row whose encoded key is {@code limit - 1} bytes (BYTES serde adds 2). */
  public static final class KeyNearLimit implements Mapper<Long, String, byte[], Long> {
    private int limit;

    @Override
    public void setup(TaskContext context) {
      limit = Integer.parseInt(context.get("limit", "0"));
    }

    @Override
    public void map(Long key, String value, Emitter<byte[], Long> out) {
      byte[] k = new byte[limit - 3];
      Arrays.fill(k, (byte) 'A');
      byte[] tail = Long.toString(key).getBytes(java.nio.charset.StandardCharsets.US_ASCII);
      System.arraycopy(tail, 0, k, 0, tail.length);
      out.emit(k, key);
    }
  }

  /** Places every key on the emitting node. */
  public static final class SameNode implements Partitioner {
    @Override
    public int partition(byte[] encodedKey, PartitionMap map, int sourceNode) {
      return map.partitionsOf(sourceNode).get(0);
    }
  }

  /** Places every key on the next node. */
  public static final class NextNode implements Partitioner {
    @Override
    public int partition(byte[] encodedKey, PartitionMap map, int sourceNode) {
      return map.partitionsOf((sourceNode + 1) % map.nodes()).get(0);
    }
  }

  /**
   * The limit check on emitted pairs: the local path compares the encoded key with the limit,
   * the receiving node compares the stored key (partition prefix + key [+ uniquifier]). A key
   * just under the limit is accepted when its owner is the emitting node and refused when it is
   * another: the same job succeeds or fails by placement.
   */
  @Test
  void emittedKeyJustUnderTheLimit_sameOutcomeWhereverItsOwnerIs(@TempDir Path dir) throws Exception {
    int limit = 4096;
    try (OwnCluster c = new OwnCluster(dir, 3, limit); SssClient client = SssClient.connect(c.spec)) {
      loadRows(client, "few", 30);
      String[] outcome = new String[2];
      int i = 0;
      for (Class<? extends Partitioner> p : List.of(SameNode.class, NextNode.class)) {
        Job job = Job.named("near-limit").input("few", Serdes.LONG, Serdes.STRING)
            .map(KeyNearLimit.class, Serdes.BYTES, Serdes.LONG).partitionBy(p)
            .config("limit", Integer.toString(limit))
            .output("near-" + p.getSimpleName()).build();
        try {
          client.submit(job).await();
          outcome[i] = "succeeded";
        } catch (JobFailedException e) {
          outcome[i] = e.getMessage().contains("exceeds the limit") ? "refused as over the limit" : "failed: " + e.getMessage();
        }
        i++;
      }
      assertEquals(outcome[0], outcome[1], "same job, same keys; only the owner node differs");
    }
  }

  /**
   * Fencing says the engine drops only what is in the job's namespace; a RunStage with
   * drop_input names its input freely, and the node drops it at the end of the stage.
   */
  @Test
  void runStageWithDropInput_mustNotDropATableOutsideTheJobsNamespace() throws Exception {
    try (SssCluster cluster = SssCluster.embedded(3); SssClient client = cluster.client()) {
      loadRows(client, "precious", 300);
      String jobId = "0123456789ab";
      String out = "sss-tmp-" + jobId + "-1";
      int nodes = client.spec().nodeCount();
      for (int n = 0; n < nodes; n++) {
        NodeChannels.await(ClientInternals.channels(client).get(n).call(Request.newBuilder().setCreateTable(CreateTable.newBuilder()
            .setTable(out).setJobId(jobId).setOptions(TableOptions.newBuilder().setMultiValued(true)
                .setKeyType(DataType.LONG).setValueType(DataType.LONG)))),
            Duration.ofSeconds(10)).release();
      }
      StageSpec spec = StageSpec.newBuilder().setIndex(1).setDropInput(true).setKind(StageSpec.Kind.MAP)
          .setInputTable("precious").setOutputTable(out).setOutputMultiValued(true)
          .setFunctionClass(TestJobs.ModTen.class.getName())
          .setInputKeySerde(Serdes.LONG.getClass().getName()).setInputValueSerde(Serdes.STRING.getClass().getName())
          .setOutputKeySerde(Serdes.LONG.getClass().getName()).setOutputValueSerde(Serdes.LONG.getClass().getName())
          .build();
      List<CompletableFuture<org.sss.core.transport.Frame<org.sss.core.proto.Response>>> runs = new ArrayList<>();
      for (int n = 0; n < nodes; n++) {
        runs.add(ClientInternals.channels(client).get(n).call(Request.newBuilder().setRunStage(
            RunStage.newBuilder().setJobId(jobId).setStage(spec)), null, Duration.ZERO));
      }
      for (var r : runs) {
        try {
          NodeChannels.await(r, Duration.ofSeconds(30)).release();
        } catch (RuntimeException refused) {
          System.err.println("refused: " + refused);
        }
      }
      assertTrue(client.listTables().stream().anyMatch(t -> t.name().equals("precious")),
          "a stage of job " + jobId + " dropped the user's table 'precious'");
      assertEquals(300, client.count("precious"));
    }
  }

  static Job modTenOf(String input, String output) {
    return Job.named("modten-" + input).input(input, Serdes.LONG, Serdes.STRING)
        .map(TestJobs.ModTen.class, Serdes.LONG, Serdes.LONG)
        .reduce(TestJobs.SumLongs.class, Serdes.LONG, Serdes.LONG)
        .output(output).overwrite().build();
  }

  static void assertNoJobTables(SssClient client) {
    for (TableStatus t : client.listTables()) {
      assertTrue(!t.name().startsWith("sss-tmp-"), "left behind: " + t.name());
    }
  }

  /** Two overwrite jobs with one output at once: the output is one job's, whole; failures say why. */
  @Test
  void twoJobsWithOneOutputAtOnce_outputIsOneOfThemWhole() throws Exception {
    try (SssCluster cluster = SssCluster.embedded(3); SssClient client = cluster.client()) {
      loadRows(client, "rowsA", 3000);
      loadRows(client, "rowsB", 600);
      Map<Long, Long> a = modTenExpected(3000);
      Map<Long, Long> b = modTenExpected(600);
      for (int trial = 0; trial < 6; trial++) {
        RunningJob ja = client.submit(modTenOf("rowsA", "both-out"));
        RunningJob jb = client.submit(modTenOf("rowsB", "both-out"));
        for (RunningJob j : List.of(ja, jb)) {
          try {
            j.await();
          } catch (JobFailedException e) {
            assertEquals(org.sss.core.proto.ErrorCode.TABLE_EXISTS, e.code(), e.getMessage());
          }
        }
        if (client.listTables().stream().anyMatch(t -> t.name().equals("both-out"))) {
          Map<Long, Long> actual = readLongs(client, "both-out");
          assertTrue(actual.equals(a) || actual.equals(b), "trial " + trial + ": mixed output " + actual);
        }
        assertNoJobTables(client);
      }
    }
  }

  /** Clients that close while their job creates its tables: nothing left, no name stays reserved. */
  @Test
  void clientClosedWhileItsJobCreatesTables_leavesNoTableAndNoReservation() throws Exception {
    try (SssCluster cluster = SssCluster.embedded(3); SssClient client = cluster.client()) {
      loadRows(client, "rows", ROWS);
      for (int i = 0; i < 15; i++) {
        SssClient doomed = cluster.client();
        doomed.ping();
        doomed.submit(slowModTen("closed-out"));
        Thread.sleep(i % 5);
        doomed.close();
      }
      long deadline = System.nanoTime() + 20_000_000_000L;
      while (client.listTables().stream().anyMatch(t -> t.name().startsWith("sss-tmp-"))
          && System.nanoTime() < deadline) {
        Thread.sleep(50);
      }
      assertNoJobTables(client);
      client.createTable("closed-out", BulkIO.textTable(), false); // throws if a reservation leaked
      client.dropTable("closed-out", false);
    }
  }

  /**
   * A commit that fails on a node after which its coordinator leaves without aborting (it died):
   * the node must drop the job's tables and free the name the job reserved, as for a coordinator
   * that dies before its commit, not keep them until it restarts.
   */
  @Test
  void commitThatFailedWhenItsCoordinatorLeft_freesTheReservedName() throws Exception {
    try (SssCluster cluster = SssCluster.embedded(1); SssClient user = cluster.client()) {
      String jobId = "0123456789ab";
      String staged = "sss-tmp-" + jobId + "-0";
      try (SssClient coordinator = cluster.client()) {
        NodeChannels.await(ClientInternals.channels(coordinator).get(0).call(Request.newBuilder().setCreateTable(
            CreateTable.newBuilder().setTable(staged).setJobId(jobId).setOptions(WireTypes.toProto(BulkIO.textTable()))
                .setCommitAs("orphaned"))), Duration.ofSeconds(10)).release();
        user.dropTable(staged, false); // the job's table is gone: its commit fails here
        try {
          NodeChannels.await(ClientInternals.channels(coordinator).get(0).call(Request.newBuilder().setCommitJob(
              CommitJob.newBuilder().setJobId(jobId))), Duration.ofSeconds(10)).release();
          fail("the commit of a job whose table was dropped succeeded");
        } catch (SssException expected) {
          assertEquals(ErrorCode.NO_SUCH_TABLE, expected.code(), expected.toString());
        }
      } // the coordinator goes without an AbortJob
      long deadline = System.nanoTime() + 10_000_000_000L;
      while (true) {
        try {
          user.createTable("orphaned", BulkIO.textTable(), false);
          break;
        } catch (SssException reserved) {
          if (!reserved.getMessage().contains("being written by job") || System.nanoTime() > deadline) {
            fail("'orphaned' still reserved 10 s after the failed commit's coordinator left: " + reserved);
          }
          Thread.sleep(50);
        }
      }
      user.dropTable("orphaned", false);
    }
  }

  /**
   * The namespace check covers CreateTable.table but not commit_as: a job may name its output
   * "sss-tmp-...", which users cannot create. The committed table then sits in the engine's
   * namespace, and a node that restarts drops it as a leftover.
   */
  @Test
  void jobOutputNamedInTheEnginesNamespace_isRefusedOrSurvivesARestart(@TempDir Path dir) throws Exception {
    try (OwnCluster c = new OwnCluster(dir, 3, NodeConfig.DEFAULT_MAX_VALUE);
         SssClient client = SssClient.connect(c.spec)) {
      loadRows(client, "rows", 300);
      try {
        client.submit(modTenOf("rows", "sss-tmp-mine-1")).await();
      } catch (JobFailedException refused) {
        return; // refusing the name is a fine answer
      }
      assertEquals(modTenExpected(300), readLongs(client, "sss-tmp-mine-1"), "before the restart");
      c.restart(1);
      Map<Long, Long> after;
      try {
        after = readLongs(client, "sss-tmp-mine-1");
      } catch (RuntimeException e) {
        throw new AssertionError("a committed job output was lost when node 1 restarted: " + e.getMessage(), e);
      }
      assertEquals(modTenExpected(300), after, "after node 1 restarted");
    }
  }

  /**
   * putAll now sends each node's share as one frame (it used a BulkWriter, which splits). A
   * share over the frame limit makes the node close the connection as garbage, which fails
   * every other call on it and aborts the jobs this client coordinates there.
   */
  @Test
  void putAllOverTheFrameLimit_mustNotKillAJobOfTheSameClient(@TempDir Path dir) throws Exception {
    try (SssCluster cluster = SssCluster.embedded(3); SssClient client = cluster.client()) {
      loadRows(client, "rows", ROWS);
      client.createTable("big", BulkIO.textTable(), false);
      PartitionMap map = client.spec().partitionMap();
      List<Pair> pairs = new ArrayList<>();
      byte[] mb = new byte[1 << 20];
      for (long k = 0; pairs.size() < 70; k++) { // 70 MiB, all owned by node 0
        byte[] key = Serdes.LONG.encodeKey(k);
        if (map.nodeOf(key) == 0) {
          pairs.add(new Pair(key, mb));
        }
      }
      Gate gate = new Gate(dir);
      RunningJob job = client.submit(gatedModTen(gate, "bystander2-out"));
      Throwable putFailure = null;
      try {
        gate.awaitStarted(Duration.ofSeconds(30)); // the job runs until the gate opens
        client.putAll("big", BulkIO.textTable().types(), pairs);
      } catch (RuntimeException e) {
        putFailure = e;
      } finally {
        gate.open();
      }
      assertNotNull(putFailure, "a share over one request is refused");
      assertTrue(putFailure.getMessage().contains("nothing was written"), putFailure.getMessage());
      try {
        job.await();
      } catch (JobFailedException e) {
        fail("putAll (" + putFailure + ") killed an unrelated job of the same client: " + e.getMessage());
      }
      assertEquals(modTenExpected(ROWS), readLongs(client, "bystander2-out"));
      assertEquals(0, client.count("big"));
    }
  }
}
