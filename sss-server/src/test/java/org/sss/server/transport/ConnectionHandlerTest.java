package org.sss.server.transport;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNotEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import com.google.protobuf.ByteString;
import io.netty.buffer.ByteBuf;
import io.netty.buffer.Unpooled;
import io.netty.channel.Channel;
import io.netty.channel.ChannelInitializer;
import io.netty.channel.embedded.EmbeddedChannel;
import java.nio.file.Path;
import java.util.ArrayDeque;
import java.util.ArrayList;
import java.util.Deque;
import java.util.List;
import java.util.concurrent.Executor;
import java.util.concurrent.RejectedExecutionException;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicLong;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.io.TempDir;
import org.sss.core.cluster.ClusterSpec;
import org.sss.core.cluster.NodeAddress;
import org.sss.core.keys.StoredKeys;
import org.sss.core.proto.Count;
import org.sss.core.proto.CreateTable;
import org.sss.core.proto.ErrorCode;
import org.sss.core.proto.GetView;
import org.sss.core.proto.Hello;
import org.sss.core.proto.ListTables;
import org.sss.core.proto.PutBatch;
import org.sss.core.proto.Request;
import org.sss.core.proto.Response;
import org.sss.core.proto.StageProgress;
import org.sss.core.proto.StopNode;
import org.sss.core.proto.TableInfo;
import org.sss.core.transport.Auth;
import org.sss.core.transport.FrameLimit;
import org.sss.core.transport.PairBlock;
import org.sss.core.transport.Pipelines;
import org.sss.kvs.NodeStore;
import org.sss.server.execution.EngineService;
import org.sss.server.store.KvsService;

/**
 * One connection to a node, through the pipeline a node builds for it (framing, frame limit,
 * handler) on an {@link EmbeddedChannel}, in front of a real store: the challenge and hello,
 * what an unauthenticated peer gets (nothing but refusals), requests answered by id from the
 * worker pool, writes kept in order, and reading paused and resumed under backpressure. The
 * worker pool is one the test runs by hand, so that "requests in flight" is exact.
 */
@Timeout(value = 60, unit = TimeUnit.SECONDS, threadMode = Timeout.ThreadMode.SEPARATE_THREAD)
class ConnectionHandlerTest {
  private static final String SECRET = "s3cret";
  private static final int MAX_VALUE = 1 << 20;

  @TempDir
  Path dir;

  private final ClusterSpec spec = ClusterSpec.of(List.of(new NodeAddress(0, "127.0.0.1", 20_001)), 8, SECRET);
  private final String layout = spec.partitionMap().layout();
  private NodeStore store;
  private KvsService kvs;
  private EngineService engine;
  private final HeldTasks workers = new HeldTasks();
  /** The clock by which the workers' progress is measured ({@link WorkerProgress}). */
  private final AtomicLong nanos = new AtomicLong(1_000_000_000L);
  private final Stopper stopper = new Stopper();
  private Unauthenticated unauthenticated = new Unauthenticated(Unauthenticated.DEFAULT_MAX);
  private QueuedRequests queued = new QueuedRequests(QueuedRequests.DEFAULT_MAX);
  private final List<Client> clients = new ArrayList<>();

  @BeforeEach
  void open() {
    store = NodeStore.open(dir);
    kvs = new KvsService(store, spec, 0, MAX_VALUE);
    engine = new EngineService(store, spec, 0, 1, MAX_VALUE);
  }

  @AfterEach
  void close() {
    clients.forEach(Client::close);
    engine.close();
    store.close();
  }

  /** A worker pool that runs nothing until the test says so. */
  static final class HeldTasks implements Executor {
    private final Deque<Runnable> tasks = new ArrayDeque<>();

    @Override
    public void execute(Runnable task) {
      tasks.add(task);
    }

    int size() {
      return tasks.size();
    }

    void runOldest(int n) {
      for (int i = 0; i < n; i++) {
        tasks.removeFirst().run();
      }
    }

    void runNewest() {
      tasks.removeLast().run();
    }

    void runAll() {
      while (!tasks.isEmpty()) {
        tasks.removeFirst().run();
      }
    }
  }

  /** What a StopNode did to the node, in order. */
  static final class Stopper implements ConnectionHandler.NodeStopper {
    final List<String> events = new ArrayList<>();

    @Override
    public int stopAcceptingAndFlush() {
      events.add("flush");
      return 3;
    }

    @Override
    public void closeSoon() {
      events.add("close");
    }
  }

  /** The client's end: writes request frames in, reads response frames out. */
  final class Client {
    final EmbeddedChannel channel;
    private final ByteBuf received = Unpooled.buffer();
    byte[] serverNonce;
    byte[] clientNonce;

    Client(Executor pool) {
      FrameLimit limit = FrameLimit.untilAuthenticated(Pipelines.DEFAULT_MAX_FRAME);
      ConnectionHandler handler = new ConnectionHandler(SECRET, 0, layout, kvs, engine,
          new WorkerProgress(pool, nanos::get), stopper, limit,
          unauthenticated, queued);
      channel = new EmbeddedChannel(new ChannelInitializer<Channel>() {
        @Override
        protected void initChannel(Channel c) { // as SssServer builds a connection's pipeline
          Pipelines.addFraming(c.pipeline(), Request.parser(), limit);
          c.pipeline().addLast("node", handler);
        }
      });
      channel.freezeTime(); // the authentication timeout runs only when a test moves the clock
      clients.add(this);
    }

    void send(Request request) {
      send(request, new byte[0]);
    }

    void send(Request request, byte[] body) {
      byte[] header = request.toByteArray();
      ByteBuf frame = Unpooled.buffer();
      frame.writeInt(4 + header.length + body.length).writeInt(header.length).writeBytes(header).writeBytes(body);
      channel.writeInbound(frame);
    }

    /** The responses written since the last call. */
    List<Response> responses() {
      channel.runPendingTasks();
      for (Object o; (o = channel.readOutbound()) != null; ) {
        ByteBuf b = (ByteBuf) o;
        received.writeBytes(b);
        b.release();
      }
      List<Response> out = new ArrayList<>();
      while (received.readableBytes() >= 4 && received.readableBytes() >= 4 + received.getInt(received.readerIndex())) {
        int frameLength = received.readInt();
        int headerLength = received.readInt();
        byte[] header = new byte[headerLength];
        received.readBytes(header);
        received.skipBytes(frameLength - 4 - headerLength);
        try {
          out.add(Response.parseFrom(header));
        } catch (com.google.protobuf.InvalidProtocolBufferException e) {
          throw new AssertionError(e);
        }
      }
      return out;
    }

    /** The one response written since the last call. */
    Response response() {
      List<Response> r = responses();
      assertEquals(1, r.size(), r.toString());
      return r.get(0);
    }

    byte[] challenge() {
      Response c = response();
      assertTrue(c.hasChallenge(), c.toString());
      serverNonce = c.getChallenge().getNonce().toByteArray();
      return serverNonce;
    }

    Request hello(long id, String secret, byte[] nonce) {
      clientNonce = Auth.nonce();
      return Request.newBuilder().setId(id).setHello(Hello.newBuilder()
          .setMac(ByteString.copyFrom(Auth.mac(secret, nonce, clientNonce)))
          .setClientNonce(ByteString.copyFrom(clientNonce)).setProtocolVersion(Pipelines.PROTOCOL_VERSION)
          .setPeerName("test").setLayout(layout)).build();
    }

    Client authenticated() {
      challenge();
      send(hello(1, SECRET, serverNonce));
      Response welcome = response();
      assertEquals(ErrorCode.OK, welcome.getCode(), welcome.getMessage());
      assertTrue(welcome.hasWelcome());
      return this;
    }

    boolean closed() {
      channel.runPendingTasks();
      return !channel.isOpen();
    }

    void close() {
      channel.finishAndReleaseAll();
      received.release();
    }
  }

  private Client connect() {
    return new Client(workers);
  }

  private static Request listTables(long id) {
    return Request.newBuilder().setId(id).setListTables(ListTables.getDefaultInstance()).build();
  }

  // ---- authentication -------------------------------------------------------------------

  @Test
  void theRightHello_getsAWelcomeWhoseProofVerifies() {
    Client c = connect();
    Response challenge = c.response();
    assertEquals(0, challenge.getId());
    assertEquals(Pipelines.PROTOCOL_VERSION, challenge.getChallenge().getProtocolVersion());
    assertEquals(0, challenge.getChallenge().getNodeId());
    byte[] nonce = challenge.getChallenge().getNonce().toByteArray();
    assertEquals(Auth.NONCE_BYTES, nonce.length);
    c.send(c.hello(9, SECRET, nonce));
    Response welcome = c.response();
    assertEquals(9, welcome.getId());
    assertEquals(ErrorCode.OK, welcome.getCode());
    byte[] proof = welcome.getWelcome().getProof().toByteArray();
    assertTrue(Auth.verifyServer(SECRET, nonce, c.clientNonce, proof), "the node proves it knows the secret");
    assertFalse(Auth.verifyServer("other", nonce, c.clientNonce, proof));
    assertFalse(Auth.verifyServer(SECRET, nonce, Auth.nonce(), proof), "the proof is bound to this client's nonce");
    assertFalse(c.closed());
    assertNotEquals(ByteString.copyFrom(nonce), ByteString.copyFrom(connect().challenge()),
        "every connection gets a challenge of its own");
  }

  @Test
  void aRequestBeforeTheHello_isRefusedUnauthenticated_andTheConnectionCloses() {
    store.create("secret-data", org.sss.core.proto.TableOptions.getDefaultInstance(), false);
    Client c = connect();
    c.challenge();
    c.send(listTables(5));
    Response r = c.response();
    assertEquals(5, r.getId());
    assertEquals(ErrorCode.UNAUTHENTICATED, r.getCode());
    assertEquals("node 0: authenticate first", r.getMessage());
    assertFalse(r.hasTables());
    assertTrue(c.closed());
    assertEquals(0, workers.size(), "nothing of an unauthenticated peer reaches the workers");
  }

  @Test
  void aHelloWithAWrongSecret_orAnotherConnectionsChallenge_isRefused() {
    Client wrong = connect();
    wrong.send(wrong.hello(2, "guess", wrong.challenge()));
    Response r = wrong.response();
    assertEquals(2, r.getId());
    assertEquals(ErrorCode.UNAUTHENTICATED, r.getCode());
    assertEquals("node 0: wrong cluster secret", r.getMessage());
    assertFalse(r.hasWelcome());
    assertTrue(wrong.closed());

    Client first = connect();
    Request replayed = first.hello(1, SECRET, first.challenge()); // valid for the first connection only
    Client second = connect();
    second.challenge();
    second.send(replayed);
    assertEquals(ErrorCode.UNAUTHENTICATED, second.response().getCode());
    assertTrue(second.closed());
  }

  @Test
  void aHelloOfAnotherProtocolVersion_isRefusedNamingBothVersions() {
    Client c = connect();
    Request hello = c.hello(3, SECRET, c.challenge());
    c.send(hello.toBuilder().setHello(hello.getHello().toBuilder().setProtocolVersion(Pipelines.PROTOCOL_VERSION + 1))
        .build());
    Response r = c.response();
    assertEquals(3, r.getId());
    assertEquals(ErrorCode.BAD_REQUEST, r.getCode());
    assertTrue(r.getMessage().contains("the peer speaks protocol version " + (Pipelines.PROTOCOL_VERSION + 1)
        + ", this node speaks " + Pipelines.PROTOCOL_VERSION), r.getMessage());
    assertTrue(c.closed());
  }

  @Test
  void aHelloOfAnotherPartitionLayout_isRefusedNamingBoth_andNoLayoutIsTaken() {
    Client c = connect();
    Request hello = c.hello(3, SECRET, c.challenge());
    String theirs = org.sss.core.cluster.PartitionMap.roundRobin(16, 1).layout();
    c.send(hello.toBuilder().setHello(hello.getHello().toBuilder().setLayout(theirs)).build());
    Response r = c.response();
    assertEquals(ErrorCode.BAD_REQUEST, r.getCode());
    assertTrue(r.getMessage().contains("(" + theirs + ") is not this node's (" + layout + ")"), r.getMessage());
    assertTrue(c.closed());

    Client old = connect(); // a peer that does not say its layout
    Request plain = old.hello(4, SECRET, old.challenge());
    old.send(plain.toBuilder().setHello(plain.getHello().toBuilder().clearLayout()).build());
    assertTrue(old.response().hasWelcome());
  }

  @Test
  void silence_isRefusedWhenTheAuthenticationTimeoutRunsOut_butAnAuthenticatedConnectionStays() {
    Client silent = connect();
    Client talking = connect().authenticated();
    silent.challenge();
    silent.channel.advanceTimeBy(ConnectionHandler.AUTH_TIMEOUT_SECONDS - 1, TimeUnit.SECONDS);
    silent.channel.runScheduledPendingTasks();
    assertEquals(List.of(), silent.responses());
    assertFalse(silent.closed());
    silent.channel.advanceTimeBy(1, TimeUnit.SECONDS);
    silent.channel.runScheduledPendingTasks();
    Response r = silent.response();
    assertEquals(ErrorCode.UNAUTHENTICATED, r.getCode());
    assertEquals("node 0: no hello within " + ConnectionHandler.AUTH_TIMEOUT_SECONDS + " s", r.getMessage());
    assertTrue(silent.closed());

    talking.channel.advanceTimeBy(ConnectionHandler.AUTH_TIMEOUT_SECONDS + 1, TimeUnit.SECONDS);
    talking.channel.runScheduledPendingTasks();
    assertEquals(List.of(), talking.responses());
    assertFalse(talking.closed());
  }

  @Test
  void connectionsWaitingToAuthenticate_areBounded_andAnAuthenticatedOneLeavesTheCount() {
    unauthenticated = new Unauthenticated(1);
    Client a = connect();
    a.challenge();
    Client b = connect();
    Response busy = b.response();
    assertEquals(ErrorCode.BUSY, busy.getCode());
    assertEquals(0, busy.getId());
    assertTrue(busy.getMessage().contains("1 connections are waiting to authenticate"), busy.getMessage());
    assertTrue(b.closed());
    assertEquals(1, unauthenticated.waiting(), "a refused connection never counted");

    a.send(a.hello(1, SECRET, a.serverNonce));
    assertTrue(a.response().hasWelcome());
    assertEquals(0, unauthenticated.waiting());
    Client c = connect();
    c.challenge(); // admitted now
    Client d = connect();
    assertEquals(ErrorCode.BUSY, d.response().getCode());
    c.channel.close();
    assertTrue(c.closed());
    assertEquals(0, unauthenticated.waiting(), "a connection that closes before its hello leaves the count");
    connect().challenge();
  }

  @Test
  void aFrameOverTheSmallLimitBeforeAuthentication_isRefusedAndCloses_butTakenAfterwards() {
    Client early = connect();
    early.challenge();
    ByteBuf big = Unpooled.buffer().writeInt(FrameLimit.BEFORE_AUTHENTICATION + 1).writeBytes(new byte[100]);
    early.channel.writeInbound(big);
    Response r = early.response();
    assertEquals(ErrorCode.FRAME_TOO_LARGE, r.getCode());
    assertTrue(r.getMessage().contains("a frame of " + (FrameLimit.BEFORE_AUTHENTICATION + 1)
        + " bytes before authentication"), r.getMessage());
    assertTrue(early.closed());

    Client c = connect().authenticated();
    createTable(c, "t");
    ByteBuf body = Unpooled.buffer();
    List<byte[]> keys = new ArrayList<>();
    for (int i = 0; i < 100; i++) {
      byte[] key = {(byte) i};
      keys.add(StoredKeys.storedKey(spec.partitionMap().partitionOf(key), key));
      PairBlock.write(body, keys.get(i), new byte[1000]);
    }
    byte[] bytes = new byte[body.readableBytes()];
    body.readBytes(bytes).release();
    assertTrue(bytes.length > FrameLimit.BEFORE_AUTHENTICATION);
    c.send(Request.newBuilder().setId(6).setPutBatch(PutBatch.newBuilder().setTable("t").setPairCount(100)).build(),
        bytes);
    workers.runAll();
    Response ack = c.response();
    assertEquals(ErrorCode.OK, ack.getCode(), ack.getMessage());
    assertEquals(100, ack.getAck().getPairs());
    for (byte[] key : keys) {
      assertArrayEquals(new byte[1000], store.require("t").get(key));
    }
  }

  // ---- requests ---------------------------------------------------------------------------

  private void createTable(Client c, String table) {
    c.send(Request.newBuilder().setId(100).setCreateTable(CreateTable.newBuilder().setTable(table)).build());
    workers.runAll();
    assertEquals(ErrorCode.OK, c.response().getCode());
  }

  @Test
  void afterAuthentication_requestsRunOnTheWorkers_andEachAnswerCarriesItsRequestsId() {
    Client c = connect().authenticated();
    c.send(Request.newBuilder().setId(7).setCount(Count.newBuilder().setTable("nope")).build());
    c.send(Request.newBuilder().setId(8).setCreateTable(CreateTable.newBuilder().setTable("t")).build());
    assertEquals(List.of(), c.responses(), "answered by the workers, not on the event loop");
    assertEquals(2, workers.size());
    workers.runNewest(); // out of order: the answers say which request they answer
    workers.runNewest();
    List<Response> answers = c.responses();
    assertEquals(List.of(8L, 7L), answers.stream().map(Response::getId).toList());
    assertEquals(ErrorCode.OK, answers.get(0).getCode());
    assertEquals("t", answers.get(0).getTable().getName());
    assertEquals(ErrorCode.NO_SUCH_TABLE, answers.get(1).getCode());
    assertFalse(c.closed(), "a refused request leaves the connection open");

    c.send(listTables(9));
    workers.runAll();
    Response tables = c.response();
    assertEquals(9, tables.getId());
    assertEquals(List.of("t"), tables.getTables().getTablesList().stream().map(TableInfo::getName).toList());
  }

  /**
   * The membership probes a node with GetView: answered at once, however many requests wait for
   * the workers, so a node that is busy is not taken for one that is dead; the answer says how
   * long the waiting requests have waited with no worker beginning one, so one whose workers
   * hang is still found out.
   */
  @Test
  void aGetView_isAnsweredAtOnce_whileEveryWorkerIsBusy_sayingHowLongTheyHaveNotMoved() {
    Client c = connect().authenticated();
    c.send(Request.newBuilder().setId(7).setCreateTable(CreateTable.newBuilder().setTable("t")).build());
    c.send(listTables(8));
    nanos.addAndGet(12_000_000_000L);
    c.send(Request.newBuilder().setId(9).setGetView(GetView.getDefaultInstance()).build());
    Response view = c.response();
    assertEquals(9, view.getId());
    assertEquals(ErrorCode.OK, view.getCode(), view.getMessage());
    assertTrue(view.hasView(), view.toString());
    assertEquals(12_000, view.getView().getWorkersStalledMillis());
    assertEquals(3, workers.size(), "the other requests still wait for the workers, with the probe's sample");
    workers.runAll();
    assertEquals(List.of(7L, 8L), c.responses().stream().map(Response::getId).toList());
    c.send(Request.newBuilder().setId(10).setGetView(GetView.getDefaultInstance()).build());
    assertEquals(0, c.response().getView().getWorkersStalledMillis(), "nothing waits now");
  }

  /** The coordinator polls a stage with StageProgress: answered at once, like a GetView. */
  @Test
  void aStageProgress_isAnsweredAtOnce_whileEveryWorkerIsBusy() {
    Client c = connect().authenticated();
    c.send(listTables(7));
    c.send(Request.newBuilder().setId(8).setStageProgress(StageProgress.newBuilder().setJobId("no-such-job")).build());
    Response progress = c.response();
    assertEquals(8, progress.getId());
    assertEquals(ErrorCode.OK, progress.getCode(), progress.getMessage());
    assertTrue(progress.getStageReport().getDone(), "a stage this node does not run is done here");
    assertEquals(1, workers.size());
    workers.runAll();
    assertEquals(7, c.response().getId());
  }

  @Test
  void writesOfOneConnection_runOneAtATimeInArrivalOrder_besideItsOtherRequests() {
    Client c = connect().authenticated();
    createTable(c, "t");
    byte[] key = StoredKeys.storedKey(spec.partitionMap().partitionOf(new byte[] {42}), new byte[] {42});
    for (int i = 1; i <= 3; i++) {
      ByteBuf body = Unpooled.buffer();
      PairBlock.write(body, key, new byte[] {(byte) i});
      byte[] bytes = new byte[body.readableBytes()];
      body.readBytes(bytes).release();
      c.send(Request.newBuilder().setId(10 + i).setPutBatch(PutBatch.newBuilder().setTable("t").setPairCount(1))
          .build(), bytes);
      c.send(listTables(20 + i));
    }
    assertEquals(4, workers.size(), "three reads, and the writes' lane holding its first write");
    while (workers.size() > 0) {
      workers.runNewest(); // whatever came last first: the writes keep their order all the same
    }
    List<Long> writes = c.responses().stream().map(Response::getId).filter(id -> id < 20).toList();
    assertEquals(List.of(11L, 12L, 13L), writes);
    assertArrayEquals(new byte[] {3}, store.require("t").get(key), "the last write of the key wins");
  }

  @Test
  void aStopNodeIsAnswered_withTheTablesFlushed_beforeTheNodeCloses() {
    Client c = connect().authenticated();
    c.send(Request.newBuilder().setId(4).setStopNode(StopNode.getDefaultInstance()).build());
    assertEquals(List.of(), stopper.events);
    workers.runAll();
    Response r = c.response();
    assertEquals(4, r.getId());
    assertEquals(3, r.getAck().getPairs());
    assertEquals(List.of("flush", "close"), stopper.events);
  }

  @Test
  void aConnectionThatCreatedAJobsTable_abortsTheJobWhenItCloses() throws InterruptedException {
    Client c = connect().authenticated();
    String table = "sss-tmp-j1-0";
    c.send(Request.newBuilder().setId(2).setCreateTable(CreateTable.newBuilder().setTable(table).setJobId("j1")).build());
    workers.runAll();
    assertEquals(ErrorCode.OK, c.response().getCode());
    assertTrue(store.table(table).isPresent());
    assertFalse(engine.aborted("j1"));
    c.channel.close();
    assertTrue(c.closed());
    long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(30);
    while ((store.table(table).isPresent() || !engine.aborted("j1")) && System.nanoTime() < deadline) {
      Thread.sleep(10); // the abort runs on the engine's own threads
    }
    assertTrue(engine.aborted("j1"), "the job lost its coordinator");
    assertFalse(store.table(table).isPresent(), "its table is dropped");
  }

  @Test
  void aPoolThatRefusesWork_answersInternal_andHoldsNothing() {
    Client c = new Client(task -> {
      throw new RejectedExecutionException("shut down");
    }).authenticated();
    c.send(listTables(3));
    Response r = c.response();
    assertEquals(3, r.getId());
    assertEquals(ErrorCode.INTERNAL, r.getCode());
    assertEquals("node 0 is shutting down", r.getMessage());
    assertEquals(0, queued.held());
    assertTrue(c.channel.config().isAutoRead());
  }

  // ---- backpressure -----------------------------------------------------------------------

  @Test
  void pastMaxInFlight_theConnectionStopsReading_andReadsAgainAtHalf() {
    Client c = connect().authenticated();
    int max = ConnectionHandler.MAX_IN_FLIGHT;
    for (int i = 1; i < max; i++) {
      c.send(listTables(i));
      assertTrue(c.channel.config().isAutoRead(), i + " in flight");
    }
    c.send(listTables(max));
    assertFalse(c.channel.config().isAutoRead(), max + " in flight: the connection stops reading");
    assertEquals(max, workers.size());
    workers.runOldest(max / 2);
    assertFalse(c.channel.config().isAutoRead(), max / 2 + " still in flight");
    workers.runOldest(1);
    assertTrue(c.channel.config().isAutoRead(), "below half: reading again");
    workers.runAll();
    List<Long> ids = c.responses().stream().map(Response::getId).sorted().toList();
    assertEquals(java.util.stream.LongStream.rangeClosed(1, max).boxed().toList(), ids, "every request answered once");
  }

  @Test
  void pastTheNodesBound_aConnectionBringingARequestStops_andReadsAgainOnlyAtHalfTheBound() {
    queued = new QueuedRequests(4);
    Client busy = connect().authenticated();
    Client other = connect().authenticated();
    for (int i = 1; i <= 4; i++) {
      busy.send(listTables(i));
    }
    assertTrue(busy.channel.config().isAutoRead(), "4 held: within the node's bound");
    other.send(listTables(5));
    other.send(listTables(6)); // read in the same socket read as the fifth
    assertFalse(other.channel.config().isAutoRead(), "the fifth request is past the node's bound");
    assertTrue(busy.channel.config().isAutoRead(), "only a connection that brings a request past the bound stops");
    assertEquals(1, queued.pauses(), "a paused connection waits once");
    workers.runNewest(); // the paused connection's own requests finish first: 4 held
    workers.runNewest();
    assertEquals(2, other.responses().size());
    assertEquals(4, queued.held());
    assertFalse(other.channel.config().isAutoRead(), "still past half the node's bound: its own answers do not resume it");
    workers.runOldest(1); // 3 held
    assertFalse(other.channel.config().isAutoRead());
    workers.runOldest(1); // 2 held: half the bound
    assertTrue(other.channel.config().isAutoRead());
    workers.runAll();
    assertEquals(4, busy.responses().size());
    assertEquals(0, queued.held());
    assertEquals(6, queued.peak());
  }
}
