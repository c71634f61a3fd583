package org.sss.server.execution;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;
import static org.sss.server.execution.StageFixture.assertSameContents;
import static org.sss.server.execution.StageFixture.contents;

import com.google.protobuf.ByteString;
import io.netty.buffer.ByteBuf;
import io.netty.buffer.CompositeByteBuf;
import io.netty.buffer.Unpooled;
import io.netty.handler.codec.CorruptedFrameException;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Random;
import java.util.TreeMap;
import java.util.function.Function;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;
import org.sss.core.cluster.ClusterSpec;
import org.sss.core.cluster.NodeAddress;
import org.sss.core.cluster.PartitionMap;
import org.sss.core.cluster.ReplicaPlacement;
import org.sss.core.keys.StoredKeys;
import org.sss.core.proto.BuiltFile;
import org.sss.core.proto.DataType;
import org.sss.core.proto.ErrorCode;
import org.sss.core.proto.Response;
import org.sss.core.proto.ShuffleBatch;
import org.sss.core.proto.TableOptions;
import org.sss.core.transport.PairBlock;
import org.sss.kvs.NodeStore;
import org.sss.kvs.PartitionFiles;
import org.sss.kvs.StoreException;
import org.sss.kvs.StoreTable;

/**
 * A shuffle batch received by node 0 of a two-node cluster: its pairs land exactly as sent, or,
 * when any of them could not be stored or read back where it belongs, none of them.
 */
class ShuffleReceiverTest {
  private static final int PARTITIONS = 8;
  private static final int MAX_VALUE = 4096;
  private static final int SELF = 0;
  private static final int SENDER = 1;

  @TempDir
  Path dir;

  private final ClusterSpec spec = StageFixture.cluster(2, PARTITIONS);
  private final PartitionMap map = spec.partitionMap();
  private NodeStore store;
  private ShuffleReceiver receiver;

  @BeforeEach
  void open() {
    store = NodeStore.open(dir);
    receiver = new ShuffleReceiver(store, MAX_VALUE, spec.placement(), SELF);
  }

  @AfterEach
  void close() {
    store.close();
  }

  private StoreTable table(boolean multiValued) {
    return store.createForJob("job1", "sss-tmp-job1-0", TableOptions.newBuilder().setMultiValued(multiValued).build(),
        "", false);
  }

  /**
   * {@code n} pairs for partitions of node 0 as a sender stores them: partition, key and, for a
   * multi-valued table, the sender's uniquifier; keys repeat, so that a key holds several values.
   */
  private List<byte[][]> pairs(int n, boolean multiValued) {
    Random random = new Random(3);
    List<Integer> mine = map.partitionsOf(SELF);
    List<byte[][]> out = new ArrayList<>();
    int[] valueLengths = {0, 1, 127, 128, 1000, MAX_VALUE};
    for (int i = 0; i < n; i++) {
      byte[] key = new byte[1 + random.nextInt(40)];
      random.nextBytes(key);
      byte[] stored = StoredKeys.storedKey(mine.get(random.nextInt(mine.size())), key);
      if (multiValued) {
        stored = StoredKeys.withUniquifier(stored, SENDER, 1000 + i);
      }
      byte[] value = new byte[valueLengths[i % valueLengths.length]];
      random.nextBytes(value);
      out.add(new byte[][] {stored, value});
    }
    return out;
  }

  private static ByteBuf body(List<byte[][]> pairs) {
    ByteBuf block = Unpooled.buffer();
    for (byte[][] p : pairs) {
      PairBlock.write(block, p[0], p[1]);
    }
    return block;
  }

  private static ShuffleBatch batch(String table, int pairs) {
    return ShuffleBatch.newBuilder().setJobId("job1").setTable(table).setPairCount(pairs).setSourceNode(SENDER).build();
  }

  private long receive(StoreTable table, int announced, ByteBuf body) {
    try {
      return receiver.write(batch(table.name(), announced), body);
    } finally {
      body.release();
    }
  }

  /** The model: what a table holds after these batches, by stored key (a later pair of a key wins). */
  private static TreeMap<byte[], byte[]> model(List<byte[][]> pairs) {
    TreeMap<byte[], byte[]> m = StageFixture.sorted();
    for (byte[][] p : pairs) {
      m.put(p[0], p[1]);
    }
    return m;
  }

  @ParameterizedTest(name = "multi-valued {0}")
  @ValueSource(booleans = {false, true})
  void everyPairLandsExactly(boolean multiValued) {
    StoreTable t = table(multiValued);
    List<byte[][]> first = pairs(300, multiValued);
    // a later batch writing 50 of those keys again, with new values (and, multi-valued, new sequences)
    List<byte[][]> second = new ArrayList<>();
    for (int i = 0; i < 50; i++) {
      byte[] stored = first.get(i)[0];
      if (multiValued) {
        byte[] key = java.util.Arrays.copyOf(stored, stored.length - StoredKeys.UNIQUIFIER_BYTES);
        stored = StoredKeys.withUniquifier(key, SENDER, 5000 + i);
      }
      second.add(new byte[][] {stored, new byte[] {(byte) i, 42}});
    }
    assertEquals(300, receive(t, 300, body(first)));
    // a batch that arrives split over buffers (as a large frame does)
    ByteBuf whole = body(second);
    CompositeByteBuf split = Unpooled.compositeBuffer();
    int half = whole.readableBytes() / 2;
    split.addComponents(true, Unpooled.directBuffer(half).writeBytes(whole, half),
        Unpooled.directBuffer(whole.readableBytes()).writeBytes(whole));
    whole.release();
    assertEquals(50, receive(t, 50, split));
    List<byte[][]> all = new ArrayList<>(first);
    all.addAll(second);
    assertSameContents(model(all), contents(t));
  }

  /**
   * Batches of one sending writer (a stream) whose keys rise go into files of their own as they
   * arrive, not into memory (a job's output: {@code OrderedStreams}); a later batch of that
   * writer rewriting some keys still wins.
   */
  @Test
  void batchesOfOneStreamInKeyOrder_goToFilesAsTheyCome_andALaterRewriteWins() throws java.io.IOException {
    StoreTable t = table(false);
    List<byte[][]> ascending = new ArrayList<>();
    model(pairs(300, false)).forEach((k, v) -> ascending.add(new byte[][] {k, v}));
    List<byte[][]> rewrite = new ArrayList<>();
    for (int i = 0; i < 300; i += 6) {
      rewrite.add(new byte[][] {ascending.get(i)[0], new byte[] {(byte) i, 7}});
    }
    for (List<byte[][]> part : List.of(ascending.subList(0, 150), ascending.subList(150, 300), rewrite)) {
      ByteBuf body = body(part);
      try {
        receiver.write(batch(t.name(), part.size()).toBuilder().setStream(1).build(), body);
      } finally {
        body.release();
      }
      try (java.util.stream.Stream<Path> files = java.nio.file.Files.list(dir.resolve("ingest"))) {
        assertEquals(part != rewrite, files.findAny().isPresent(), part == rewrite
            ? "the rewrite broke the stream: its files were ingested before the rewrite was taken"
            : "the stream's pairs are in files before any seal");
      }
    }
    List<byte[][]> all = new ArrayList<>(ascending);
    all.addAll(rewrite);
    t.flush(); // stores the gathered rewrite, then any stream file: a file left behind would win wrongly
    assertSameContents(model(all), contents(t));
  }

  /** A file a sender built of {@code pairs} (ascending stored keys) in a store of its own. */
  private PartitionFiles.BuiltFile built(NodeStore sender, List<byte[][]> pairs) {
    StoreTable t = sender.createForJob("job1", "sss-tmp-job1-0", TableOptions.getDefaultInstance(), "", false);
    PartitionFiles files = new PartitionFiles(t, PartitionFiles.MAX_FILE_BYTES);
    for (byte[][] p : pairs) {
      assertTrue(files.add(StoredKeys.partitionOf(p[0]), p[0], p[0].length, p[1]));
    }
    List<PartitionFiles.BuiltFile> all = files.finishAll();
    assertEquals(1, all.size());
    return all.get(0);
  }

  private long receiveFile(StoreTable t, PartitionFiles.BuiltFile f, int stream, byte[] first, byte[] last) {
    ByteBuf body = Unpooled.directBuffer((int) f.size());
    f.readAll(body.nioBuffer(0, (int) f.size()));
    body.writerIndex((int) f.size());
    try {
      return receiver.write(batch(t.name(), (int) f.pairs()).toBuilder().setStream(stream)
          .setBuiltFile(BuiltFile.newBuilder().setFirstKey(ByteString.copyFrom(first))
              .setLastKey(ByteString.copyFrom(last)).setPairBytes(f.pairBytes())).build(), body);
    } finally {
      body.release();
    }
  }

  /**
   * A file the sender built of a stream's pairs of one partition is taken whole when its
   * partition is this node's, and refused, with nothing written, when it is not, when its keys
   * span partitions, when it names no stream, or when the table keeps several values per key.
   */
  @Test
  void aBuiltFile_isTakenForAPartitionHeldHere_andRefusedOtherwise() {
    int mine = map.partitionsOf(SELF).get(0);
    int theirs = map.partitionsOf(SENDER).get(0);
    List<byte[][]> pairs = new ArrayList<>();
    model(pairs(200, false)).forEach((k, v) -> {
      if (StoredKeys.partitionOf(k) == mine) {
        pairs.add(new byte[][] {k, v});
      }
    });
    try (NodeStore sender = NodeStore.open(dir.resolve("sender"))) {
      try (PartitionFiles.BuiltFile f = built(sender, pairs)) {
        StoreTable multi = store.createForJob("job1", "sss-tmp-job1-1", TableOptions.newBuilder().setMultiValued(true).build(),
            "", false);
        for (StoreTable t : List.of(multi, table(false))) {
          boolean isMulti = t == multi;
          StoreException e = assertThrows(StoreException.class, () -> receiveFile(t, f, isMulti ? 1 : 0, f.firstKey(), f.lastKey()));
          assertEquals(ErrorCode.BAD_REQUEST, e.code(), e.getMessage());
          assertTrue(e.getMessage().contains("takes none"), e.getMessage());
        }
        StoreTable t = store.require("sss-tmp-job1-0");
        byte[] elsewhere = StoredKeys.storedKey(theirs, new byte[] {1});
        StoreException span = assertThrows(StoreException.class, () -> receiveFile(t, f, 1, f.firstKey(), elsewhere));
        assertTrue(span.getMessage().contains("not of one partition"), span.getMessage());
        StoreException notHeld = assertThrows(StoreException.class, () -> receiveFile(t, f, 1, elsewhere, elsewhere));
        assertTrue(notHeld.getMessage().contains("holds no copy"), notHeld.getMessage());
        assertEquals(0, t.count(), "a refused file wrote something");
        assertEquals(pairs.size(), receiveFile(t, f, 1, f.firstKey(), f.lastKey()));
        TreeMap<byte[], byte[]> expected = StageFixture.sorted();
        pairs.forEach(p -> expected.put(p[0], p[1]));
        t.flush();
        assertSameContents(expected, contents(t));
      }
    }
  }

  /** Sends {@code pairs} announced as {@code announced} and expects a refusal with nothing written. */
  private StoreException refused(StoreTable t, List<byte[][]> pairs, int announced, ErrorCode code, String says) {
    return refused(t, body(pairs), announced, code, says);
  }

  private StoreException refused(StoreTable t, ByteBuf body, int announced, ErrorCode code, String says) {
    StoreException e = assertThrows(StoreException.class, () -> receive(t, announced, body));
    assertEquals(code, e.code(), e.getMessage());
    assertTrue(e.getMessage().contains(says), e.getMessage());
    assertEquals(0, t.count(), "a refused batch wrote something");
    return e;
  }

  /** The batch's good pairs, then {@code last}: a refusal must take back the pairs before it. */
  private List<byte[][]> goodPairsThen(boolean multiValued, byte[] lastKey, byte[] lastValue) {
    List<byte[][]> p = pairs(40, multiValued);
    p.add(new byte[][] {lastKey, lastValue});
    return p;
  }

  @Test
  void aTruncatedPair_isRefused() {
    StoreTable t = table(false);
    for (Function<ByteBuf, ByteBuf> cut : List.<Function<ByteBuf, ByteBuf>>of(
        b -> b.writerIndex(b.writerIndex() - 1), // inside the last value
        b -> { // a key length announcing more than is left
          PairBlock.writeVarint(b, 50);
          return b.writeBytes(new byte[10]);
        })) {
      ByteBuf body = cut.apply(body(pairs(40, false)));
      refused(t, body, 40, ErrorCode.BAD_REQUEST, "truncated pair in shuffle batch");
    }
  }

  @Test
  void aBodyEndingInsideALength_isRefusedAsMalformed() {
    StoreTable t = table(false);
    ByteBuf body = body(pairs(40, false));
    body.writeByte(0x80); // the first byte of a length with more to come
    CorruptedFrameException e = assertThrows(CorruptedFrameException.class, () -> receive(t, 41, body));
    assertEquals(0, t.count());
    // answered as a put batch's would be: the sender's fault, not the node's
    Response answer = EngineService.error(7, e).header();
    assertEquals(ErrorCode.BAD_REQUEST, answer.getCode());
    assertTrue(answer.getMessage().startsWith("malformed body"), answer.getMessage());
  }

  @Test
  void aPairCountOtherThanAnnounced_isRefused() {
    StoreTable t = table(true);
    refused(t, pairs(40, true), 41, ErrorCode.BAD_REQUEST, "announced 41 pairs but carried 40");
    refused(t, pairs(40, true), 39, ErrorCode.BAD_REQUEST, "announced 39 pairs but carried 40");
  }

  @Test
  void aPairForAPartitionThisNodeHoldsNoCopyOf_isRefusedNamingIt() {
    StoreTable t = table(false);
    int foreign = map.partitionsOf(SENDER).get(0);
    refused(t, goodPairsThen(false, StoredKeys.storedKey(foreign, new byte[] {1}), new byte[] {2}), 41,
        ErrorCode.BAD_REQUEST, "pair for partition " + foreign + ", of which this node holds no copy of table '"
            + t.name() + "'");
    refused(t, goodPairsThen(false, StoredKeys.storedKey(PARTITIONS, new byte[] {1}), new byte[] {2}), 41,
        ErrorCode.BAD_REQUEST, "pair for partition " + PARTITIONS + ",");
    refused(t, goodPairsThen(false, new byte[] {0}, new byte[] {2}), 41, // too short to name a partition
        ErrorCode.BAD_REQUEST, "pair for partition -1,");
  }

  @Test
  void multiValued_aKeyWithoutTheSendersUniquifier_isRefused() {
    StoreTable t = table(true);
    int own = map.partitionsOf(SELF).get(0);
    byte[] stored = StoredKeys.storedKey(own, new byte[] {1, 2, 3});
    refused(t, goodPairsThen(true, stored, new byte[] {2}), 41, ErrorCode.BAD_REQUEST,
        "key of 5 bytes for multi-valued table '" + t.name() + "', shorter than a partition and a uniquifier");
    refused(t, goodPairsThen(true, StoredKeys.withUniquifier(stored, 2, 7), new byte[] {2}), 41,
        ErrorCode.BAD_REQUEST, "from node " + SENDER + " holds a value of multi-valued table '" + t.name()
            + "' uniquified as node 2's");
    refused(t, goodPairsThen(true, StoredKeys.withUniquifier(stored, SELF, 7), new byte[] {2}), 41,
        ErrorCode.BAD_REQUEST, "uniquified as node " + SELF + "'s");
  }

  @Test
  void aKeyOrValueOverTheLimit_isRefused() {
    StoreTable t = table(false);
    int own = map.partitionsOf(SELF).get(0);
    refused(t, goodPairsThen(false, StoredKeys.storedKey(own, new byte[] {1}), new byte[MAX_VALUE + 1]), 41,
        ErrorCode.VALUE_TOO_LARGE, "pair of " + (MAX_VALUE + 1) + " bytes exceeds the limit");
    refused(t, goodPairsThen(false, StoredKeys.storedKey(own, new byte[MAX_VALUE]), new byte[1]), 41,
        ErrorCode.VALUE_TOO_LARGE, "pair of " + (MAX_VALUE + 2) + " bytes exceeds the limit");
  }

  @Test
  void aBatchOfOtherTypesThanTheTables_isRefused() {
    StoreTable t = store.createForJob("job1", "sss-tmp-job1-1", TableOptions.newBuilder()
        .setKeyType(DataType.STRING).setValueType(DataType.LONG).build(), "", false);
    ByteBuf body = body(pairs(10, false));
    try {
      StoreException e = assertThrows(StoreException.class, () -> receiver.write(batch(t.name(), 10).toBuilder()
          .setKeyType(DataType.BYTES).setValueType(DataType.LONG).build(), body));
      assertEquals(ErrorCode.TYPE_MISMATCH, e.code(), e.getMessage());
    } finally {
      body.release();
    }
    assertEquals(0, t.count());
  }

  /**
   * With two copies of each partition, a table between stages keeps one, on its leader or (while
   * the leader is out) on another copy: node 0 takes the pairs of every partition it holds a copy
   * of, leading or not, and no other.
   */
  @Test
  void replicatedCluster_aPartitionIsTakenIffThisNodeHoldsACopyOfIt() {
    List<NodeAddress> nodes = List.of(new NodeAddress(0, "127.0.0.1", 21_001),
        new NodeAddress(1, "127.0.0.1", 21_003), new NodeAddress(2, "127.0.0.1", 21_005));
    ClusterSpec three = ClusterSpec.of(nodes, 12, "").withReplication(2, List.of(
        new ReplicaPlacement.Location("h0", "r"), new ReplicaPlacement.Location("h1", "r"),
        new ReplicaPlacement.Location("h2", "r")));
    ReplicaPlacement placement = three.placement();
    ShuffleReceiver r = new ShuffleReceiver(store, MAX_VALUE, placement, SELF);
    StoreTable t = table(false);
    int taken = 0;
    for (int p = 0; p < 12; p++) {
      boolean holds = placement.replicasOf(p).contains(SELF);
      byte[] key = StoredKeys.storedKey(p, new byte[] {(byte) p});
      ByteBuf body = body(List.<byte[][]>of(new byte[][] {key, {7}}));
      try {
        if (holds) {
          assertEquals(1, r.write(batch(t.name(), 1), body));
          taken++;
        } else {
          StoreException e = assertThrows(StoreException.class, () -> r.write(batch(t.name(), 1), body));
          assertEquals(ErrorCode.BAD_REQUEST, e.code());
        }
      } finally {
        body.release();
      }
      assertEquals(taken, t.count(), "partition " + p);
    }
    assertTrue(taken > three.partitionMap().partitionsOf(SELF).size(), "copies it does not lead are taken too");
    assertTrue(taken < 12, "not every partition");
  }
}
