package org.sss.server.execution;

import io.netty.buffer.ByteBuf;
import io.netty.buffer.ByteBufUtil;
import io.netty.util.concurrent.DefaultThreadFactory;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.Collection;
import java.util.Collections;
import java.util.Comparator;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionException;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.RejectedExecutionException;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.AtomicLong;
import java.util.concurrent.atomic.AtomicReference;
import java.util.function.BiPredicate;
import java.util.function.Supplier;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;
import org.sss.core.api.Serde;
import org.sss.core.cluster.ClusterSpec;
import org.sss.core.cluster.InSyncCopies;
import org.sss.core.cluster.JobTables;
import org.sss.core.io.TextOutputDir;
import org.sss.core.keys.PairTypes;
import org.sss.core.proto.Ack;
import org.sss.core.proto.ClusterView;
import org.sss.core.proto.ErrorCode;
import org.sss.core.proto.Request;
import org.sss.core.proto.Response;
import org.sss.core.proto.RunStage;
import org.sss.core.proto.StageReport;
import org.sss.core.proto.StageSpec;
import org.sss.core.proto.TakeTask;
import org.sss.core.proto.TaskTaken;
import org.sss.core.transport.Frame;
import org.sss.kvs.NodeStore;
import org.sss.kvs.StoreException;
import org.sss.kvs.StoreTable;
import org.sss.server.membership.Membership;

/**
 * The engine's requests on one node: run a stage, receive shuffle batches, abort a job, report
 * progress, and cache job JARs.
 */
public final class EngineService implements AutoCloseable {
  private static final Logger LOG = LoggerFactory.getLogger(EngineService.class);
  /**
   * Engines open in this JVM: more than one when it holds an embedded cluster's nodes, which
   * share its cores (see {@link #defaultTasksAtOnce}).
   */
  private static final AtomicInteger OPEN_IN_JVM = new AtomicInteger();

  private final NodeStore store;
  private final ClusterSpec cluster;
  private final int nodeId;
  private final int defaultThreads;
  private final AtomicBoolean closed = new AtomicBoolean();
  private final int maxValueBytes;
  private final PeerLinks peers;
  private final JarCache jars;
  private final ShuffleReceiver receiver;
  private final ExecutorService readers;
  /** Threads that run tasks, shared by all stages (kept for a minute when idle). */
  private final ExecutorService runners;
  private final Map<String, StageExecution> running = new ConcurrentHashMap<>();
  private final Map<String, String> abortedJobs = new ConcurrentHashMap<>();
  /** The attempt directories of jobs writing files here, until they commit or abort. */
  private final Map<String, Path> fileOutputs = new ConcurrentHashMap<>();
  private final AtomicLong sequence = new AtomicLong();

  /** This node's part in a replicated cluster's membership (yields null with one copy). */
  private volatile Supplier<Membership> membership = () -> null;

  /** The epoch of the last view {@link #viewTaken} acted on. */
  private final AtomicLong viewEpoch = new AtomicLong();

  /**
   * Drops this node's shuffle links to the nodes {@code view} has down or out (see
   * {@link PeerLinks#drop}), so that a stage waiting on such a node (one whose disk hangs keeps
   * its connections open) fails now, as one whose node was killed does, and the job runs again
   * once the members have settled. Already when down: a stage's data between stages belongs to
   * its attempt, so failing it costs only the rerun the node's loss would cost anyway. A view
   * older than one already acted on is ignored.
   */
  public void viewTaken(ClusterView view) {
    long epoch = view.getEpoch();
    for (long seen = viewEpoch.get(); epoch > seen; seen = viewEpoch.get()) {
      if (viewEpoch.compareAndSet(seen, epoch)) {
        for (int node : InSyncCopies.downOrOut(view)) {
          if (node != nodeId) {
            peers.drop(node, InSyncCopies.decision(view, node));
          }
        }
        return;
      }
    }
  }

  /** Admits a stage's reads of replicated inputs through {@code membership}. */
  public void admitReadsThrough(Supplier<Membership> membership) {
    this.membership = membership;
  }

  public EngineService(NodeStore store, ClusterSpec cluster, int nodeId, int defaultThreads, int maxValueBytes) {
    this.store = store;
    this.cluster = cluster;
    this.nodeId = nodeId;
    this.defaultThreads = defaultThreads;
    this.maxValueBytes = maxValueBytes;
    this.peers = new PeerLinks(cluster, nodeId);
    this.jars = new JarCache(store.dir().resolve("jars"));
    this.receiver = new ShuffleReceiver(store, maxValueBytes, cluster.placement(), nodeId);
    this.readers = Executors.newCachedThreadPool(new DefaultThreadFactory("sss-node" + nodeId + "-reader", true));
    this.runners = Executors.newCachedThreadPool(new DefaultThreadFactory("sss-node" + nodeId + "-task", true));
    dropLeftoverIntermediates();
    OPEN_IN_JVM.incrementAndGet(); // last: a constructor that threw leaves no engine to close
  }

  /** How long an abort waits for the job's running stage to stop before it is acknowledged. */
  static final long ABORT_WAIT_SECONDS = 10;

  /**
   * A node that starts cannot be part of a running job (its coordinator failed the job when the
   * node went away), so the job tables found at start are leftovers of failed jobs: only the
   * engine can create names in that namespace, and a committed table no longer has one.
   */
  private void dropLeftoverIntermediates() {
    for (StoreTable t : store.tables()) {
      if (JobTables.isJobTable(t.name())) {
        LOG.info("node {}: dropping {} left by a job that did not finish", nodeId, t.name());
        store.drop(t.name(), true);
      }
    }
  }

  /**
   * The last stage each recent job ended on this node, so that a node asking for a waiting task
   * of an ended stage is told at once that there is none, rather than asking again as it would
   * a node whose stage has not begun. Bounded: a job older than the last 1,024 is long done.
   */
  private final Map<String, Integer> endedStages = Collections.synchronizedMap(new LinkedHashMap<>() {
    @Override
    protected boolean removeEldestEntry(Map.Entry<String, Integer> eldest) {
      return size() > 1024;
    }
  });

  /** True for the requests this service answers. */
  public static boolean handles(Request req) {
    return switch (req.getOpCase()) {
      case RUN_STAGE, SHUFFLE_BATCH, ABORT_JOB, STAGE_PROGRESS, TAKE_TASK, PUT_JAR, HAS_JAR, COMMIT_JOB -> true;
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
        var batch = req.getShuffleBatch();
        checkFenced(batch.getJobId(), batch.getTable());
        long n = receiver.write(batch, body);
        return CompletableFuture.completedFuture(Frame.of(ok.setAck(Ack.newBuilder().setPairs(n)).build()));
      }
      case ABORT_JOB -> {
        // answered once the job's stage here has stopped (or after a bounded wait): a
        // coordinator that reports the job failed knows its tasks no longer run
        return abort(req.getAbortJob().getJobId(), req.getAbortJob().getReason())
            .handle((r, e) -> (Void) null) // a copy: the stage's own future must not be completed here
            .completeOnTimeout(null, ABORT_WAIT_SECONDS, TimeUnit.SECONDS)
            .thenApply(v -> Frame.of(ok.setAck(Ack.getDefaultInstance()).build()));
      }
      case COMMIT_JOB -> {
        String jobId = req.getCommitJob().getJobId();
        fileOutputs.remove(jobId); // the client moves the part files from here on
        if (abortedJobs.containsKey(jobId)) {
          throw new StoreException(ErrorCode.JOB_ABORTED, "job " + jobId + " was aborted: " + abortedJobs.get(jobId));
        }
        Membership m = membership.get();
        int renamed;
        if (m == null) {
          renamed = store.commit(jobId);
        } else {
          try (var admitted = m.admitWrite(req.getCommitJob().getViewEpoch(), false, "job " + jobId)) {
            renamed = store.commit(jobId); // not while the copies that count change (a node joining)
          }
        }
        return CompletableFuture.completedFuture(Frame.of(ok.setAck(Ack.newBuilder().setPairs(renamed)).build()));
      }
      case STAGE_PROGRESS -> {
        StageExecution e = running.get(req.getStageProgress().getJobId());
        StageReport r = e == null ? StageReport.newBuilder().setDone(true).build() : e.report(false);
        return CompletableFuture.completedFuture(Frame.of(ok.setStageReport(r).build()));
      }
      case TAKE_TASK -> {
        TakeTask take = req.getTakeTask();
        StageExecution e = running.get(take.getJobId());
        boolean runs = e != null && e.stageIndex() == take.getStage();
        Integer p = runs ? e.handOver(take.getTaker(), take.getPartitionsList()) : null;
        Integer ended = endedStages.get(take.getJobId());
        TaskTaken.Builder answer = TaskTaken.newBuilder().setGranted(p != null).setRunning(runs)
            .setEnded(!runs && ended != null && ended >= take.getStage());
        if (p != null) {
          answer.setPartition(p);
          LOG.debug("node {}: job {} stage {}: partition {}'s task handed over to node {}", nodeId, take.getJobId(),
              take.getStage(), p, take.getTaker());
        }
        return CompletableFuture.completedFuture(Frame.of(ok.setTaskTaken(answer).build()));
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

  /**
   * Fencing: a job writes only into tables of its own namespace, and not at all once aborted
   * here. A straggling task of a failed job therefore cannot reach a table that outlives it.
   */
  private void checkFenced(String jobId, String table) {
    if (!JobTables.belongsTo(table, jobId)) {
      throw new StoreException(ErrorCode.BAD_REQUEST, "job " + jobId + " cannot write table '" + table
          + "': a job writes only the tables it created (" + JobTables.PREFIX + jobId + "-...)");
    }
    if (abortedJobs.containsKey(jobId)) {
      throw new StoreException(ErrorCode.JOB_ABORTED, "job " + jobId + " was aborted: " + abortedJobs.get(jobId));
    }
  }

  private CompletableFuture<StageReport> runStage(RunStage run) {
    String jobId = run.getJobId();
    StageSpec spec = run.getStage();
    try {
      if (!spec.getOutputDir().isEmpty()) {
        checkOutputDir(jobId, spec);
      }
      if (!spec.getOutputTable().isEmpty() || spec.getOutputDir().isEmpty()) {
        checkFenced(jobId, spec.getOutputTable());
      }
      if (spec.getDropInput() && !JobTables.belongsTo(spec.getInputTable(), jobId)) {
        throw new StoreException(ErrorCode.BAD_REQUEST, "job " + jobId + " cannot drop table '" + spec.getInputTable()
            + "': a job drops only the tables it created");
      }
    } catch (StoreException e) {
      return CompletableFuture.failedFuture(e);
    }
    if (readsFiles(spec)) {
      if (spec.getKind() != StageSpec.Kind.MAP) {
        return CompletableFuture.failedFuture(new StoreException(ErrorCode.BAD_REQUEST, "stage " + spec.getIndex()
            + " of job " + jobId + " reduces " + (spec.getInputSplitsCount() > 0 ? "files" : "no table")
            + ": only a map stage reads files"));
      }
      return runStage(run, null, () -> { }); // files: no copies to hold
    }
    Membership m = membership.get();
    StoreTable input;
    try {
      input = store.require(spec.getInputTable());
    } catch (StoreException e) {
      StoreException refused = m == null ? e : m.unlessServing(e);
      if (refused == e) {
        throw e;
      }
      return CompletableFuture.failedFuture(new StoreException(refused.code(), "stage " + spec.getIndex() + " of job "
          + jobId + " cannot read its input here: " + refused.getMessage()));
    }
    // a node out or catching up would map what it has, not the table; and one decided out while
    // the stage reads must not empty its copies under it: the stage holds them until it ends
    Runnable releaseCopies = () -> { };
    if (m != null && input.options().getReplication() > 1) {
      try {
        releaseCopies = m.admitRead();
      } catch (StoreException e) {
        return CompletableFuture.failedFuture(new StoreException(e.code(), "stage " + spec.getIndex() + " of job "
            + jobId + " cannot read its input '" + spec.getInputTable() + "' here: " + e.getMessage()));
      }
    }
    Runnable release = releaseCopies;
    try {
      return runStage(run, input, release);
    } catch (RuntimeException | Error e) { // a user class that cannot link throws an Error
      release.run();
      throw e;
    }
  }

  private CompletableFuture<StageReport> runStage(RunStage run, StoreTable input, Runnable releaseCopies) {
    String jobId = run.getJobId();
    StageSpec spec = run.getStage();
    boolean writesFiles = spec.getOutputTable().isEmpty();
    StoreTable output = writesFiles ? null : store.require(spec.getOutputTable());
    ClassLoader loader = jars.acquire(spec.getJarHash());
    PairTypes emits;
    try {
      // the stage's own writes here and its shuffle batches elsewhere are checked by the same rule
      emits = PairTypes.of(UserClasses.create(loader, spec.getOutputKeySerde(), Serde.class),
          UserClasses.create(loader, spec.getOutputValueSerde(), Serde.class));
      if (!writesFiles && !emits.writableTo(output.options())) {
        // the client created the table by its own instances of these serdes: they disagree
        throw new StoreException(ErrorCode.TYPE_MISMATCH, "stage " + spec.getIndex() + " of job " + jobId
            + " encodes its output with " + spec.getOutputKeySerde() + " and " + spec.getOutputValueSerde()
            + ", which on node " + nodeId + " say " + emits + ", but its output table '" + spec.getOutputTable()
            + "' holds key=" + PairTypes.name(output.options().getKeyType()) + " value="
            + PairTypes.name(output.options().getValueType()) + " (what the client's serdes said): the client and"
            + " the node load different versions of these classes; nothing was written");
      }
    } catch (RuntimeException e) {
      jars.release(spec.getJarHash());
      releaseCopies.run();
      return CompletableFuture.failedFuture(e);
    }
    AtomicReference<Throwable> failure = new AtomicReference<>();
    AtomicBoolean aborted = new AtomicBoolean();
    StageShuffle shuffle = new StageShuffle(jobId, spec.getOutputTable(), emits, spec.getOutputMultiValued(), nodeId,
        cluster.partitionMap(), cluster.placement(), output, peers, failure, sequence, maxValueBytes, aborted,
        run.getView());
    StageContext context = new StageContext(jobId, spec, nodeId, loader, input, shuffle, failure, aborted);
    List<Integer> partitions = tasksOf(run);
    int threads = spec.getThreads() > 0 ? spec.getThreads() : defaultTasksAtOnce();
    StageExecution execution = new StageExecution(context, partitions, threads, readers, runners,
        takeable(run, input), handsOver(run, input));
    if (context.writesFiles()) {
      // before the abort check below: an abort from here on deletes the files, one before is seen there
      fileOutputs.put(jobId, TextOutputDir.attemptDir(Path.of(spec.getOutputDir()), jobId));
    }
    if (running.putIfAbsent(jobId, execution) != null) {
      jars.release(spec.getJarHash());
      releaseCopies.run();
      return CompletableFuture.failedFuture(new StoreException(ErrorCode.BAD_REQUEST,
          "job " + jobId + " already runs a stage on node " + nodeId));
    }
    String abortedMeanwhile = abortedJobs.get(jobId);
    if (abortedMeanwhile != null) {
      // an abort that came after the check above found nothing running: it must not be lost
      running.remove(jobId, execution);
      deleteFileOutput(jobId);
      jars.release(spec.getJarHash());
      releaseCopies.run();
      return CompletableFuture.failedFuture(new StoreException(ErrorCode.JOB_ABORTED,
          "job " + jobId + " was aborted: " + abortedMeanwhile));
    }
    peers.warmUp(); // links open while the first tasks run, not after their last pair
    return execution.start()
        .thenApply(report -> {
          if (spec.getDropInput()) {
            store.drop(spec.getInputTable(), true);
          }
          return report;
        })
        .whenComplete((r, e) -> {
          endedStages.merge(jobId, spec.getIndex(), Math::max); // before it stops counting as running
          running.remove(jobId, execution);
          jars.release(spec.getJarHash());
          releaseCopies.run();
        });
  }

  /**
   * Every stage of a job that writes files (the first one too, so that a node that cannot
   * write there fails the job before its work, not after): not a job aborted here, and the
   * directory the client made for the attempt must be seen and writable here, or the node
   * cannot write where the client will look.
   */
  private void checkOutputDir(String jobId, StageSpec spec) {
    if (abortedJobs.containsKey(jobId)) {
      throw new StoreException(ErrorCode.JOB_ABORTED, "job " + jobId + " was aborted: " + abortedJobs.get(jobId));
    }
    Path dir = Path.of(spec.getOutputDir());
    Path attempt = TextOutputDir.attemptDir(dir, jobId);
    if (!dir.isAbsolute() || !Files.isDirectory(attempt)) {
      throw new StoreException(ErrorCode.NO_SUCH_FILE, "node " + nodeId + " cannot see the output directory "
          + dir + " (no " + attempt + ", which the client made): a job writing files needs a directory that the"
          + " client and every node see at the same path");
    }
    if (!Files.isWritable(attempt)) {
      throw new StoreException(ErrorCode.NO_SUCH_FILE, "node " + nodeId + " cannot write into the output directory "
          + dir + " (" + attempt + " is not writable for the server's user)");
    }
  }

  /**
   * Deletes an aborted job's part files here (all of them: the job is aborted everywhere), so
   * that a client that died does not leave them below the output directory; the client's own
   * clean-up does the same when it can.
   */
  private void deleteFileOutput(String jobId) {
    Path attempt = fileOutputs.remove(jobId);
    if (attempt == null) {
      return;
    }
    try (var files = Files.walk(attempt)) {
      for (Path p : files.sorted(Comparator.reverseOrder()).toList()) {
        Files.deleteIfExists(p);
      }
    } catch (IOException | UncheckedIOException e) {
      LOG.info("node {}: could not delete the part files of aborted job {} in {}: {}", nodeId, jobId, attempt, e.toString());
    }
  }

  /** A stage over files names splits (none for empty files) and no table. */
  private static boolean readsFiles(StageSpec spec) {
    return spec.getInputSplitsCount() > 0 || spec.getInputTable().isEmpty();
  }

  /**
   * The tasks this node may take from others once its own are done: map tasks over a stored
   * table of two or more copies, hash-partitioned (a partitioner is told the node that emits, so
   * its output may depend on where a task runs).
   */
  private TaskTaking takeable(RunStage run, StoreTable input) {
    StageSpec spec = run.getStage();
    if (!movable(spec, input)) {
      return TaskTaking.NONE;
    }
    return TaskTaking.of(peers, run.getJobId(), spec.getIndex(), nodeId, cluster.placement(), run.getView(),
        input.options().getReplication());
  }

  /** Whom this node may hand its waiting tasks to: a node that could have asked by the same rules. */
  private BiPredicate<Integer, Integer> handsOver(RunStage run, StoreTable input) {
    if (!movable(run.getStage(), input)) {
      return (taker, partition) -> false;
    }
    int copies = input.options().getReplication();
    return (taker, partition) -> TaskTaking.mayTake(cluster.placement(), run.getView(), copies, taker, partition,
        nodeId);
  }

  private static boolean movable(StageSpec spec, StoreTable input) {
    return input != null && spec.getKind() == StageSpec.Kind.MAP && spec.getPartitionerClass().isEmpty();
  }

  /**
   * The tasks this node runs: the input splits the job gives it, or the partitions of the input
   * table it maps: its own, and those of leaders out (the job's view).
   */
  private List<Integer> tasksOf(RunStage run) {
    StageSpec spec = run.getStage();
    if (readsFiles(spec)) {
      List<Integer> splits = new ArrayList<>();
      for (int i = 0; i < spec.getInputSplitsCount(); i++) {
        if (spec.getInputSplits(i).getNode() == nodeId) {
          splits.add(i);
        }
      }
      return splits;
    }
    return run.getView().getOutCount() == 0 ? cluster.partitionMap().partitionsOf(nodeId)
        : new InSyncCopies(cluster.placement()).ownedBy(run.getView(), nodeId);
  }

  /**
   * The connection that coordinated these jobs closed: their coordinator is gone (the client
   * died or was cut off, or simply closed after the jobs ended), so nobody will finish or clean
   * up what is not committed. Abort them here: that stops what runs and drops their tables
   * (a committed output no longer carries the job's name, so it stays).
   */
  public void coordinatorLost(Collection<String> jobIds) {
    for (String jobId : jobIds) {
      try {
        readers.execute(() -> abort(jobId, "its coordinator disconnected"));
      } catch (RejectedExecutionException shuttingDown) {
        return; // the node is stopping: its next start drops what jobs left
      }
    }
  }

  /** True when the job was aborted here (its late requests must not recreate its tables). */
  public boolean aborted(String jobId) {
    return abortedJobs.containsKey(jobId);
  }

  /** Aborts the job here; completes when its running stage (if any) has stopped. */
  private CompletableFuture<?> abort(String jobId, String reason) {
    if (abortedJobs.size() >= MAX_ABORTED_JOBS) {
      abortedJobs.clear(); // job tables of those jobs are gone: their names stay fenced anyway
    }
    abortedJobs.put(jobId, reason);
    StageExecution e = running.get(jobId);
    if (e != null) {
      LOG.info("node {}: aborting job {}: {}", nodeId, jobId, reason);
      e.abort(reason);
    }
    // Dropping at once is safe with tasks still running: writes to a dropped table are refused,
    // and open cursors keep reading their snapshot until the tasks see the abort.
    int dropped = store.abandon(jobId);
    if (dropped > 0) {
      LOG.info("node {}: dropped {} table(s) of job {} ({})", nodeId, dropped, jobId, reason);
    }
    if (e == null) {
      deleteFileOutput(jobId);
      return CompletableFuture.completedFuture(null);
    }
    // once its tasks stopped: a task still writing would recreate nothing (CREATE_NEW in a
    // deleted directory fails), but files it has open would be deleted under it
    e.done().whenComplete((r, x) -> deleteFileOutput(jobId));
    return e.done();
  }

  /** Aborted jobs remembered, so that their late requests are refused. */
  private static final int MAX_ABORTED_JOBS = 10_000;

  /** Maps a failure of a stage to the code and message the client sees. */
  public static Frame<Response> error(long id, Throwable e) {
    Throwable c = e instanceof CompletionException && e.getCause() != null ? e.getCause() : e;
    ErrorCode code;
    if (c instanceof UserCodeException) {
      code = ErrorCode.USER_CODE_FAILED;
    } else if (c instanceof StageExecution.StageAbortedException) {
      code = ErrorCode.JOB_ABORTED;
    } else if (c instanceof StoreException s) {
      code = s.code();
    } else if (c instanceof TextPartOutput.WriteFailed w) {
      code = w.code;
    } else if (c instanceof io.netty.handler.codec.CorruptedFrameException) {
      // a body that ends inside a length, as a put batch's would: the sender's fault
      return Frame.of(Response.newBuilder().setId(id).setCode(ErrorCode.BAD_REQUEST)
          .setMessage("malformed body: " + c.getMessage()).build());
    } else {
      code = ErrorCode.INTERNAL;
    }
    String message = c.getMessage() == null ? c.toString() : c.getMessage();
    return Frame.of(Response.newBuilder().setId(id).setCode(code).setMessage(message).build());
  }

  /**
   * A stage's tasks at once on this node when its job does not say: the node's worker threads,
   * shared among the nodes open in this JVM. The nodes of an embedded cluster share one
   * machine's cores; each running as many tasks as there are cores kept three CPU-bound task
   * threads per core with three nodes on two cores, which cost more CPU than one per node for
   * the same work (WordCount of a GiB, file to file: 5.32-6.18 s with two tasks per node,
   * 4.93-6.17 s with one, eight alternated runs each). A node alone in its JVM (a server) keeps
   * all its worker threads. Every open node counts, busy or not, including those of another
   * cluster in the same JVM.
   */
  int defaultTasksAtOnce() {
    return share(defaultThreads, OPEN_IN_JVM.get());
  }

  /** {@code threads} divided among {@code nodes}, rounded up; at least one. */
  static int share(int threads, int nodes) {
    int n = Math.max(1, nodes);
    return Math.max(1, (threads + n - 1) / n);
  }

  /** Engines open in this JVM (see {@link #OPEN_IN_JVM}). */
  static int openInThisJvm() {
    return OPEN_IN_JVM.get();
  }

  @Override
  public void close() {
    if (closed.compareAndSet(false, true)) {
      OPEN_IN_JVM.decrementAndGet();
    }
    running.values().forEach(e -> e.abort("node shutting down"));
    readers.shutdownNow();
    runners.shutdownNow();
    peers.close();
  }
}
