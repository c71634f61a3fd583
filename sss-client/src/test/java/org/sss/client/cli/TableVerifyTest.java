package org.sss.client.cli;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNotEquals;
import static org.junit.jupiter.api.Assertions.assertNotNull;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.netty.buffer.ByteBuf;
import io.netty.buffer.Unpooled;
import java.io.IOException;
import java.nio.file.Path;
import java.time.Duration;
import java.util.concurrent.TimeUnit;
import java.util.ArrayList;
import java.util.List;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.MethodOrderer;
import org.junit.jupiter.api.Order;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.TestInstance;
import org.junit.jupiter.api.TestMethodOrder;
import org.junit.jupiter.api.io.TempDir;
import org.sss.client.SssClient;
import org.sss.client.TableSpec;
import org.sss.client.cluster.CopyCheck;
import org.sss.client.cluster.SssCluster;
import org.sss.client.internal.ClientInternals;
import org.sss.client.internal.NodeChannels;
import org.sss.core.api.Pair;
import org.sss.core.api.Serdes;
import org.sss.core.cluster.ClusterSpec;
import org.sss.core.keys.PairTypes;
import org.sss.core.keys.StoredKeys;
import org.sss.client.internal.WireTypes;
import org.sss.core.proto.CreateTable;
import org.sss.core.proto.DataType;
import org.sss.core.proto.PutBatch;
import org.sss.core.proto.Request;
import org.sss.core.transport.PairBlock;
import org.sss.core.transport.SssException;

/**
 * {@code table verify} and {@link CopyCheck} against copies made to differ the way a writer that
 * dies midway leaves them: a batch sent to one copy of a partition only (a new key, then another
 * value of an existing key). Copies that agree, a multi-valued table's included (its copies give a
 * client's value stored keys of their own), are reported the same. {@code --repair} makes a node
 * copy its partitions again: for one differing partition, its second copy's node, so that the
 * first copy's pairs end on both; for two sharing a node, that node, so the other copies win.
 */
@TestInstance(TestInstance.Lifecycle.PER_CLASS)
@TestMethodOrder(MethodOrderer.OrderAnnotation.class) // the repairs, last, copy nodes' every table again
class TableVerifyTest {
  private static final TableSpec TEXT = TableSpec.of(PairTypes.of(DataType.LONG, DataType.STRING));
  private static final TableSpec MULTI = TableSpec.of(PairTypes.of(DataType.LONG, DataType.LONG)).multiValued(true);
  private static final int PARTITIONS = 12;

  @TempDir
  static Path work;

  private SssCluster cluster;
  private String clusterFile;

  @BeforeAll
  void start() throws IOException {
    cluster = SssCluster.embedded(3, PARTITIONS, 2);
    Path file = work.resolve("cluster.properties");
    cluster.spec().save(file);
    clusterFile = file.toString();
  }

  @AfterAll
  void stop() {
    if (cluster != null) {
      cluster.close();
    }
  }

  private CommandLineTest.Run verify(String table) {
    return CommandLineTest.sss("--cluster", clusterFile, "table", "verify", table);
  }

  @Test
  @Order(3)
  void copiesThatAgree_areTheSame_andOneWrittenToOneCopyOnly_isNamed_andRepaired() {
    ClusterSpec spec = cluster.spec();
    try (SssClient client = SssClient.connect(spec)) {
      client.createTable("text", TEXT, false);
      client.createTable("multi", MULTI, false);
      List<Pair> text = new ArrayList<>();
      List<Pair> multi = new ArrayList<>();
      for (long i = 0; i < 500; i++) {
        text.add(new Pair(Serdes.LONG.encodeKey(i), Serdes.STRING.encodeValue("line " + i)));
        for (long v = 0; v <= i % 3; v++) {
          multi.add(new Pair(Serdes.LONG.encodeKey(i), Serdes.LONG.encodeValue(v * 1000 + i)));
        }
      }
      client.putAll("text", TEXT.types(), text);
      client.putAll("multi", MULTI.types(), multi);

      for (String table : List.of("text", "multi")) {
        CopyCheck.Report same = settled(client, table);
        assertEquals(2, same.copies());
        assertEquals(PARTITIONS, same.partitions().size());
        assertEquals(List.of(), same.differing(), table);
        assertEquals(List.of(), same.incomplete(), table);
        long firstCopies = same.partitions().stream().mapToLong(p -> p.copies().get(0).pairs()).sum();
        assertEquals(table.equals("text") ? 500 : multi.size(), firstCopies, table + ": every pair summed up once");
        CommandLineTest.Run ok = settledVerify(table);
        assertEquals(0, ok.status(), ok::toString);
        assertEquals(table + ": " + PARTITIONS + " partitions of 2 copies: every copy the same\n", ok.out(), ok::toString);
      }

      // a new key, sent to the first copy of its partition only
      long added = 10_000;
      int partition = spec.partitionMap().partitionOf(Serdes.LONG.encodeKey(added));
      int first = spec.placement().replicasOf(partition).get(0);
      int second = spec.placement().replicasOf(partition).get(1);
      writeToOneCopy(client, first, partition, added, "only on node " + first);
      CopyCheck.Report one = settled(client, "text");
      assertEquals(1, one.differing().size(), one.toString());
      CopyCheck.Partition differs = one.differing().get(0);
      assertEquals(partition, differs.partition());
      assertEquals(List.of(first, second), differs.copies().stream().map(CopyCheck.Copy::node).toList());
      assertEquals(differs.copies().get(1).pairs() + 1, differs.copies().get(0).pairs(), differs.toString());
      CommandLineTest.Run named = settledVerify("text");
      assertEquals(1, named.status(), named::toString);
      assertTrue(named.out().startsWith("partition " + partition + " differs: node " + first + " "), named::toString);
      assertTrue(named.out().endsWith("text: " + PARTITIONS + " partitions of 2 copies: 1 with copies that differ,"
          + " 0 with copies not compared\n"), named::toString);

      // the same key, another value on the second copy: as many pairs, but not the same ones
      writeToOneCopy(client, second, partition, added, "another value on node " + second);
      CopyCheck.Partition values = settled(client, "text").differing().get(0);
      assertEquals(values.copies().get(0).pairs(), values.copies().get(1).pairs());
      assertNotEquals(values.copies().get(0).digest(), values.copies().get(1).digest());

      // repaired: the second copy's node copies its partitions again, the first copy winning
      CommandLineTest.Run repaired = CommandLineTest.sss("--cluster", clusterFile, "table", "verify", "text", "--repair");
      assertEquals(0, repaired.status(), repaired::toString);
      assertTrue(repaired.out().contains("node " + second + " copies its partitions again from the other copies"),
          repaired::toString);
      assertTrue(repaired.out().contains("node " + second + " serves again"), repaired::toString);
      assertTrue(repaired.out().endsWith("text: " + PARTITIONS + " partitions of 2 copies: every copy the same\n"),
          repaired::toString);
      CopyCheck.Report after = settled(client, "text");
      assertEquals(List.of(), after.differing());
      assertEquals(List.of(), after.incomplete());
      assertEquals(501, after.partitions().stream().mapToLong(p -> p.copies().get(1).pairs()).sum(),
          "every second copy holds the 500 pairs and the one first written to a first copy only");
      assertEquals("only on node " + first, Serdes.STRING.decodeValue(client.get("text", Serdes.LONG.encodeKey(added)).orElseThrow()));
      assertEquals(0, settledVerify("multi").status(), "the other table the node copied again");
      assertEquals(multi.size(), client.count("multi"));
    }
  }

  /** A copy its node cannot sum up (here: a table a failed create left off node 2) is said not compared, not the same. */
  @Test
  @Order(1)
  void aCopyNotSummedUp_isNotCompared() {
    try (SssClient client = SssClient.connect(cluster.spec())) {
      for (int node : new int[] {0, 1}) {
        NodeChannels.await(ClientInternals.channels(client).get(node).call(Request.newBuilder().setCreateTable(
            CreateTable.newBuilder().setTable("partial").setOptions(WireTypes.toProto(TEXT.replication(2))))),
            SssClient.DEFAULT_TIMEOUT).release();
      }
      List<Integer> onNode2 = new ArrayList<>();
      for (int p = 0; p < PARTITIONS; p++) {
        if (cluster.spec().placement().replicasOf(p).subList(0, 2).contains(2)) {
          onNode2.add(p);
        }
      }
      CopyCheck.Report r = CopyCheck.run(client, "partial");
      for (long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(30);
           r.incomplete().size() > onNode2.size() && System.nanoTime() < deadline; ) {
        sleep(); // another node's view lapsed for a moment (see settled)
        r = CopyCheck.run(client, "partial");
      }
      assertEquals(onNode2, r.incomplete().stream().map(CopyCheck.Partition::partition).toList());
      assertEquals(List.of(), r.differing(), "the copies that were summed up agree");
      for (CopyCheck.Partition p : r.incomplete()) {
        CopyCheck.Copy missing = p.copies().stream().filter(c -> c.node() == 2).findFirst().orElseThrow();
        assertTrue(missing.notCompared().contains("partial"), missing.toString());
      }
      CommandLineTest.Run run = verify("partial");
      assertEquals(1, run.status(), run::toString);
      assertTrue(run.out().contains("not compared: "), run::toString);
      assertTrue(run.out().endsWith("0 with copies that differ, " + onNode2.size() + " with copies not compared\n"),
          run::toString);

      // while a replicated table is missing on a node, no node copies again: the catch-up would
      // drop its copy of that table, perhaps the only one
      client.createTable("guarded", TEXT, false);
      int p = onNode2.get(0);
      writeToOneCopy(client, "guarded", cluster.spec().placement().replicasOf(p).get(0), p, 7, "on one copy only");
      CopyCheck.Report differing = settled(client, "guarded");
      assertEquals(List.of(p), differing.differing().stream().map(CopyCheck.Partition::partition).toList());
      SssException refused = assertThrows(SssException.class,
          () -> CopyCheck.repair(client, differing, Duration.ofMinutes(2), line -> { }));
      assertTrue(refused.getMessage().contains("table 'partial' is missing on node(s) [2]"), refused.getMessage());
      CommandLineTest.Run cli = CommandLineTest.sss("--cluster", clusterFile, "table", "verify", "guarded", "--repair");
      assertEquals(TableCommand.Verify.FAILED, cli.status(), cli::toString);
      assertTrue(cli.err().contains("'partial'"), cli::toString);
      assertEquals(List.of(p), settled(client, "guarded").differing().stream().map(CopyCheck.Partition::partition)
          .toList(), "nothing was repaired");
      client.dropTable("guarded", true);
      client.dropTable("partial", true);
    }
  }

  @Test
  @Order(2)
  void aTableThatDoesNotExist_isNamed() {
    CommandLineTest.Run missing = verify("no-such-table");
    assertEquals(TableCommand.Verify.FAILED, missing.status(), "not 1, which says copies differ: " + missing);
    assertTrue(missing.err().contains("no-such-table"), missing::toString);
  }

  /**
   * Two partitions differ, sharing the node that holds the second copy of one and the first copy
   * of the other: that node alone copies again (it holds the most differing copies), so each
   * partition keeps its other node's copy, the second copy of the latter included.
   */
  @Test
  @Order(4)
  void twoPartitionsSharingANode_thatNodeCopiesAgain_theOtherCopiesWin() {
    ClusterSpec spec = cluster.spec();
    try (SssClient client = SssClient.connect(spec)) {
      client.createTable("pairs", TEXT, true);
      long[] chosen = null;
      for (long a = 20_000; chosen == null && a < 20_200; a++) {
        for (long b = 20_000; b < 20_200; b++) {
          int p = spec.partitionMap().partitionOf(Serdes.LONG.encodeKey(a));
          int q = spec.partitionMap().partitionOf(Serdes.LONG.encodeKey(b));
          List<Integer> pc = spec.placement().replicasOf(p).subList(0, 2);
          List<Integer> qc = spec.placement().replicasOf(q).subList(0, 2);
          if (p != q && pc.get(1).equals(qc.get(0)) && !pc.get(0).equals(qc.get(1))) {
            chosen = new long[] {a, b, p, q, pc.get(0), pc.get(1), qc.get(1)};
            break;
          }
        }
      }
      assertNotNull(chosen, "two such partitions among 12 on 3 nodes");
      long onFirst = chosen[0];
      long onShared = chosen[1];
      int shared = (int) chosen[5];
      writeToOneCopy(client, "pairs", (int) chosen[4], (int) chosen[2], onFirst, "on the first copy of its partition");
      writeToOneCopy(client, "pairs", shared, (int) chosen[3], onShared, "on the shared node only");
      CopyCheck.Report before = settled(client, "pairs");
      assertEquals(List.of((int) Math.min(chosen[2], chosen[3]), (int) Math.max(chosen[2], chosen[3])),
          before.differing().stream().map(CopyCheck.Partition::partition).toList());

      List<String> said = new ArrayList<>();
      CopyCheck.Report after = CopyCheck.repair(client, before, Duration.ofMinutes(2), said::add);
      assertEquals(List.of(), after.differing(), said.toString());
      assertEquals(List.of("node " + shared + " copies its partitions again from the other copies"),
          said.stream().filter(l -> l.contains("copies its partitions again")).map(l -> l.substring(0, l.indexOf(':')))
              .toList(), "one node copied again: " + said);
      assertEquals("on the first copy of its partition",
          Serdes.STRING.decodeValue(client.get("pairs", Serdes.LONG.encodeKey(onFirst)).orElseThrow()));
      assertTrue(client.get("pairs", Serdes.LONG.encodeKey(onShared)).isEmpty(),
          "the pair only the shared node held went with its copy: the other copy, a second copy, won");
      assertEquals(1, client.count("pairs"));
    }
  }

  /**
   * The copies compared once every node sums its copies up: on a loaded machine a node's view may
   * lapse for a moment (its lease), and it then answers NOT_SERVING, its copies not compared.
   */
  private static CopyCheck.Report settled(SssClient client, String table) {
    long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(30);
    while (true) {
      CopyCheck.Report r = CopyCheck.run(client, table);
      if (r.incomplete().isEmpty() || System.nanoTime() > deadline) {
        return r;
      }
      sleep();
    }
  }

  /** {@code table verify} once every copy was compared (see {@link #settled}). */
  private CommandLineTest.Run settledVerify(String table) {
    long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(30);
    while (true) {
      CommandLineTest.Run r = verify(table);
      boolean everyCopyCompared = r.out().contains("every copy the same") || r.out().contains(" 0 with copies not compared");
      if (everyCopyCompared || System.nanoTime() > deadline) {
        return r;
      }
      sleep();
    }
  }

  private static void sleep() {
    try {
      Thread.sleep(200);
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
      throw new IllegalStateException(e);
    }
  }

  /** A put of one pair to one node only, as a writer sends it to each copy in turn and may die between them. */
  private static void writeToOneCopy(SssClient client, int node, int partition, long key, String value) {
    writeToOneCopy(client, "text", node, partition, key, value);
  }

  private static void writeToOneCopy(SssClient client, String table, int node, int partition, long key, String value) {
    ByteBuf body = Unpooled.buffer();
    PairBlock.write(body, StoredKeys.storedKey(partition, Serdes.LONG.encodeKey(key)), Serdes.STRING.encodeValue(value));
    long epoch = ClientInternals.view(client).getView().getEpoch();
    NodeChannels.await(ClientInternals.channels(client).get(node).call(Request.newBuilder().setPutBatch(
        PutBatch.newBuilder().setTable(table).setPairCount(1).setKeyType(DataType.LONG).setValueType(DataType.STRING)
            .setReplication(2).setViewEpoch(epoch)), body), SssClient.DEFAULT_TIMEOUT).release();
  }
}
