package org.sss.server.execution;

import io.netty.buffer.ByteBuf;
import io.netty.buffer.ByteBufUtil;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.atomic.AtomicLong;
import java.util.concurrent.atomic.AtomicReference;
import io.netty.util.concurrent.DefaultThreadFactory;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;
import org.sss.core.cluster.ClusterSpec;
import org.sss.core.proto.Ack;
import org.sss.core.proto.ErrorCode;
import org.sss.core.proto.Request;
import org.sss.core.proto.Response;
import org.sss.core.proto.RunStage;
import org.sss.core.proto.StageReport;
import org.sss.core.proto.StageSpec;
import org.sss.core.transport.Frame;
import org.sss.core.transport.NodeUnavailableException;
import org.sss.kvs.NodeStore;
import org.sss.kvs.StoreException;
import org.sss.kvs.StoreTable;

/**
 * The engine's requests on one node: run a stage, receive shuffle batches, abort a job, report
 * progress, and cache job JARs.
 */
public final class EngineService implements AutoCloseable {
  private static final Logger LOG = LoggerFactory.getLogger(EngineService.class);

  private final NodeStore store;
  private final ClusterSpec cluster;
  private final int nodeId;
  private final int defaultThreads;
  private final PeerLinks peers;
  private final JarCache jars;
  private final ShuffleReceiver receiver;
  private final ExecutorService readers;
  /** Threads that run tasks, shared by all stages (kept for a minute when idle). */
  private final ExecutorService runners;
  private final Map<String, StageExecution> running = new ConcurrentHashMap<>();
  private final Map<String, String> abortedJobs = new ConcurrentHashMap<>();
  private final AtomicLong sequence = new AtomicLong();

  public EngineService(NodeStore store, ClusterSpec cluster, int nodeId, int defaultThreads, int maxValueBytes) {
    this.store = store;
    this.cluster = cluster;
    this.nodeId = nodeId;
    this.defaultThreads = defaultThreads;
    this.peers = new PeerLinks(cluster, nodeId);
    this.jars = new JarCache(store.dir().resolve("jars"));
    this.receiver = new ShuffleReceiver(store, maxValueBytes);
    this.readers = Executors.newCachedThreadPool(new DefaultThreadFactory("sss-node" + nodeId + "-reader", true));
    this.runners = Executors.newCachedThreadPool(new DefaultThreadFactory("sss-node" + nodeId + "-task", true));
    dropLeftoverIntermediates();
  }

  /** Prefix of the tables a job creates between its stages. */
  public static final String INTERMEDIATE_PREFIX = "sss-tmp-";

  /**
   * A node that starts cannot be part of a running job (its coordinator failed the job when the
   * node went away), so tables between stages found at start are leftovers of failed jobs.
   */
  private void dropLeftoverIntermediates() {
    for (StoreTable t : store.tables()) {
      if (t.name().startsWith(INTERMEDIATE_PREFIX)) {
        LOG.info("node {}: dropping {} left by a job that did not finish", nodeId, t.name());
        store.drop(t.name(), true);
      }
    }
  }

  /** True for the requests this service answers. */
  public static boolean handles(Request req) {
    return switch (req.getOpCase()) {
      case RUN_STAGE, SHUFFLE_BATCH, ABORT_JOB, STAGE_PROGRESS, PUT_JAR, HAS_JAR -> true;
      default -> false;
    };
  }

  /**
   * Answers a request. Everything but RunStage completes before returning; RunStage's future
   * completes when the node's part of the stage is done.
   */
  public CompletableFuture<Frame<Response>> handle(Request req, ByteBuf body) {
    Response.Builder ok = Response.newBuilder().setId(req.getId()).setCode(ErrorCode.OK);
    switch (req.getOpCase()) {
      case RUN_STAGE -> {
        return runStage(req.getRunStage()).thenApply(r -> Frame.of(ok.setStageReport(r).build()));
      }
      case SHUFFLE_BATCH -> {
        long n = receiver.write(req.getShuffleBatch(), body);
        return CompletableFuture.completedFuture(Frame.of(ok.setAck(Ack.newBuilder().setPairs(n)).build()));
      }
      case ABORT_JOB -> {
        abort(req.getAbortJob().getJobId(), req.getAbortJob().getReason());
        return CompletableFuture.completedFuture(Frame.of(ok.setAck(Ack.getDefaultInstance()).build()));
      }
      case STAGE_PROGRESS -> {
        StageExecution e = running.get(req.getStageProgress().getJobId());
        StageReport r = e == null ? StageReport.newBuilder().setDone(true).build() : e.report(false);
        return CompletableFuture.completedFuture(Frame.of(ok.setStageReport(r).build()));
      }
      case PUT_JAR -> {
        jars.put(req.getPutJar().getHash(), ByteBufUtil.getBytes(body));
        return CompletableFuture.completedFuture(Frame.of(ok.setAck(Ack.getDefaultInstance()).build()));
      }
      case HAS_JAR -> {
        boolean has = jars.has(req.getHasJar().getHash());
        return CompletableFuture.completedFuture(Frame.of(ok.setAck(Ack.newBuilder().setPairs(has ? 1 : 0)).build()));
      }
      default -> throw new StoreException(ErrorCode.BAD_REQUEST, "not an engine request: " + req.getOpCase());
    }
  }

  private CompletableFuture<StageReport> runStage(RunStage run) {
    String jobId = run.getJobId();
    StageSpec spec = run.getStage();
    if (abortedJobs.containsKey(jobId)) {
      return CompletableFuture.failedFuture(new StoreException(ErrorCode.JOB_ABORTED,
          "job " + jobId + " was aborted: " + abortedJobs.get(jobId)));
    }
    StoreTable input = store.require(spec.getInputTable());
    StoreTable output = store.require(spec.getOutputTable());
    ClassLoader loader = jars.loader(spec.getJarHash());
    AtomicReference<Throwable> failure = new AtomicReference<>();
    StageShuffle shuffle = new StageShuffle(jobId, spec.getOutputTable(), spec.getOutputMultiValued(), nodeId,
        cluster.partitionMap(), output, peers, failure, sequence);
    StageContext context = new StageContext(jobId, spec, nodeId, loader, input, shuffle, failure);
    List<Integer> partitions = cluster.partitionMap().partitionsOf(nodeId);
    int threads = spec.getThreads() > 0 ? spec.getThreads() : defaultThreads;
    StageExecution execution = new StageExecution(context, partitions, threads, readers, runners);
    if (running.putIfAbsent(jobId, execution) != null) {
      return CompletableFuture.failedFuture(new StoreException(ErrorCode.BAD_REQUEST,
          "job " + jobId + " already runs a stage on node " + nodeId));
    }
    peers.warmUp(); // links open while the first tasks run, not after their last pair
    return execution.start()
        .thenApply(report -> {
          if (spec.getDropInput()) {
            store.drop(spec.getInputTable(), true);
          }
          return report;
        })
        .whenComplete((r, e) -> running.remove(jobId, execution));
  }

  /**
   * The connection that ran a job's stages closed: its coordinator is gone (the client died or
   * was cut off), so nobody will finish or clean up the job. Abort what runs of it here and
   * drop its intermediate tables once the stage has stopped.
   */
  public void coordinatorLost(java.util.Collection<String> jobIds) {
    for (String jobId : jobIds) {
      abort(jobId, "its coordinator disconnected");
      StageExecution e = running.get(jobId);
      CompletableFuture<?> stopped = e == null ? CompletableFuture.completedFuture(null) : e.done();
      // A table create the coordinator sent just before it went may still be queued: sweep
      // again once such requests have run.
      stopped.whenComplete((r, x) -> readers.execute(() -> dropIntermediates(jobId)));
      CompletableFuture.delayedExecutor(2, java.util.concurrent.TimeUnit.SECONDS, readers)
          .execute(() -> dropIntermediates(jobId));
    }
  }

  /** True when the job was aborted here (its late requests must not recreate its tables). */
  public boolean aborted(String jobId) {
    return abortedJobs.containsKey(jobId);
  }

  private void dropIntermediates(String jobId) {
    String prefix = INTERMEDIATE_PREFIX + jobId + "-";
    for (StoreTable t : store.tables()) {
      if (t.name().startsWith(prefix)) {
        LOG.info("node {}: dropping {} of job {} whose coordinator disconnected", nodeId, t.name(), jobId);
        store.drop(t.name(), true);
      }
    }
  }

  private void abort(String jobId, String reason) {
    abortedJobs.put(jobId, reason);
    if (abortedJobs.size() > 10_000) {
      abortedJobs.clear();
    }
    StageExecution e = running.get(jobId);
    if (e != null) {
      LOG.info("node {}: aborting job {}: {}", nodeId, jobId, reason);
      e.abort(reason);
    }
  }

  /** Maps a failure of a stage to the code and message the client sees. */
  public static Frame<Response> error(long id, Throwable e) {
    Throwable c = e instanceof java.util.concurrent.CompletionException && e.getCause() != null ? e.getCause() : e;
    ErrorCode code;
    if (c instanceof UserCodeException) {
      code = ErrorCode.USER_CODE_FAILED;
    } else if (c instanceof StageExecution.StageAbortedException) {
      code = ErrorCode.JOB_ABORTED;
    } else if (c instanceof StoreException s) {
      code = s.code();
    } else if (c instanceof NodeUnavailableException) {
      code = ErrorCode.INTERNAL;
    } else {
      code = ErrorCode.INTERNAL;
    }
    String message = c.getMessage() == null ? c.toString() : c.getMessage();
    return Frame.of(Response.newBuilder().setId(id).setCode(code).setMessage(message).build());
  }

  @Override
  public void close() {
    running.values().forEach(e -> e.abort("node shutting down"));
    readers.shutdownNow();
    runners.shutdownNow();
    peers.close();
  }
}
