package org.sss.client.it;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertInstanceOf;
import static org.junit.jupiter.api.Assertions.assertNotNull;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;
import static org.sss.client.it.TestPairs.assertCode;

import com.google.protobuf.ByteString;
import io.netty.buffer.ByteBuf;
import io.netty.buffer.Unpooled;
import java.io.IOException;
import java.nio.ByteBuffer;
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.NavigableMap;
import java.util.Random;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.MethodOrderer;
import org.junit.jupiter.api.Order;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.TestInstance;
import org.junit.jupiter.api.TestMethodOrder;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.io.TempDir;
import org.sss.client.ScanOptions;
import org.sss.client.SssClient;
import org.sss.client.TableScan;
import org.sss.client.TableSpec;
import org.sss.client.cluster.SssCluster;
import org.sss.client.internal.ClientInternals;
import org.sss.client.it.RawWire.RawFrame;
import org.sss.core.api.Pair;
import org.sss.core.cluster.ClusterSpec;
import org.sss.core.cluster.NodeAddress;
import org.sss.core.cluster.PartitionMap;
import org.sss.core.keys.KeyCodec;
import org.sss.core.keys.PairTypes;
import org.sss.core.proto.Count;
import org.sss.core.proto.ErrorCode;
import org.sss.core.proto.ListTables;
import org.sss.core.proto.PutBatch;
import org.sss.core.proto.Request;
import org.sss.core.proto.TableOptions;
import org.sss.core.transport.Connection;
import org.sss.core.transport.PairBlock;
import org.sss.core.transport.Pipelines;
import org.sss.core.transport.SssException;
import org.sss.server.NodeConfig;
import org.sss.server.NodeListener;
import org.sss.server.SssServer;
import org.sss.core.keys.StoredKeys;

/**
 * What a node does with input a well-behaved client never sends: garbage, oversized frames,
 * wrong secrets, requests before authentication, missing tables, oversized values. Every bad
 * connection is refused or closed; after each test a client that connected before it still
 * works and the data loaded before it is intact. Netty's leak detection stays paranoid here
 * and any leak report fails the class.
 */
@TestInstance(TestInstance.Lifecycle.PER_CLASS)
@TestMethodOrder(MethodOrderer.OrderAnnotation.class)
@Timeout(value = 60, unit = TimeUnit.SECONDS)
class BadInputTest {
  static final Duration PROMPTLY = Duration.ofSeconds(5);
  static final String DATA = "data";

  LeakWatch leakWatch;
  SssCluster cluster;
  ClusterSpec spec;
  NodeAddress node0;
  /** Connected before every test, checked after each. */
  SssClient wellBehaved;
  NavigableMap<byte[], byte[]> data;
  /** Connected at the start, never says anything: the auth timeout must close it. */
  RawWire silent;
  long silentSince;

  @BeforeAll
  void start() throws Exception {
    leakWatch = new LeakWatch();
    cluster = SssCluster.embedded(3);
    spec = cluster.spec();
    node0 = spec.node(0);
    silent = RawWire.connect(node0);
    silentSince = System.nanoTime();
    wellBehaved = cluster.client();
    wellBehaved.createTable(DATA, TableSpec.defaults(), false);
    data = TestPairs.randomPairs(99, 3_000);
    TestPairs.load(wellBehaved, DATA, data);
    wellBehaved.ping();
  }

  @AfterEach
  void wellBehavedClientStillWorksAndDataIsIntact() {
    assertEquals(data.size(), wellBehaved.count(DATA));
    TestPairs.assertValues(wellBehaved, DATA, data, TestPairs.sampleKeys(data, 7));
    byte[] first = data.firstKey();
    assertArrayEquals(data.get(first), wellBehaved.get(DATA, first).orElseThrow());
  }

  @AfterAll
  void stop() throws Exception {
    try {
      if (silent != null) {
        silent.close();
      }
      if (wellBehaved != null) {
        wellBehaved.close();
      }
      if (cluster != null) {
        cluster.close();
      }
      if (leakWatch != null) {
        assertEquals(List.of(), leakWatch.leaks(), "Netty leak reports");
      }
    } finally {
      if (leakWatch != null) {
        leakWatch.close();
      }
    }
  }

  // ---- (a) garbage ----------------------------------------------------------------------

  @Test
  @Order(1)
  void httpRequestInsteadOfFrames_serverAnswersOneErrorAndCloses() throws IOException {
    try (RawWire raw = RawWire.connect(node0)) {
      raw.challenge();
      raw.writeRaw("GET / HTTP/1.1\r\nHost: localhost\r\n\r\n".getBytes(StandardCharsets.US_ASCII));
      List<RawFrame> frames = raw.framesUntilClosed(PROMPTLY);
      // "GET " read as a frame length is ~1.2 GB: over the limit
      assertEquals(1, frames.size(), frames.toString());
      assertEquals(ErrorCode.FRAME_TOO_LARGE, frames.get(0).header().getCode());
      assertEquals(0, frames.get(0).header().getId(), "a connection-level error");
    }
  }

  @Test
  @Order(2)
  void randomBytes_manyConnectionsAtOnce_eachIsClosed() throws Exception {
    ExecutorService pool = Executors.newFixedThreadPool(24);
    try {
      List<Future<List<RawFrame>>> results = new ArrayList<>();
      for (int seed = 0; seed < 24; seed++) {
        int s = seed;
        results.add(pool.submit(() -> {
          Random r = new Random(s);
          byte[] garbage = new byte[1 + r.nextInt(8192)];
          r.nextBytes(garbage);
          try (RawWire raw = RawWire.connect(node0)) {
            if (s % 2 == 0) {
              raw.challenge(); // half of them read the challenge first, half never do
            }
            try {
              raw.writeRaw(garbage);
            } catch (IOException e) {
              return List.of(); // the server already closed: fine
            }
            // a length prefix that fits the limit but not the bytes sent leaves the server
            // waiting for the rest, until the authentication timeout (10 s) closes it
            return raw.framesUntilClosed(Duration.ofSeconds(15));
          }
        }));
      }
      for (Future<List<RawFrame>> f : results) {
        for (RawFrame frame : f.get()) {
          assertFalse(frame.header().hasTables(), "garbage never gets data");
          assertFalse(frame.header().hasCount());
          assertTrue(frame.header().hasChallenge() || frame.header().getCode() != ErrorCode.OK, frame.toString());
        }
      }
    } finally {
      pool.shutdownNow();
    }
  }

  @Test
  @Order(3)
  void framedGarbage_headerThatIsNotProtobuf_serverAnswersBadRequestAndCloses() throws IOException {
    for (int seed = 0; seed < 10; seed++) {
      Random r = new Random(seed);
      byte[] junk = new byte[200];
      r.nextBytes(junk);
      junk[0] = (byte) 0xFF; // protobuf field 31, wire type 7: never valid
      try (RawWire raw = RawWire.connect(node0)) {
        raw.challenge();
        ByteBuffer b = ByteBuffer.allocate(8 + junk.length);
        b.putInt(4 + junk.length).putInt(junk.length).put(junk);
        raw.writeRaw(b.array());
        List<RawFrame> frames = raw.framesUntilClosed(PROMPTLY);
        assertEquals(1, frames.size());
        assertEquals(ErrorCode.BAD_REQUEST, frames.get(0).header().getCode(), frames.get(0).header().getMessage());
      }
    }
  }

  @Test
  @Order(4)
  void halfAFrameThenDisconnect_serverCarriesOn() throws IOException {
    for (int i = 0; i < 20; i++) {
      try (RawWire raw = RawWire.connect(node0)) {
        byte[] nonce = raw.challenge();
        byte[] hello = RawWire.hello(1, spec.secret(), nonce).toByteArray();
        ByteBuffer b = ByteBuffer.allocate(8 + hello.length / 2);
        b.putInt(4 + hello.length).putInt(hello.length).put(hello, 0, hello.length / 2);
        raw.writeRaw(b.array());
      }
    }
    // afterwards every node authenticates new connections and answers them: node 0 even a hello
    // that arrives in two halves (one frame, completed by its second write); the counts of the
    // nodes add up to the data loaded
    long total = 0;
    for (NodeAddress node : spec.nodes()) {
      try (RawWire raw = RawWire.connect(node)) {
        byte[] nonce = raw.challenge();
        byte[] hello = RawWire.hello(1, spec.secret(), nonce).toByteArray();
        byte[] frame = ByteBuffer.allocate(8 + hello.length).putInt(4 + hello.length).putInt(hello.length)
            .put(hello).array();
        int cut = node.id() == 0 ? 8 + hello.length / 2 : frame.length;
        raw.writeRaw(java.util.Arrays.copyOf(frame, cut));
        if (cut < frame.length) {
          raw.writeRaw(java.util.Arrays.copyOfRange(frame, cut, frame.length));
        }
        RawFrame ok = raw.read();
        assertNotNull(ok, "an answer to the hello");
        assertEquals(ErrorCode.OK, ok.header().getCode(), ok.header().getMessage());
        raw.write(Request.newBuilder().setId(2).setCount(Count.newBuilder().setTable(DATA)).build(), new byte[0]);
        RawFrame count = raw.read();
        assertNotNull(count, "an answer to the count");
        assertEquals(2, count.header().getId());
        assertEquals(ErrorCode.OK, count.header().getCode(), count.header().getMessage());
        total += count.header().getCount().getPairs();
      }
    }
    assertEquals(data.size(), total);
  }

  // ---- (b) frames over the limit, malformed frames ---------------------------------------

  @Test
  @Order(10)
  void frameLengthOverTheLimit_beforeAuthentication_frameTooLargeAndClosed() throws IOException {
    try (RawWire raw = RawWire.connect(node0)) {
      raw.challenge();
      raw.writeRaw(ByteBuffer.allocate(16).putInt(Pipelines.DEFAULT_MAX_FRAME + 1).putInt(4).array());
      List<RawFrame> frames = raw.framesUntilClosed(PROMPTLY);
      assertEquals(1, frames.size());
      assertEquals(ErrorCode.FRAME_TOO_LARGE, frames.get(0).header().getCode());
    }
  }

  /**
   * Before authentication only a Hello (a few hundred bytes) makes sense: a peer that does not
   * know the secret must not make the node reserve a frame of megabytes.
   */
  @Test
  @Order(10)
  void largeFrameAnnouncedBeforeAuthentication_refusedAtOnce() throws IOException {
    try (RawWire raw = RawWire.connect(node0)) {
      raw.challenge();
      raw.writeRaw(ByteBuffer.allocate(8).putInt(16 << 20).putInt(4).array()); // 16 MiB, within the full limit
      List<RawFrame> frames = raw.framesUntilClosed(PROMPTLY);
      assertEquals(1, frames.size());
      assertEquals(ErrorCode.FRAME_TOO_LARGE, frames.get(0).header().getCode());
      assertTrue(frames.get(0).header().getMessage().contains("before authentication"),
          frames.get(0).header().getMessage());
    }
    // the same frame after authentication is a frame like any other (here: a bad one, answered per request)
    try (RawWire raw = RawWire.connect(node0).authenticate(spec.secret())) {
      raw.write(Request.newBuilder().setId(7).setPutBatch(org.sss.core.proto.PutBatch.newBuilder()
          .setTable("nope").setPairCount(1)).build(), new byte[1 << 20]);
      RawFrame answer = raw.read();
      assertEquals(7, answer.header().getId());
      assertEquals(ErrorCode.NO_SUCH_TABLE, answer.header().getCode(), answer.header().getMessage());
    }
  }

  @Test
  @Order(10)
  void helloOfAnotherProtocolVersion_refusedByName() throws IOException {
    try (RawWire raw = RawWire.connect(node0)) {
      byte[] nonce = raw.challenge();
      Request hello = RawWire.hello(1, spec.secret(), nonce);
      raw.write(hello.toBuilder().setHello(hello.getHello().toBuilder().setProtocolVersion(Pipelines.PROTOCOL_VERSION + 1)).build(),
          new byte[0]);
      List<RawFrame> frames = raw.framesUntilClosed(PROMPTLY);
      assertEquals(ErrorCode.BAD_REQUEST, frames.get(0).header().getCode());
      assertTrue(frames.get(0).header().getMessage().contains("protocol version " + (Pipelines.PROTOCOL_VERSION + 1) + ", this node speaks "
          + Pipelines.PROTOCOL_VERSION),
          frames.get(0).header().getMessage());
    }
  }

  /** Connections waiting to authenticate are bounded; past the bound one is refused, and a job runs on. */
  @Test
  @Order(10)
  void hundredsOfUnauthenticatedConnections_boundedWhileAJobRuns() throws Exception {
    int max = org.sss.server.transport.Unauthenticated.DEFAULT_MAX;
    List<RawWire> waiting = new java.util.ArrayList<>();
    try {
      // other tests' connections (the silent one among them) may still count: open until one is refused
      RawFrame refusal = null;
      for (int i = 0; i < max + 16 && refusal == null; i++) {
        RawWire w = RawWire.connect(node0);
        RawFrame first = w.read();
        if (first != null && first.header().hasChallenge()) {
          waiting.add(w); // admitted: it got its challenge
        } else {
          refusal = first;
          w.close();
        }
      }
      assertTrue(refusal != null, "no connection refused after " + waiting.size() + " waiting to authenticate");
      assertEquals(ErrorCode.BUSY, refusal.header().getCode(), refusal.header().getMessage());
      assertTrue(waiting.size() <= max && waiting.size() >= max - 8, waiting.size() + " admitted, bound " + max);
      // authenticated clients are not counted: a job and its shuffle between nodes run meanwhile
      var job = org.sss.client.job.Job.named("while-crowded").input(DATA, org.sss.core.api.Serdes.BYTES,
              org.sss.core.api.Serdes.BYTES)
          .map(CopyPairs.class, org.sss.core.api.Serdes.BYTES, org.sss.core.api.Serdes.BYTES)
          .output("crowded-out").overwrite().build();
      wellBehaved.submit(job).await();
      assertEquals(data.size(), wellBehaved.count("crowded-out"));
      wellBehaved.dropTable("crowded-out", false);
    } finally {
      for (RawWire w : waiting) {
        w.close();
      }
    }
    // the count comes down as they close: a new connection is admitted again
    long deadline = System.nanoTime() + PROMPTLY.toNanos();
    while (true) {
      try (RawWire again = RawWire.connect(node0)) {
        RawFrame first = again.read();
        if (first != null && first.header().hasChallenge()) {
          break;
        }
      }
      assertTrue(System.nanoTime() < deadline, "no connection admitted after the waiting ones closed");
      Thread.sleep(20);
    }
  }

  /** Copies each pair: a map-only job whose output is shuffled to the key's owner. */
  public static final class CopyPairs implements org.sss.core.api.Mapper<byte[], byte[], byte[], byte[]> {
    @Override
    public void map(byte[] key, byte[] value, org.sss.core.api.Emitter<byte[], byte[]> out) {
      out.emit(key, value);
    }
  }

  /** A shuffled pair must land in a partition of the receiving node, or the next stage never reads it. */
  @Test
  @Order(15)
  void shuffleBatchForAPartitionTheNodeDoesNotOwn_refusedWithNothingWritten() throws IOException {
    String jobId = "ownercheck01";
    String table = "sss-tmp-" + jobId + "-0";
    for (int n = 0; n < spec.nodeCount(); n++) {
      org.sss.client.internal.NodeChannels.await(ClientInternals.channels(wellBehaved).get(n).call(Request.newBuilder()
          .setCreateTable(org.sss.core.proto.CreateTable.newBuilder().setTable(table).setJobId(jobId)
              .setOptions(TableOptions.newBuilder().setMultiValued(true)))), PROMPTLY).release();
    }
    int foreign = spec.partitionMap().partitionsOf(1).get(0);
    io.netty.buffer.ByteBuf body = io.netty.buffer.Unpooled.buffer();
    org.sss.core.transport.PairBlock.write(body, org.sss.core.keys.StoredKeys.storedKey(foreign, new byte[] {1}),
        new byte[] {2});
    SssException e = assertThrows(SssException.class, () -> org.sss.client.internal.NodeChannels.await(
        ClientInternals.channels(wellBehaved).get(0).call(Request.newBuilder().setShuffleBatch(org.sss.core.proto.ShuffleBatch
            .newBuilder().setJobId(jobId).setTable(table).setPairCount(1).setSourceNode(1)), body), PROMPTLY));
    assertEquals(ErrorCode.BAD_REQUEST, e.code());
    assertTrue(e.getMessage().contains("partition " + foreign + ", of which this node holds no copy"), e.getMessage());
    assertEquals(0, wellBehaved.count(table));
    wellBehaved.dropTable(table, false);
  }

  /**
   * A multi-valued table's shuffled key must end with the sender's own uniquifier: one without
   * a uniquifier, or with another node's, could overwrite another sender's value.
   */
  @Test
  @Order(16)
  void shuffleBatchWithoutTheSendersUniquifier_refusedWithNothingWritten() throws IOException {
    String jobId = "uniqcheck01";
    String table = "sss-tmp-" + jobId + "-0";
    for (int n = 0; n < spec.nodeCount(); n++) {
      org.sss.client.internal.NodeChannels.await(ClientInternals.channels(wellBehaved).get(n).call(Request.newBuilder()
          .setCreateTable(org.sss.core.proto.CreateTable.newBuilder().setTable(table).setJobId(jobId)
              .setOptions(TableOptions.newBuilder().setMultiValued(true)))), PROMPTLY).release();
    }
    int own = spec.partitionMap().partitionsOf(0).get(0);
    byte[] stored = org.sss.core.keys.StoredKeys.storedKey(own, new byte[] {1});
    byte[][] badKeys = {
        stored, // no uniquifier at all
        org.sss.core.keys.StoredKeys.withUniquifier(stored, 2, 7), // node 2's uniquifier, sent by node 1
    };
    String[] expected = {"shorter than a partition and a uniquifier", "uniquified as node 2's"};
    for (int i = 0; i < badKeys.length; i++) {
      io.netty.buffer.ByteBuf body = io.netty.buffer.Unpooled.buffer();
      org.sss.core.transport.PairBlock.write(body, badKeys[i], new byte[] {2});
      SssException e = assertThrows(SssException.class, () -> org.sss.client.internal.NodeChannels.await(
          ClientInternals.channels(wellBehaved).get(0).call(Request.newBuilder().setShuffleBatch(org.sss.core.proto.ShuffleBatch
              .newBuilder().setJobId(jobId).setTable(table).setPairCount(1).setSourceNode(1)), body), PROMPTLY));
      assertEquals(ErrorCode.BAD_REQUEST, e.code());
      assertTrue(e.getMessage().contains(expected[i]), e.getMessage());
    }
    // the sender's own uniquifier is taken
    io.netty.buffer.ByteBuf body = io.netty.buffer.Unpooled.buffer();
    org.sss.core.transport.PairBlock.write(body, org.sss.core.keys.StoredKeys.withUniquifier(stored, 1, 7),
        new byte[] {2});
    org.sss.client.internal.NodeChannels.await(ClientInternals.channels(wellBehaved).get(0).call(Request.newBuilder()
        .setShuffleBatch(org.sss.core.proto.ShuffleBatch.newBuilder().setJobId(jobId).setTable(table)
            .setPairCount(1).setSourceNode(1)), body), PROMPTLY).release();
    assertEquals(1, wellBehaved.count(table));
    wellBehaved.dropTable(table, false);
  }

  @Test
  @Order(11)
  void frameLengthOverTheLimit_afterAuthentication_frameTooLargeAndClosed() throws IOException {
    try (RawWire raw = RawWire.connect(node0).authenticate(spec.secret())) {
      raw.writeRaw(ByteBuffer.allocate(8).putInt(Integer.MAX_VALUE).putInt(4).array());
      List<RawFrame> frames = raw.framesUntilClosed(PROMPTLY);
      assertEquals(1, frames.size());
      assertEquals(ErrorCode.FRAME_TOO_LARGE, frames.get(0).header().getCode());
      assertEquals(0, frames.get(0).header().getId());
    }
  }

  @Test
  @Order(12)
  void headerLengthBeyondTheFrame_badRequestAndClosed() throws IOException {
    try (RawWire raw = RawWire.connect(node0).authenticate(spec.secret())) {
      raw.writeRaw(ByteBuffer.allocate(12).putInt(8).putInt(1000).putInt(0).array());
      List<RawFrame> frames = raw.framesUntilClosed(PROMPTLY);
      assertEquals(1, frames.size());
      assertEquals(ErrorCode.BAD_REQUEST, frames.get(0).header().getCode());
    }
  }

  @Test
  @Order(13)
  void frameTooShortForAHeaderLength_badRequestAndClosed() throws IOException {
    try (RawWire raw = RawWire.connect(node0).authenticate(spec.secret())) {
      raw.writeRaw(new byte[] {0, 0, 0, 2, 7, 7});
      List<RawFrame> frames = raw.framesUntilClosed(PROMPTLY);
      assertEquals(1, frames.size());
      assertEquals(ErrorCode.BAD_REQUEST, frames.get(0).header().getCode());
    }
  }

  /** A stored key of node 0: the partition prefix of a partition node 0 owns, then the key. */
  byte[] storedKeyOnNode0(int i) {
    return storedKeyOn(0, i);
  }

  byte[] storedKeyOn(int node, int i) {
    PartitionMap map = spec.partitionMap();
    for (int n = i; ; n++) {
      byte[] k = KeyCodec.encodeString("raw-" + n);
      int p = map.partitionOf(k);
      if (map.ownerOf(p) == node) {
        return StoredKeys.storedKey(p, k);
      }
    }
  }

  @Test
  @Order(14)
  void malformedBodies_badRequestPerRequest_connectionStaysUsableAndNothingIsWritten() throws IOException {
    try (RawWire raw = RawWire.connect(node0).authenticate(spec.secret())) {
      // a pair block that ends inside a key
      raw.write(Request.newBuilder().setId(2).setPutBatch(PutBatch.newBuilder().setTable(DATA).setPairCount(1)).build(),
          new byte[] {100, 'a', 'b'});
      RawFrame r = raw.read();
      assertEquals(2, r.header().getId());
      assertEquals(ErrorCode.BAD_REQUEST, r.header().getCode(), r.header().getMessage());

      // a pair count that does not match the body
      ByteBuf body = Unpooled.buffer();
      for (int i = 0; i < 3; i++) {
        PairBlock.write(body, storedKeyOnNode0(1000 * i), new byte[] {1});
      }
      byte[] three = new byte[body.readableBytes()];
      body.readBytes(three);
      body.release();
      raw.write(Request.newBuilder().setId(3).setPutBatch(PutBatch.newBuilder().setTable(DATA).setPairCount(5)).build(), three);
      r = raw.read();
      assertEquals(3, r.header().getId());
      assertEquals(ErrorCode.BAD_REQUEST, r.header().getCode());

      // a key without its partition prefix, and a partition that does not exist
      ByteBuf bad = Unpooled.buffer();
      PairBlock.write(bad, storedKeyOnNode0(5000), new byte[] {1});
      PairBlock.write(bad, new byte[] {1}, new byte[] {1});
      byte[] shortKey = new byte[bad.readableBytes()];
      bad.readBytes(shortKey);
      bad.release();
      raw.write(Request.newBuilder().setId(4).setPutBatch(PutBatch.newBuilder().setTable(DATA).setPairCount(2)).build(), shortKey);
      r = raw.read();
      assertEquals(ErrorCode.BAD_REQUEST, r.header().getCode());
      ByteBuf bad2 = Unpooled.buffer();
      PairBlock.write(bad2, new byte[] {(byte) 0xFF, (byte) 0xF0, 'k'}, new byte[] {1});
      byte[] noPartition = new byte[bad2.readableBytes()];
      bad2.readBytes(noPartition);
      bad2.release();
      raw.write(Request.newBuilder().setId(5).setPutBatch(PutBatch.newBuilder().setTable(DATA).setPairCount(1)).build(), noPartition);
      r = raw.read();
      assertEquals(ErrorCode.BAD_REQUEST, r.header().getCode());

      // a partition another node owns (a client with another cluster file)
      ByteBuf elsewhere = Unpooled.buffer();
      PairBlock.write(elsewhere, storedKeyOn(1, 0), new byte[] {1});
      byte[] notOwned = new byte[elsewhere.readableBytes()];
      elsewhere.readBytes(notOwned);
      elsewhere.release();
      raw.write(Request.newBuilder().setId(51).setPutBatch(PutBatch.newBuilder().setTable(DATA).setPairCount(1)).build(), notOwned);
      r = raw.read();
      assertEquals(ErrorCode.BAD_REQUEST, r.header().getCode());
      assertTrue(r.header().getMessage().contains("holds no copy of partition")
          && r.header().getMessage().contains("on node(s) [1]"), r.header().getMessage());

      // a request with no operation
      raw.write(Request.newBuilder().setId(6).build(), new byte[0]);
      r = raw.read();
      assertEquals(6, r.header().getId());
      assertEquals(ErrorCode.BAD_REQUEST, r.header().getCode());

      // the connection still works
      raw.write(Request.newBuilder().setId(7).setCount(Count.newBuilder().setTable(DATA)).build(), new byte[0]);
      r = raw.read();
      assertEquals(ErrorCode.OK, r.header().getCode(), r.header().getMessage());
      assertTrue(r.header().getCount().getPairs() > 0);
      assertTrue(raw.stillOpenAfter(Duration.ofMillis(200)));
    }
    // none of those batches wrote anything (checked with the count after each test)
  }

  // ---- (c), (d) authentication -----------------------------------------------------------

  @Test
  @Order(20)
  void connectionOpen_wrongSecret_failsWithUnauthenticated() {
    ExecutionException e = assertThrows(ExecutionException.class, () -> Connection.open(node0, "not the secret",
        "test", null, Pipelines.DEFAULT_MAX_FRAME, Duration.ofSeconds(10)).get(15, TimeUnit.SECONDS));
    SssException s = assertInstanceOf(SssException.class, e.getCause());
    assertEquals(ErrorCode.UNAUTHENTICATED, s.code(), s.getMessage());

    ClusterSpec wrong = new ClusterSpec(spec.nodes(), spec.partitionMap(), "not the secret", false);
    try (SssClient intruder = SssClient.connect(wrong)) {
      assertCode(ErrorCode.UNAUTHENTICATED, intruder::ping);
      assertCode(ErrorCode.UNAUTHENTICATED, () -> intruder.count(DATA));
      assertCode(ErrorCode.UNAUTHENTICATED, intruder::listTables);
    }
  }

  @Test
  @Order(21)
  void requestBeforeHello_unauthenticatedWithoutTableNamesAndClosed() throws IOException {
    try (RawWire raw = RawWire.connect(node0)) {
      raw.challenge();
      raw.write(Request.newBuilder().setId(1).setListTables(ListTables.getDefaultInstance()).build(), new byte[0]);
      List<RawFrame> frames = raw.framesUntilClosed(PROMPTLY);
      assertEquals(1, frames.size());
      RawFrame f = frames.get(0);
      assertEquals(ErrorCode.UNAUTHENTICATED, f.header().getCode());
      assertFalse(f.header().hasTables());
      assertEquals(0, f.body().length);
      assertFalse(f.header().toString().contains(DATA), "no table names: " + f.header());
    }
    // a put before the hello writes nothing
    try (RawWire raw = RawWire.connect(node0)) {
      raw.challenge();
      ByteBuf body = Unpooled.buffer();
      PairBlock.write(body, storedKeyOnNode0(77), new byte[] {1});
      byte[] b = new byte[body.readableBytes()];
      body.readBytes(b);
      body.release();
      raw.write(Request.newBuilder().setId(1).setPutBatch(PutBatch.newBuilder().setTable(DATA).setPairCount(1)).build(), b);
      List<RawFrame> frames = raw.framesUntilClosed(PROMPTLY);
      assertEquals(ErrorCode.UNAUTHENTICATED, frames.get(0).header().getCode());
    }
  }

  @Test
  @Order(22)
  void helloWithWrongMacOrReplayedFromAnotherConnection_unauthenticatedAndClosed() throws IOException {
    try (RawWire raw = RawWire.connect(node0)) {
      byte[] nonce = raw.challenge();
      raw.write(RawWire.hello(1, "guess", nonce), new byte[0]);
      List<RawFrame> frames = raw.framesUntilClosed(PROMPTLY);
      assertEquals(1, frames.size());
      assertEquals(ErrorCode.UNAUTHENTICATED, frames.get(0).header().getCode());
    }
    // a hello that was valid for another connection's challenge does not open this one
    Request replayed;
    try (RawWire first = RawWire.connect(node0)) {
      replayed = RawWire.hello(1, spec.secret(), first.challenge());
    }
    try (RawWire raw = RawWire.connect(node0)) {
      raw.challenge();
      raw.write(replayed, new byte[0]);
      List<RawFrame> frames = raw.framesUntilClosed(PROMPTLY);
      assertEquals(1, frames.size());
      assertEquals(ErrorCode.UNAUTHENTICATED, frames.get(0).header().getCode());
    }
    // an empty hello
    try (RawWire raw = RawWire.connect(node0)) {
      raw.challenge();
      raw.write(Request.newBuilder().setId(1).setHello(org.sss.core.proto.Hello.getDefaultInstance()).build(), new byte[0]);
      assertEquals(ErrorCode.UNAUTHENTICATED, raw.framesUntilClosed(PROMPTLY).get(0).header().getCode());
    }
  }

  // ---- (e) missing table -----------------------------------------------------------------

  @Test
  @Order(30)
  void missingTable_noSuchTableOnEveryOperation_andTheSameClientKeepsWorking() {
    try (SssClient c = cluster.client()) {
      byte[] key = data.firstKey();
      assertCode(ErrorCode.NO_SUCH_TABLE, () -> c.get("nope", key));
      assertArrayEquals(data.get(key), c.get(DATA, key).orElseThrow());
      assertCode(ErrorCode.NO_SUCH_TABLE, () -> c.multiGet("nope", List.of(key, data.lastKey())));
      assertCode(ErrorCode.NO_SUCH_TABLE, () -> c.put("nope", PairTypes.BYTES, key, new byte[] {1}));
      assertCode(ErrorCode.NO_SUCH_TABLE, () -> c.count("nope"));
      assertCode(ErrorCode.NO_SUCH_TABLE, () -> c.tableStats("nope"));
      assertCode(ErrorCode.NO_SUCH_TABLE, () -> c.delete("nope", List.of(key)));
      assertCode(ErrorCode.NO_SUCH_TABLE, () -> c.dropTable("nope", false));
      assertCode(ErrorCode.NO_SUCH_TABLE, () -> {
        try (TableScan s = c.scan("nope", ScanOptions.anyOrder())) {
          s.hasNext();
        }
      });
      assertEquals(data.size(), c.count(DATA));
      TestPairs.assertValues(c, DATA, data, TestPairs.sampleKeys(data, 11));
      assertFalse(c.listTables().stream().anyMatch(t -> t.name().equals("nope")));
    }
  }

  // ---- (f) values over the limit ---------------------------------------------------------

  @Test
  @Order(40)
  void valueOverTheServersLimit_valueTooLarge_andNoneOfTheBatchIsWritten(@TempDir Path dir) throws Exception {
    NodeListener socket = NodeListener.bind("127.0.0.1", 0);
    ClusterSpec small = ClusterSpec.of(List.of(new NodeAddress(0, "127.0.0.1", socket.port())), 8, "secret");
    int maxValue = 64 << 10;
    try (SssServer server = SssServer.start(new NodeConfig(small, 0, dir, null, 1 << 20, maxValue, 2, null, null),
             socket);
         SssClient before = SssClient.connect(small);
         SssClient c = SssClient.connect(small)) {
      before.createTable("t", TableSpec.defaults(), false);
      NavigableMap<byte[], byte[]> loaded = TestPairs.randomPairs(5, 500);
      TestPairs.load(before, "t", loaded);
      before.ping();

      List<Pair> batch = new ArrayList<>();
      for (int i = 0; i < 100; i++) {
        batch.add(new Pair(KeyCodec.encodeString("small-" + i), new byte[] {(byte) i}));
      }
      batch.add(new Pair(KeyCodec.encodeString("big"), new byte[maxValue + 1]));
      for (int i = 100; i < 200; i++) {
        batch.add(new Pair(KeyCodec.encodeString("small-" + i), new byte[] {(byte) i}));
      }
      SssException e = assertCode(ErrorCode.VALUE_TOO_LARGE, () -> c.putAll("t", PairTypes.BYTES, batch));
      assertTrue(e.getMessage().contains(Integer.toString(maxValue)), e.getMessage());
      assertEquals(loaded.size(), c.count("t"), "none of the refused batch was written");
      assertTrue(c.get("t", KeyCodec.encodeString("small-0")).isEmpty());

      // a key over the limit is refused the same way, on put and on get
      byte[] bigKey = KeyCodec.encodeBytes(new byte[maxValue]);
      assertCode(ErrorCode.VALUE_TOO_LARGE, () -> c.put("t", PairTypes.BYTES, bigKey, new byte[] {1}));
      assertCode(ErrorCode.VALUE_TOO_LARGE, () -> c.get("t", bigKey));
      assertEquals(loaded.size(), c.count("t"));

      // a value exactly at the limit is fine, and the same client keeps working
      c.put("t", PairTypes.BYTES, KeyCodec.encodeString("at-limit"), new byte[maxValue]);
      assertEquals(maxValue, c.get("t", KeyCodec.encodeString("at-limit")).orElseThrow().length);
      c.delete("t", List.of(KeyCodec.encodeString("at-limit")));

      // (g) on this server too: the client connected before still works, data intact
      assertEquals(loaded.size(), before.count("t"));
      TestPairs.assertValues(before, "t", loaded, new ArrayList<>(loaded.keySet()));
      assertNotNull(server.store().table("t").orElse(null));
    }
  }

  // ---- the connection that never spoke ---------------------------------------------------

  @Test
  @Order(100)
  void silentConnection_closedByTheAuthenticationTimeout() throws IOException {
    long waited = TimeUnit.NANOSECONDS.toMillis(System.nanoTime() - silentSince);
    List<RawFrame> frames = silent.framesUntilClosed(Duration.ofMillis(Math.max(1, 15_000 - waited)));
    assertEquals(2, frames.size(), frames.toString());
    assertTrue(frames.get(0).header().hasChallenge());
    assertEquals(ErrorCode.UNAUTHENTICATED, frames.get(1).header().getCode());
    assertFalse(frames.get(1).header().hasTables());
  }
}
