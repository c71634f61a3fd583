package org.sss.client.it;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.netty.buffer.ByteBuf;
import io.netty.buffer.Unpooled;
import java.io.ByteArrayOutputStream;
import java.io.PrintStream;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;
import org.sss.client.BulkWriter;
import org.sss.client.SssClient;
import org.sss.client.TableSpec;
import org.sss.client.cluster.SssCluster;
import org.sss.client.internal.ClientInternals;
import org.sss.client.internal.NodeChannels;
import org.sss.client.internal.WireTypes;
import org.sss.client.io.BulkIO;
import org.sss.client.job.Job;
import org.sss.client.job.JobFailedException;
import org.sss.client.job.TestJobs;
import org.sss.core.api.Pair;
import org.sss.core.api.Serdes;
import org.sss.core.cluster.PartitionMap;
import org.sss.core.keys.KeyCodec;
import org.sss.core.keys.PairTypes;
import org.sss.core.proto.CreateTable;
import org.sss.core.proto.DataType;
import org.sss.core.proto.ErrorCode;
import org.sss.core.proto.Request;
import org.sss.core.proto.RunStage;
import org.sss.core.proto.ShuffleBatch;
import org.sss.core.proto.StageSpec;
import org.sss.core.proto.TableOptions;
import org.sss.core.transport.PairBlock;
import org.sss.core.transport.SssException;
import org.sss.core.keys.StoredKeys;

/**
 * A table's declared types are a contract kept by the node that holds the table: every writer
 * (put, putAll, the bulk writer, load, a stage's own output and its shuffle batches) declares the
 * types it encoded with, and a batch of other types is refused with nothing written. A table that
 * holds undecodable pairs all the same (a client that declares the right types but encodes
 * others) can still be read out whole.
 */
class TypeContractTest {
  static SssCluster cluster;
  static SssClient client;

  @TempDir
  Path dir;

  @BeforeAll
  static void start() throws Exception {
    cluster = SssCluster.embedded(3);
    client = cluster.client();
  }

  @AfterAll
  static void stop() {
    client.close();
    cluster.close();
  }

  private static TableSpec strings() {
    return TableSpec.of(PairTypes.of(DataType.STRING, DataType.STRING));
  }

  @Test
  void loadOfATextFileIntoAStringKeyedTable_isRefusedWithNothingWritten() throws Exception {
    client.createTable("names", strings(), false);
    client.put("names", strings().types(), KeyCodec.encodeString("ada"), "lovelace".getBytes(StandardCharsets.UTF_8));
    Path text = dir.resolve("some.txt");
    Files.writeString(text, "one\ntwo\n");
    IllegalArgumentException e = assertThrows(IllegalArgumentException.class,
        () -> BulkIO.load(client, "names", text, n -> { }));
    assertTrue(e.getMessage().contains("holds key=string value=string")
        && e.getMessage().contains("key=long value=string") && e.getMessage().contains("nothing was written"),
        e.getMessage());
    assertEquals(1, client.count("names"));
  }

  /** A text file's lines are honestly bytes too: a long/bytes table takes them with --value bytes, and says so. */
  @Test
  void textIntoALongBytesTable_refusedWithTheWayOut_thenLoadedAsBytes() throws Exception {
    TableSpec longBytes = TableSpec.of(PairTypes.of(DataType.LONG, DataType.BYTES));
    client.createTable("raw-lines", longBytes, false);
    Path text = dir.resolve("lines.txt");
    Files.writeString(text, "alpha\nbeta\n");
    IllegalArgumentException e = assertThrows(IllegalArgumentException.class,
        () -> BulkIO.load(client, "raw-lines", text, n -> { }));
    assertTrue(e.getMessage().contains("holds key=long value=bytes") && e.getMessage().contains("--value bytes"),
        e.getMessage());
    assertEquals(0, client.count("raw-lines"));
    assertEquals(2, BulkIO.load(client, "raw-lines", text, DataType.BYTES, n -> { }));
    assertEquals("beta", new String(client.get("raw-lines", KeyCodec.encodeLong(6)).orElseThrow(),
        StandardCharsets.UTF_8));
    // and a string table does not take lines declared as bytes
    client.createTable("str-lines", BulkIO.textTable(), false);
    assertThrows(IllegalArgumentException.class, () -> BulkIO.load(client, "str-lines", text, DataType.BYTES, n -> { }));
    assertEquals(0, client.count("str-lines"));
  }

  @Test
  void jobDeclaringOtherTypesThanItsInput_isRefusedBeforeAnyTask() {
    client.createTable("typed", strings(), false);
    client.put("typed", strings().types(), KeyCodec.encodeString("k"), "v".getBytes(StandardCharsets.UTF_8));
    Job job = Job.named("mistyped").input("typed", Serdes.LONG, Serdes.STRING)
        .map(TestJobs.ModTen.class, Serdes.LONG, Serdes.LONG)
        .output("mistyped-out").build();
    JobFailedException e = assertThrows(JobFailedException.class, () -> client.submit(job).await());
    assertEquals(ErrorCode.BAD_REQUEST, e.code());
    assertTrue(e.getMessage().contains("stage 0 reads table 'typed', which holds key=string value=string, as key=long"),
        e.getMessage());
    assertTrue(client.listTables().stream().noneMatch(t -> t.name().equals("mistyped-out")));
  }

  @Test
  void tableWithPairsOfOtherTypes_stillDumpsWhole_withAWarning() throws Exception {
    client.createTable("mixed", strings(), false);
    client.put("mixed", strings().types(), KeyCodec.encodeString("fine"), "text".getBytes(StandardCharsets.UTF_8));
    client.put("mixed", strings().types(), KeyCodec.encodeLong(7), "long-keyed".getBytes(StandardCharsets.UTF_8)); // a client that mis-encodes
    Path out = dir.resolve("mixed.txt");
    PrintStream err = System.err;
    ByteArrayOutputStream captured = new ByteArrayOutputStream();
    System.setErr(new PrintStream(captured, true, StandardCharsets.UTF_8));
    long n;
    try {
      n = BulkIO.dump(client, "mixed", out, x -> { });
    } finally {
      System.setErr(err);
    }
    assertEquals(2, n);
    List<String> lines = Files.readAllLines(out);
    assertEquals(2, lines.size(), lines.toString());
    assertTrue(lines.contains("fine\ttext"), lines.toString());
    assertTrue(lines.contains("0x8000000000000007\tlong-keyed"), lines.toString());
    String warning = captured.toString(StandardCharsets.UTF_8);
    assertTrue(warning.contains("1 key(s) or value(s) of table 'mixed' do not decode as key=string value=string"),
        warning);
  }

  private static final PairTypes LONG_STRING = PairTypes.of(DataType.LONG, DataType.STRING);

  private static void assertRefused(String table, Runnable write) {
    SssException e = assertThrows(SssException.class, write::run);
    assertEquals(ErrorCode.TYPE_MISMATCH, e.code(), e.getMessage());
    assertTrue(e.getMessage().contains("table '" + table + "' holds key=string value=string but this batch was"
        + " written as "), e.getMessage());
    assertTrue(e.getMessage().contains("nothing was written"), e.getMessage());
  }

  @Test
  void putAndPutAllOfOtherTypes_areRefusedWithNothingWritten() {
    client.createTable("put-typed", strings(), false);
    List<Pair> pairs = new ArrayList<>();
    for (long i = 0; i < 100; i++) { // every node gets a share
      pairs.add(new Pair(KeyCodec.encodeLong(i), "v".getBytes(StandardCharsets.UTF_8)));
    }
    assertRefused("put-typed", () -> client.put("put-typed", LONG_STRING, KeyCodec.encodeLong(1), new byte[] {1}));
    assertRefused("put-typed", () -> client.putAll("put-typed", LONG_STRING, pairs));
    assertEquals(0, client.count("put-typed"));
    // the same client writes the declared types at once
    client.put("put-typed", strings().types(), KeyCodec.encodeString("k"), "v".getBytes(StandardCharsets.UTF_8));
    assertEquals(1, client.count("put-typed"));
  }

  @Test
  void bytesIsNotAWildcard_eitherWay() {
    client.createTable("strings-only", strings(), false);
    client.createTable("bytes-only", TableSpec.defaults(), false);
    byte[] key = KeyCodec.encodeString("k");
    assertRefused("strings-only", () -> client.put("strings-only", PairTypes.BYTES, key, new byte[] {1}));
    SssException e = assertThrows(SssException.class,
        () -> client.put("bytes-only", strings().types(), key, new byte[] {1}));
    assertEquals(ErrorCode.TYPE_MISMATCH, e.code());
    assertTrue(e.getMessage().contains("holds key=bytes value=bytes but this batch was written as key=string"),
        e.getMessage());
    assertEquals(0, client.count("strings-only"));
    assertEquals(0, client.count("bytes-only"));
  }

  @Test
  void bulkWriterOfOtherTypes_isRefusedWithNothingWritten() {
    client.createTable("bulk-typed", strings(), false);
    SssException e = assertThrows(SssException.class, () -> {
      try (BulkWriter w = client.writer("bulk-typed", LONG_STRING)) {
        for (long i = 0; i < 10_000; i++) {
          w.put(KeyCodec.encodeLong(i), "line".getBytes(StandardCharsets.UTF_8));
        }
      }
    });
    assertEquals(ErrorCode.TYPE_MISMATCH, e.code(), e.getMessage());
    assertEquals(0, client.count("bulk-typed"));
  }

  /** A stage whose serdes encode other types than its output table's is refused before any task runs. */
  @Test
  void stageOutputAndShuffleBatchesOfOtherTypes_areRefused() {
    String jobId = "typecheck0001";
    String table = "sss-tmp-" + jobId + "-0";
    client.createTable("stage-in", BulkIO.textTable(), false);
    client.put("stage-in", BulkIO.textTable().types(), KeyCodec.encodeLong(1), "x".getBytes(StandardCharsets.UTF_8));
    for (int n = 0; n < client.spec().nodeCount(); n++) {
      NodeChannels.await(ClientInternals.channels(client).get(n).call(Request.newBuilder().setCreateTable(CreateTable.newBuilder()
          .setTable(table).setJobId(jobId).setOptions(TableOptions.newBuilder().setMultiValued(true)
              .setKeyType(DataType.STRING).setValueType(DataType.STRING)))), Duration.ofSeconds(10)).release();
    }
    StageSpec spec = StageSpec.newBuilder().setIndex(0).setKind(StageSpec.Kind.MAP)
        .setInputTable("stage-in").setOutputTable(table).setOutputMultiValued(true)
        .setFunctionClass(TestJobs.ModTen.class.getName())
        .setInputKeySerde(Serdes.LONG.getClass().getName()).setInputValueSerde(Serdes.STRING.getClass().getName())
        .setOutputKeySerde(Serdes.LONG.getClass().getName()).setOutputValueSerde(Serdes.LONG.getClass().getName())
        .build();
    SssException stage = assertThrows(SssException.class, () -> NodeChannels.await(ClientInternals.channels(client).get(0).call(
        Request.newBuilder().setRunStage(RunStage.newBuilder().setJobId(jobId).setStage(spec)), null, Duration.ZERO),
        Duration.ofSeconds(30)).release());
    assertEquals(ErrorCode.TYPE_MISMATCH, stage.code(), stage.getMessage());
    assertTrue(stage.getMessage().contains("stage 0 of job " + jobId + " encodes its output with "
        + Serdes.LONG.getClass().getName()) && stage.getMessage().contains("say key=long value=long, but its output"
        + " table '" + table + "' holds key=string value=string"), stage.getMessage());

    ByteBuf body = Unpooled.buffer();
    PairBlock.write(body, StoredKeys.storedKey(0, KeyCodec.encodeLong(1)), KeyCodec.encodeLong(2));
    SssException shuffle = assertThrows(SssException.class, () -> NodeChannels.await(ClientInternals.channels(client).get(0).call(
        Request.newBuilder().setShuffleBatch(ShuffleBatch.newBuilder().setJobId(jobId).setTable(table)
            .setPairCount(1).setSourceNode(1).setKeyType(DataType.LONG).setValueType(DataType.LONG)), body),
        Duration.ofSeconds(10)).release());
    assertEquals(ErrorCode.TYPE_MISMATCH, shuffle.code(), shuffle.getMessage());
    assertEquals(0, client.count(table));
    client.dropTable(table, false);
  }

  private static void createOnNode(int node, String table, TableSpec options) {
    NodeChannels.await(ClientInternals.channels(client).get(node).call(Request.newBuilder().setCreateTable(CreateTable.newBuilder()
        .setTable(table).setOptions(WireTypes.toProto(options)))), Duration.ofSeconds(10)).release();
  }

  private static List<Pair> stringPairs(int n) {
    List<Pair> pairs = new ArrayList<>();
    for (int i = 0; i < n; i++) { // every node gets a share
      pairs.add(new Pair(KeyCodec.encodeString("k" + i), "v".getBytes(StandardCharsets.UTF_8)));
    }
    return pairs;
  }

  /**
   * A table left on one node by a drop that did not reach it (the node was down) holds other
   * types than the table created again under its name. Completing the create around it would
   * give the table's nodes different contracts: a write of the new types would then be refused
   * by that node after the others had taken their shares, half written.
   */
  @Test
  void createOverALeftoverOfOtherTypesOnOneNode_isRefused_notCompletedIntoAMixedTable() {
    createOnNode(1, "leftover", BulkIO.textTable());
    SssException e;
    try {
      client.createTable("leftover", strings(), false);
      e = null;
    } catch (SssException refused) {
      e = refused;
    }
    if (e == null) {
      long before = client.count("leftover");
      Throwable put = null;
      try {
        client.putAll("leftover", strings().types(), stringPairs(100));
      } catch (RuntimeException x) {
        put = x;
      }
      throw new AssertionError("createTable('leftover', string/string) completed around node 1's long/string"
          + " leftover; a putAll of string/string then wrote " + (client.count("leftover") - before)
          + " of 100 pairs and failed with: " + put);
    }
    assertEquals(ErrorCode.TABLE_EXISTS, e.code(), e.getMessage());
    assertTrue(e.getMessage().contains("node 1") && e.getMessage().contains("key=long value=string")
        && e.getMessage().contains("key=string value=string"), e.getMessage());
    // the way out the message gives: drop it, create it again
    client.dropTable("leftover", false);
    client.createTable("leftover", strings(), false);
    client.putAll("leftover", strings().types(), stringPairs(100));
    assertEquals(100, client.count("leftover"));
  }

  /** The same with ifAbsent: nodes that hold the name with different types are not "the table exists". */
  @Test
  void createIfAbsentWhereNodesHoldOtherTypes_isRefused() {
    createOnNode(2, "half-typed", BulkIO.textTable());
    SssException e = assertThrows(SssException.class, () -> client.createTable("half-typed", strings(), true));
    assertEquals(ErrorCode.TABLE_EXISTS, e.code(), e.getMessage());
    assertTrue(e.getMessage().contains("node 2") && e.getMessage().contains("key=long value=string"), e.getMessage());
    // a table that exists whole, of other types, is still "exists" for ifAbsent (load checks it itself)
    client.dropTable("half-typed", false);
    client.createTable("half-typed", BulkIO.textTable(), false);
    client.createTable("half-typed", strings(), true);
  }

  /**
   * A type this node does not know (a newer client's) is neither the table's type nor an
   * internal error: the batch is refused as a bad request naming the number, and a table cannot
   * be created with such a type (no write could ever match it).
   */
  @Test
  void unknownTypeNumbers_areBadRequests_notInternalErrors() {
    client.createTable("known-types", TableSpec.defaults(), false);
    ByteBuf body = Unpooled.buffer();
    PairBlock.write(body, StoredKeys.storedKey(0, KeyCodec.encodeLong(1)), new byte[] {1});
    int node = client.spec().partitionMap().ownerOf(0);
    SssException put = assertThrows(SssException.class, () -> NodeChannels.await(ClientInternals.channels(client).get(node).call(
        Request.newBuilder().setPutBatch(org.sss.core.proto.PutBatch.newBuilder().setTable("known-types")
            .setPairCount(1).setKeyTypeValue(42)), body), Duration.ofSeconds(10)).release());
    assertEquals(ErrorCode.BAD_REQUEST, put.code(), put.getMessage());
    assertTrue(put.getMessage().contains("42"), put.getMessage());
    assertEquals(0, client.count("known-types"));

    // the client's TableSpec cannot name such a type; a node refuses it from the wire all the same
    SssException create = assertThrows(SssException.class, () -> NodeChannels.await(ClientInternals.channels(client)
        .get(node).call(Request.newBuilder().setCreateTable(CreateTable.newBuilder().setTable("unknown-types")
            .setOptions(TableOptions.newBuilder().setValueTypeValue(42)))), Duration.ofSeconds(10)).release());
    assertEquals(ErrorCode.BAD_REQUEST, create.code(), create.getMessage());
    assertTrue(client.listTables().stream().noneMatch(t -> t.name().equals("unknown-types")));
  }

  /**
   * input(...) names the first stage's table and types. Called again after a stage it would
   * move the job to another input table while the next stage declares the new types for what
   * is in fact the previous stage's output: stage 0 would be checked against a table with its
   * old serdes, and stage 1 would read the table between the stages by types it does not hold,
   * with no check at all.
   */
  @Test
  void inputAfterAStage_isRefusedByTheBuilder() {
    Job.Builder b = Job.named("two-inputs").input("typed-a", Serdes.LONG, Serdes.STRING)
        .map(TestJobs.ModTen.class, Serdes.LONG, Serdes.LONG);
    IllegalStateException e = assertThrows(IllegalStateException.class,
        () -> b.input("typed-b", Serdes.LONG, Serdes.STRING));
    assertTrue(e.getMessage().contains("input"), e.getMessage());
  }

  /**
   * A double is 8 bytes, as a long is: a key or value of another length in a double table does
   * not decode (it is not a double whose first 8 bytes happen to be there), so it prints raw and
   * is counted in the warning, as in a long table.
   */
  @Test
  void doubleTableWithPairsOfOtherLengths_printsThemRaw_withAWarning() throws Exception {
    TableSpec doubles = TableSpec.of(PairTypes.of(DataType.DOUBLE, DataType.DOUBLE));
    client.createTable("doubles", doubles, false);
    client.put("doubles", doubles.types(), Serdes.DOUBLE.encodeKey(1.5), Serdes.DOUBLE.encodeValue(2.5));
    // a client that declares doubles and writes a string key and a 12-byte value
    client.put("doubles", doubles.types(), KeyCodec.encodeString("not a double"), new byte[12]);
    Path out = dir.resolve("doubles.txt");
    PrintStream err = System.err;
    ByteArrayOutputStream captured = new ByteArrayOutputStream();
    System.setErr(new PrintStream(captured, true, StandardCharsets.UTF_8));
    try {
      assertEquals(2, BulkIO.dump(client, "doubles", out, x -> { }));
    } finally {
      System.setErr(err);
    }
    List<String> lines = Files.readAllLines(out);
    assertTrue(lines.contains("1.5\t2.5"), lines.toString());
    String rawKey = "0x" + java.util.HexFormat.of().formatHex(KeyCodec.encodeString("not a double"));
    assertTrue(lines.contains(rawKey + "\t0x000000000000000000000000"), lines.toString());
    String warning = captured.toString(StandardCharsets.UTF_8);
    assertTrue(warning.contains("2 key(s) or value(s) of table 'doubles' do not decode as key=double value=double"),
        warning);
  }
}
