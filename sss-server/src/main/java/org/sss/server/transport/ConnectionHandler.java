package org.sss.server.transport;

import com.google.protobuf.ByteString;
import io.netty.channel.ChannelFutureListener;
import io.netty.channel.ChannelHandlerContext;
import io.netty.channel.SimpleChannelInboundHandler;
import io.netty.handler.codec.CorruptedFrameException;
import io.netty.handler.codec.DecoderException;
import io.netty.handler.codec.TooLongFrameException;
import java.io.IOException;
import java.util.List;
import java.util.Set;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.Executor;
import java.util.concurrent.RejectedExecutionException;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicInteger;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;
import org.sss.core.proto.Ack;
import org.sss.core.proto.Challenge;
import org.sss.core.proto.ErrorCode;
import org.sss.core.proto.Request;
import org.sss.core.proto.Response;
import org.sss.core.proto.Welcome;
import org.sss.core.transport.Auth;
import org.sss.core.transport.Frame;
import org.sss.core.transport.FrameLimit;
import org.sss.core.transport.Pipelines;
import org.sss.kvs.StoreException;
import org.sss.server.execution.EngineService;
import org.sss.server.execution.UserCodeException;
import org.sss.server.store.KvsService;
import org.sss.server.store.ScanRegistry;

/**
 * One client's connection to this node.
 *
 * <h2>Protocol state</h2>
 * On connect the server sends a {@link Challenge}; the first request must be a Hello carrying
 * the MAC of the challenge under the cluster secret. Anything else, a wrong MAC, or silence for
 * {@link #AUTH_TIMEOUT_SECONDS} gets an UNAUTHENTICATED error and the connection closed: an
 * unauthenticated peer learns nothing, not even table names.
 *
 * <h2>Errors</h2>
 * A request the store refuses (missing table, oversized value, ...) gets an error response
 * with its code and the connection stays open. A frame that cannot be decoded (too long,
 * garbage) gets one connection-level error (id 0) and the connection is closed, since the byte
 * stream can no longer be trusted. Neither affects other connections.
 *
 * <h2>Order</h2>
 * Requests run in parallel on the worker pool, except writes (put batches, deletes, shuffle
 * batches): those of one connection run one after another, in the order they arrived, on a
 * sequential lane over the same pool. A writer that keeps several batches in flight (a
 * {@code BulkWriter}, a stage's shuffle) thus sees its later write of a key win over its
 * earlier one, as it would with one request at a time; pipelining still hides the round trips.
 *
 * <h2>Backpressure</h2>
 * Requests run on the worker pool; when more than {@link #MAX_IN_FLIGHT} of this connection's
 * requests are running or queued, the connection stops reading until some finish, and so does
 * every connection that brings a request while the node holds its bound over all connections
 * ({@link QueuedRequests}). Open scans
 * also read their next chunk ahead on the same pool (one chunk per scan, see
 * {@link ScanRegistry}).
 */
public final class ConnectionHandler extends SimpleChannelInboundHandler<Frame<Request>> {
  private static final Logger LOG = LoggerFactory.getLogger(ConnectionHandler.class);
  static final int AUTH_TIMEOUT_SECONDS = 10;
  static final int MAX_IN_FLIGHT = 16;

  private final String secret;
  private final int nodeId;
  /** This node's partition layout: peers must route keys by the same one. */
  private final String layout;
  private final KvsService kvs;
  private final EngineService engine;
  private final WorkerProgress workers;
  private final ScanRegistry scans;
  /** What a StopNode request does to the node. */
  public interface NodeStopper {
    /** Stops accepting connections and flushes every table; returns the tables flushed. */
    int stopAcceptingAndFlush();

    /** Closes the node in the background (the process then ends). */
    void closeSoon();
  }

  private final NodeStopper stopNode;
  /** Runs this connection's writes one at a time, in arrival order (see the class comment). */
  private final Executor writeLane;
  private final AtomicInteger inFlight = new AtomicInteger();
  /** True while this connection waits in {@link QueuedRequests} (once at most). */
  private final AtomicBoolean pausedByNode = new AtomicBoolean();
  /** Jobs whose stages this connection started: it is their coordinator. */
  private final Set<String> coordinatedJobs = ConcurrentHashMap.newKeySet();
  private byte[] nonce;
  private volatile boolean authenticated;
  /** The frames this connection may send: small until it authenticates. */
  private final FrameLimit frameLimit;
  private final Unauthenticated unauthenticated;
  /** The node's requests over all its connections. */
  private final QueuedRequests queued;
  /** True while this connection counts in {@link #unauthenticated}. */
  private boolean counted;

  public ConnectionHandler(String secret, int nodeId, String layout, KvsService kvs, EngineService engine,
                           WorkerProgress workers, NodeStopper stopNode, FrameLimit frameLimit,
                           Unauthenticated unauthenticated, QueuedRequests queued) {
    super(false);
    this.queued = queued;
    this.frameLimit = frameLimit;
    this.unauthenticated = unauthenticated;
    this.layout = layout;
    this.stopNode = stopNode;
    this.secret = secret;
    this.nodeId = nodeId;
    this.kvs = kvs;
    this.engine = engine;
    this.workers = workers;
    this.scans = new ScanRegistry(workers);
    this.writeLane = new OrderedLane(workers);
  }

  /** Writes whose order a writer depends on. */
  private static boolean ordered(Request req) {
    return switch (req.getOpCase()) {
      case PUT_BATCH, DELETE, SHUFFLE_BATCH -> true;
      default -> false;
    };
  }

  @Override
  public void channelActive(ChannelHandlerContext ctx) {
    if (!unauthenticated.admit()) {
      LOG.warn("node {}: refused {}: {} connections are already waiting to authenticate", nodeId,
          ctx.channel().remoteAddress(), unauthenticated.max());
      reject(ctx, 0, ErrorCode.BUSY, unauthenticated.max() + " connections are waiting to authenticate;"
          + " try again later");
      return;
    }
    counted = true;
    nonce = Auth.nonce();
    ctx.writeAndFlush(Frame.of(Response.newBuilder().setChallenge(Challenge.newBuilder()
        .setNonce(ByteString.copyFrom(nonce)).setProtocolVersion(Pipelines.PROTOCOL_VERSION).setNodeId(nodeId)).build()));
    ctx.executor().schedule(() -> {
      if (!authenticated && ctx.channel().isActive()) {
        reject(ctx, 0, ErrorCode.UNAUTHENTICATED, "no hello within " + AUTH_TIMEOUT_SECONDS + " s");
      }
    }, AUTH_TIMEOUT_SECONDS, TimeUnit.SECONDS);
    ctx.fireChannelActive();
  }

  @Override
  protected void channelRead0(ChannelHandlerContext ctx, Frame<Request> frame) {
    Request req = frame.header();
    if (!authenticated) {
      frame.release();
      if (!req.hasHello()) {
        reject(ctx, req.getId(), ErrorCode.UNAUTHENTICATED, "authenticate first");
      } else if (!Auth.verify(secret, nonce, req.getHello().getClientNonce().toByteArray(),
          req.getHello().getMac().toByteArray())) {
        LOG.warn("node {}: rejected {} ({}): wrong secret", nodeId, ctx.channel().remoteAddress(),
            req.getHello().getPeerName());
        reject(ctx, req.getId(), ErrorCode.UNAUTHENTICATED, "wrong cluster secret");
      } else if (req.getHello().getProtocolVersion() != Pipelines.PROTOCOL_VERSION) {
        reject(ctx, req.getId(), ErrorCode.BAD_REQUEST, "the peer speaks protocol version "
            + req.getHello().getProtocolVersion() + ", this node speaks " + Pipelines.PROTOCOL_VERSION
            + ": run the same SSS version on every node and client");
      } else if (!req.getHello().getLayout().isEmpty() && !req.getHello().getLayout().equals(layout)) {
        LOG.warn("node {}: refused {} ({}): its cluster file's layout {} is not this node's {}", nodeId,
            ctx.channel().remoteAddress(), req.getHello().getPeerName(), req.getHello().getLayout(), layout);
        reject(ctx, req.getId(), ErrorCode.BAD_REQUEST, "the cluster file's partition layout (" + req.getHello().getLayout()
            + ") is not this node's (" + layout + "): keys would go to partitions nobody reads; use the cluster's own file");
      } else {
        authenticated = true;
        frameLimit.lift();
        leaveCount();
        byte[] proof = Auth.serverProof(secret, nonce, req.getHello().getClientNonce().toByteArray());
        ctx.writeAndFlush(Frame.of(Response.newBuilder().setId(req.getId()).setCode(ErrorCode.OK)
            .setWelcome(Welcome.newBuilder().setProof(ByteString.copyFrom(proof))).build()));
      }
      return;
    }
    if (req.getOpCase() == Request.OpCase.GET_VIEW) {
      answerViewNow(ctx, frame);
      return;
    }
    if (req.getOpCase() == Request.OpCase.STAGE_PROGRESS) {
      answerProgressNow(ctx, frame);
      return;
    }
    noteCoordinatedJob(req);
    boolean overOwn = inFlight.incrementAndGet() >= MAX_IN_FLIGHT;
    boolean overNode = !queued.enter();
    if (overOwn || overNode) {
      ctx.channel().config().setAutoRead(false);
    }
    if (overNode && pausedByNode.compareAndSet(false, true)) {
      queued.pause(() -> {
        pausedByNode.set(false);
        resumeReading(ctx);
      });
    }
    try {
      (ordered(req) ? writeLane : workers).execute(() -> run(ctx, frame));
    } catch (RejectedExecutionException e) {
      frame.release();
      finished(ctx);
      ctx.writeAndFlush(error(req.getId(), ErrorCode.INTERNAL, "node " + nodeId + " is shutting down"));
    }
  }

  /** A connection that creates a job's tables or runs its stages is that job's coordinator. */
  private void noteCoordinatedJob(Request req) {
    if (req.hasCommitJob()) {
      // a committed job needs no clean-up when this connection closes; a commit that fails
      // makes the job this connection's again (commitFailed)
      coordinatedJobs.remove(req.getCommitJob().getJobId());
    } else if (req.hasAbortJob()) {
      coordinatedJobs.remove(req.getAbortJob().getJobId());
    } else if (req.hasRunStage()) {
      coordinatedJobs.add(req.getRunStage().getJobId());
    } else {
      String job = intermediateJobOf(req);
      if (job != null) {
        coordinatedJobs.add(job);
      }
    }
  }

  /** The job a CreateTable creates a table for, or null. */
  private static String intermediateJobOf(Request req) {
    return req.hasCreateTable() && !req.getCreateTable().getJobId().isEmpty() ? req.getCreateTable().getJobId() : null;
  }

  /**
   * Answers a {@code GetView} on the event loop, not through the workers. It is how the
   * membership's leader probes whether a node is alive (and how clients learn the view), and it
   * reads only the view held in memory. Queued behind the workers' requests, it went unanswered
   * while they were busy (a commit flushing and syncing a large output, a scan, catching up):
   * five such seconds decided a node down that was only busy, and its jobs ran again. Whether
   * the workers move at all goes with the answer ({@link WorkerProgress}): a node whose workers
   * hang still ends up decided down.
   */
  private void answerViewNow(ChannelHandlerContext ctx, Frame<Request> frame) {
    Request req = frame.header();
    Frame<Response> answer;
    try {
      Frame<Response> view = kvs.handle(req, frame.body(), scans, ctx.alloc());
      Response r = view.header();
      answer = !r.hasView() ? view : Frame.of(r.toBuilder()
          .setView(r.getView().toBuilder().setWorkersStalledMillis(workers.stalledMillis())).build());
      workers.sample(); // workers that hang with nothing waiting show by the next probe
    } catch (RuntimeException e) {
      LOG.error("node {}: {} failed", nodeId, req.getOpCase(), e);
      answer = error(req.getId(), ErrorCode.INTERNAL, e.toString());
    } finally {
      frame.release();
    }
    ctx.writeAndFlush(answer);
  }

  /**
   * Answers a {@code StageProgress} on the event loop: the coordinator polls each node's stage
   * with it and takes a node that does not answer within its wait for lost, and it reads only
   * counters held in memory. Behind busy workers it could wait past that.
   */
  private void answerProgressNow(ChannelHandlerContext ctx, Frame<Request> frame) {
    long id = frame.header().getId();
    engineAnswer(frame).whenComplete((r, e) -> ctx.writeAndFlush(e == null ? r : EngineService.error(id, e)));
  }

  /** The engine's answer to a request, a failed future if it threw; releases the frame. */
  private CompletableFuture<Frame<Response>> engineAnswer(Frame<Request> frame) {
    try {
      return engine.handle(frame.header(), frame.body());
    } catch (Throwable e) {
      return CompletableFuture.failedFuture(e);
    } finally {
      frame.release();
    }
  }

  private void run(ChannelHandlerContext ctx, Frame<Request> frame) {
    Request req = frame.header();
    if (EngineService.handles(req)) {
      runEngine(ctx, frame);
      return;
    }
    if (req.hasStopNode()) {
      LOG.info("node {}: stop requested by {}", nodeId, ctx.channel().remoteAddress());
      frame.release();
      int flushed = stopNode.stopAcceptingAndFlush();
      ctx.writeAndFlush(Frame.of(Response.newBuilder().setId(req.getId()).setCode(ErrorCode.OK)
          .setAck(Ack.newBuilder().setPairs(flushed)).build()))
          .addListener(written -> stopNode.closeSoon()); // the answer first, then the connections go
      finished(ctx);
      return;
    }
    Frame<Response> answer;
    try {
      String abortedJob = intermediateJobOf(req);
      if (abortedJob != null && engine.aborted(abortedJob)) {
        throw new StoreException(ErrorCode.JOB_ABORTED, "job " + abortedJob + " was aborted");
      }
      answer = kvs.handle(req, frame.body(), scans, ctx.alloc());
    } catch (StoreException e) {
      answer = error(req.getId(), e.code(), e.getMessage());
    } catch (CorruptedFrameException e) {
      answer = error(req.getId(), ErrorCode.BAD_REQUEST, "malformed body: " + e.getMessage());
    } catch (RuntimeException | Error e) {
      // an Error too: the request must still be answered and counted out, or its slots stay taken
      LOG.error("node {}: {} failed", nodeId, req.getOpCase(), e);
      answer = error(req.getId(), ErrorCode.INTERNAL, e.toString());
    } finally {
      frame.release();
    }
    try {
      ctx.writeAndFlush(answer);
    } finally {
      finished(ctx);
    }
  }

  /**
   * Engine requests may complete later (a stage runs for as long as it takes); the worker
   * thread is released at once and the answer is written when the future completes.
   */
  private void runEngine(ChannelHandlerContext ctx, Frame<Request> frame) {
    Request req = frame.header();
    CompletableFuture<Frame<Response>> answer = engineAnswer(frame);
    if (req.hasRunStage()) {
      // a running stage must not hold back this connection's other requests
      finished(ctx);
    }
    answer.whenComplete((r, e) -> {
      try {
        if (e != null && req.hasCommitJob()) {
          commitFailed(ctx, req.getCommitJob().getJobId());
        }
        if (e != null && !(e instanceof StoreException) && !(e.getCause() instanceof StoreException)
            && !(e instanceof UserCodeException)) {
          LOG.debug("node {}: {} failed", nodeId, req.getOpCase(), e);
        }
        ctx.writeAndFlush(e == null ? r : EngineService.error(req.getId(), e));
      } finally {
        if (!req.hasRunStage()) {
          finished(ctx);
        }
      }
    });
  }

  /**
   * A commit that failed here leaves the job's tables and reserved names: its coordinator aborts
   * the job then, unless it is gone. The job is this connection's again, so that its close
   * aborts it; a connection already closed (the coordinator died while the commit ran) aborts it
   * now. An abort after another is harmless.
   */
  private void commitFailed(ChannelHandlerContext ctx, String jobId) {
    coordinatedJobs.add(jobId);
    if (!ctx.channel().isActive()) {
      engine.coordinatorLost(List.of(jobId));
    }
  }

  private void finished(ChannelHandlerContext ctx) {
    inFlight.decrementAndGet();
    queued.leave();
    resumeReading(ctx);
  }

  /**
   * Reads again unless this connection still has many requests of its own in flight, or waits
   * for the node to be down to half its bound ({@link QueuedRequests} resumes it then).
   */
  private void resumeReading(ChannelHandlerContext ctx) {
    if (inFlight.get() < MAX_IN_FLIGHT / 2 && !pausedByNode.get() && !ctx.channel().config().isAutoRead()) {
      ctx.channel().config().setAutoRead(true);
    }
  }

  private static Frame<Response> error(long id, ErrorCode code, String message) {
    return Frame.of(Response.newBuilder().setId(id).setCode(code).setMessage(message).build());
  }

  private void reject(ChannelHandlerContext ctx, long id, ErrorCode code, String message) {
    ctx.writeAndFlush(error(id, code, "node " + nodeId + ": " + message))
        .addListener(ChannelFutureListener.CLOSE);
  }

  private void leaveCount() {
    if (counted) {
      counted = false;
      unauthenticated.leave();
    }
  }

  @Override
  public void channelInactive(ChannelHandlerContext ctx) {
    leaveCount();
    scans.close();
    if (!coordinatedJobs.isEmpty()) {
      engine.coordinatorLost(coordinatedJobs);
    }
    ctx.fireChannelInactive();
  }

  @Override
  public void exceptionCaught(ChannelHandlerContext ctx, Throwable cause) {
    Throwable c = cause instanceof DecoderException && cause.getCause() != null ? cause.getCause() : cause;
    if (c instanceof TooLongFrameException) {
      reject(ctx, 0, ErrorCode.FRAME_TOO_LARGE, c.getMessage());
    } else if (c instanceof CorruptedFrameException || cause instanceof DecoderException) {
      reject(ctx, 0, ErrorCode.BAD_REQUEST, "malformed frame: " + c.getMessage());
    } else if (c instanceof IOException) {
      ctx.close();
    } else {
      LOG.warn("node {}: closing {} after {}", nodeId, ctx.channel().remoteAddress(), c.toString());
      reject(ctx, 0, ErrorCode.INTERNAL, c.toString());
    }
  }
}
