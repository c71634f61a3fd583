package org.sss.client.job;

import io.netty.buffer.Unpooled;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.security.MessageDigest;
import java.security.NoSuchAlgorithmException;
import java.time.Duration;
import java.util.ArrayList;
import java.util.HexFormat;
import java.util.List;
import java.util.Set;
import java.util.Map;
import java.util.TreeMap;
import java.util.TreeSet;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;
import org.sss.client.SssClient;
import org.sss.client.TableSpec;
import org.sss.client.internal.ClientInternals;
import org.sss.client.internal.InProcessClusters;
import org.sss.client.internal.NodeChannels;
import org.sss.client.internal.WireTypes;
import org.sss.client.io.BulkIO;
import org.sss.client.io.TextSplits;
import org.sss.core.cluster.ClusterSpec;
import org.sss.core.cluster.InSyncCopies;
import org.sss.core.cluster.JobTables;
import org.sss.core.cluster.ReplicaPlacement;
import org.sss.core.keys.PairTypes;
import org.sss.core.proto.AbortJob;
import org.sss.core.proto.ClusterView;
import org.sss.core.proto.CommitJob;
import org.sss.core.proto.CreateTable;
import org.sss.core.proto.DataType;
import org.sss.core.proto.ErrorCode;
import org.sss.core.proto.FileSplit;
import org.sss.core.proto.GetView;
import org.sss.core.proto.HasJar;
import org.sss.core.proto.PutJar;
import org.sss.core.proto.Request;
import org.sss.core.proto.Response;
import org.sss.core.proto.RunStage;
import org.sss.core.proto.StageProgress;
import org.sss.core.proto.StageReport;
import org.sss.core.proto.StageSpec;
import org.sss.core.proto.TableOptions;
import org.sss.core.transport.Frame;
import org.sss.core.transport.NodeUnavailableException;
import org.sss.core.transport.SssException;

/**
 * Drives one job from the client: creates the job's tables, starts each stage on every node,
 * waits at the barrier, commits the output, and cleans up.
 *
 * <h2>Output commit</h2>
 * Every stage, the last one too, writes a table of the job's own namespace ({@link JobTables}).
 * Creating the last one reserves the output's name on every node (and fails there at once when
 * the name exists without {@code overwrite()}); when every stage has succeeded, one
 * {@code CommitJob} round renames it to the output's name, dropping the old output in the same
 * catalog write where the job overwrites. So the output appears whole or not at all, a failed
 * job leaves the old output as it was, and a straggling task of a failed job, which can only
 * name its own job's tables, never writes into a later job's output. A node lost during the
 * commit round itself leaves the output committed on the nodes that answered: the job then fails
 * naming the node.
 *
 * <h2>Failure</h2>
 * A stage ends when every node answered its RunStage. If one node fails (user code threw, a
 * peer was lost) or cannot be reached (its connection broke, or it missed a progress poll for
 * {@link #LIVENESS_TIMEOUT}), the coordinator aborts the job on every node, waits a bounded
 * time for them to stop, drops the job's tables, and fails with the first cause, naming the
 * node. The servers stay ready for the next job.
 */
final class JobCoordinator implements Runnable {
  static final Duration LIVENESS_TIMEOUT = Duration.ofSeconds(10);
  static final long POLL_MILLIS = 500;
  /** Set by {@code bin/sss run --jar}: the JAR shipped with every job that names none. */
  public static final String JOB_JAR_PROPERTY = "sss.job.jar";

  private final SssClient client;
  private final NodeChannels channels;
  private final Job job;
  /** The output directory's commit, for a job that writes files; null for a table. */
  private final TextOutputCommit files;
  /** The attempt's id: the job's, with "r1", "r2"... for the attempts after a node was lost. */
  private volatile String jobId;
  /**
   * The membership view the attempt runs on, and its nodes (those not out): every node of the
   * job routes by it, and a node at another epoch refuses to commit the output.
   */
  private ClusterView view = ClusterView.getDefaultInstance();
  private List<Integer> nodes = List.of();
  /** Set when the output starts to commit: a failure from then on is not run again. */
  private volatile boolean committing;
  /** Set once the attempt's tables are made: a failure before (a refusal) is not a lost node. */
  private volatile boolean began;
  /** Set when the nodes did not run every task of a stage once: a fault no rerun would mend. */
  private volatile boolean miscounted;
  private final CompletableFuture<JobResult> result = new CompletableFuture<>();
  private volatile ProgressListener listener = ProgressListener.none();
  private volatile String cancelReason;

  JobCoordinator(SssClient client, Job job, String jobId) {
    this.client = client;
    this.channels = ClientInternals.channels(client);
    this.job = job;
    this.jobId = jobId;
    this.files = job.outputDir == null ? null : new TextOutputCommit(job.name, job.outputDir, job.overwrite);
  }

  CompletableFuture<JobResult> result() {
    return result;
  }

  void listen(ProgressListener l) {
    this.listener = l;
  }

  void cancel(String reason) {
    cancelReason = reason;
  }

  /** Attempts after the first, when nodes are lost: each waits for the members' decision first. */
  static final int MAX_RERUNS = 2;
  /** How long a rerun waits for the members to decide a lost node out (about 9 s after it died). */
  private static final long REDECIDE_MILLIS = 45_000;

  @Override
  public void run() {
    long start = System.nanoTime();
    String firstId = jobId;
    for (int reruns = 0; ; reruns++) {
      try {
        result.complete(execute(start, reruns));
        return;
      } catch (Throwable e) {
        cleanUp(e.getMessage() == null ? e.toString() : e.getMessage().lines().findFirst().orElse(""));
        if (reruns < MAX_RERUNS && lostANode(e) && awaitNewView()) {
          LOG.warn("job {} ({}): {}; running it again on the nodes in sync (membership epoch {})", job.name, jobId,
              e.getMessage() == null ? e.toString() : e.getMessage().lines().findFirst().orElse(""), view.getEpoch());
          jobId = firstId + "r" + (reruns + 1);
          continue;
        }
        String lost = lostANodeForGood(e) ? lostPartitions() : null;
        if (lost != null) {
          result.completeExceptionally(new JobFailedException(ErrorCode.NOT_SERVING, "job " + job.name + " (" + jobId
              + ") failed: " + lost + " (" + (e.getMessage() == null ? e : e.getMessage().lines().findFirst().orElse(""))
              + ")", e));
          return;
        }
        result.completeExceptionally(e instanceof JobFailedException ? e
            : new JobFailedException(e instanceof SssException s ? s.code() : ErrorCode.INTERNAL,
                "job " + job.name + " (" + jobId + ") failed: " + e.getMessage(), e));
        return;
      }
    }
  }

  /**
   * Whether a failure came from a node lost or a change of the copies (a replicated cluster,
   * before the output started to commit, not cancelled): the job then runs again from its
   * stored input, whose copies the survivors hold.
   */
  private boolean lostANode(Throwable e) {
    if (channels.spec().replication() < 2 || committing || !began || cancelReason != null || miscounted) {
      return false;
    }
    return nodeFault(e);
  }

  /** How long the nodes have to answer the question whether they are there, once a job failed. */
  private static final Duration ANSWER_WITHIN = Duration.ofSeconds(5);

  /**
   * Whether a job that will not run again failed because a node could not be reached (not
   * cancelled, not while committing, not the job's own fault): then which partitions have no
   * copy left is worth asking.
   */
  private boolean lostANodeForGood(Throwable e) {
    if (cancelReason != null || committing || miscounted || !nodeFault(e)) {
      return false;
    }
    for (Throwable c = e; c != null; c = c.getCause()) {
      if (c instanceof NodeUnavailableException) {
        return true;
      }
    }
    return false;
  }

  /**
   * Why the job could not run, when some partition has no copy on a node that answers now: the
   * partitions, and the nodes that do not answer; null when every partition has one (or when
   * the client is closed). A job fails for good only when some partition has no copy left (else
   * it runs again on the survivors), and a user then needs to know which data is missing, not
   * only which node. Every node is asked at once, within {@link #ANSWER_WITHIN} in all.
   */
  private String lostPartitions() {
    ClusterSpec spec = channels.spec();
    List<CompletableFuture<Frame<Response>>> answers = new ArrayList<>();
    try {
      for (int node = 0; node < spec.nodeCount(); node++) {
        answers.add(channels.connection(node).thenCompose(c -> c.call(
            Request.newBuilder().setGetView(GetView.getDefaultInstance()), null, ANSWER_WITHIN)));
      }
    } catch (IllegalStateException closed) {
      return null; // the client was closed
    }
    long deadline = System.nanoTime() + ANSWER_WITHIN.toNanos();
    Set<Integer> silent = new TreeSet<>();
    for (int node = 0; node < answers.size(); node++) {
      CompletableFuture<Frame<Response>> a = answers.get(node);
      try {
        Frame<Response> r = a.get(Math.max(0, deadline - System.nanoTime()), TimeUnit.NANOSECONDS);
        boolean answered = r.header().getCode() == ErrorCode.OK;
        r.release();
        if (!answered) {
          silent.add(node);
        }
      } catch (InterruptedException ie) {
        Thread.currentThread().interrupt();
        return null;
      } catch (ExecutionException | TimeoutException | RuntimeException failed) {
        if (channels.isClosed()) {
          return null; // not the nodes: this client
        }
        a.thenAccept(Frame::release); // an answer coming later is let go
        silent.add(node);
      }
    }
    if (silent.isEmpty()) {
      return null;
    }
    int copies = Math.max(1, spec.replication());
    ReplicaPlacement placement = spec.placement();
    List<Integer> lost = new ArrayList<>();
    for (int p = 0; p < spec.partitionMap().partitions(); p++) {
      if (silent.containsAll(placement.replicasOf(p).subList(0, copies))) {
        lost.add(p);
      }
    }
    return lost.isEmpty() ? null : "no copy reachable of partitions " + lost + " (nodes " + silent + " do not answer)";
  }

  /** Whether a failure may have come from a node, not from the job itself (which would fail again). */
  private static boolean nodeFault(Throwable e) {
    for (Throwable c = e; c != null; c = c.getCause()) {
      if (c instanceof SssException s && (s.code() == ErrorCode.USER_CODE_FAILED || s.code() == ErrorCode.BAD_REQUEST
          || s.code() == ErrorCode.TYPE_MISMATCH || s.code() == ErrorCode.NO_SUCH_JAR
          || s.code() == ErrorCode.VALUE_TOO_LARGE || s.code() == ErrorCode.NO_SUCH_FILE)) {
        return false; // the job's own fault: it would fail again
      }
    }
    return true; // a candidate: the view says whether a node was lost (awaitNewView)
  }

  /**
   * Whether the failure came with a change of the copies, and the members have settled it: the
   * view moves on from the attempt's (or shows a node down) within 15 s, more than a node needs
   * to be decided down even when it led the members (about 10 s, measured); then it waits (45 s
   * at most) until no node is down or catching up. False when nothing changes: the failure was not a node lost.
   */
  private boolean awaitNewView() {
    long start = System.nanoTime();
    boolean changed = false;
    while (System.nanoTime() - start < REDECIDE_MILLIS * 1_000_000 && cancelReason == null) {
      try {
        ClusterView v = ClientInternals.view(client).getView();
        changed |= v.getEpoch() > view.getEpoch() || v.getDownCount() > 0;
        if (!changed && System.nanoTime() - start > CHANGE_WITHIN_MILLIS * 1_000_000) {
          return false;
        }
        if (changed && v.getEpoch() > view.getEpoch() && v.getDownCount() == 0 && v.getJoiningCount() == 0) {
          return true;
        }
        Thread.sleep(250);
      } catch (InterruptedException ie) {
        Thread.currentThread().interrupt();
        return false;
      } catch (RuntimeException ignored) {
        // no node answers now: try again until the deadline
      }
    }
    return false;
  }

  /**
   * The nodes the members have decided down or out, whose answer to an abort is not awaited
   * (the abort is still sent): a node whose disk hangs keeps its connection open and answers
   * nothing, and waiting for it would hold the rerun for the whole abort timeout. It drops the
   * job's tables when it runs the abort, or when it starts again. Empty with one copy, or when no
   * view can be read.
   */
  private Set<Integer> nodesDecidedGone() {
    if (channels.spec().replication() < 2) {
      return Set.of();
    }
    try {
      return InSyncCopies.downOrOut(ClientInternals.view(client).getView());
    } catch (RuntimeException e) {
      return Set.of();
    }
  }

  /** How long a failure may come before the view shows the node it lost. */
  private static final long CHANGE_WITHIN_MILLIS = 15_000;

  /**
   * The view the attempt runs on: with nodes down or catching up it waits (30 s at most) for
   * them to be decided up or out, since a job maps every partition once, on a copy in sync.
   */
  private void takeView() throws InterruptedException {
    List<Integer> all = new ArrayList<>();
    for (int node = 0; node < channels.spec().nodeCount(); node++) {
      all.add(node);
    }
    if (channels.spec().replication() < 2) {
      nodes = all;
      return;
    }
    long end = System.nanoTime() + 30_000_000_000L;
    ClusterView v = ClientInternals.view(client).getView();
    while ((v.getDownCount() > 0 || v.getJoiningCount() > 0) && System.nanoTime() < end) {
      Thread.sleep(250);
      v = ClientInternals.view(client).getView();
    }
    if (v.getDownCount() > 0 || v.getJoiningCount() > 0) {
      throw new JobFailedException(ErrorCode.NOT_SERVING, "job " + job.name + " cannot start: node(s) "
          + (v.getDownCount() > 0 ? v.getDownList() + " down " : "")
          + (v.getJoiningCount() > 0 ? v.getJoiningList() + " catching up " : "")
          + "for 30 s (membership epoch " + v.getEpoch() + "); it starts once they are up or decided out", null);
    }
    view = v;
    List<Integer> in = new ArrayList<>(all);
    in.removeAll(v.getOutList());
    nodes = in;
  }

  /**
   * Runs the job. An empty job is a handful of round trips to every node: preparation (input
   * stats, JAR check and output check at once), creating the job's tables, and one per stage;
   * each stage's nodes drop its intermediate input themselves when they are done with it.
   */
  private JobResult execute(long start, int reruns) throws Exception {
    if (job.inputTable.equals(job.outputTable)) {
      throw new JobFailedException(ErrorCode.BAD_REQUEST, "job " + job.name + " reads and writes table '"
          + job.inputTable + "': write the output to another table", null);
    }
    takeView();
    CompletableFuture<String> shippedJar = shipJar();
    List<FileSplit> splits = job.inputFiles == null ? List.of() : splits();
    TableSpec inputSpec = job.inputFiles != null ? BulkIO.textTable() : client.tableStats(job.inputTable).spec();
    if (job.inputFiles == null) {
      checkInputTypes(inputSpec.types());
    }
    if (view.getOutCount() > 0 && job.keepIntermediate) {
      throw new JobFailedException(ErrorCode.BAD_REQUEST, "job " + job.name + " keeps its tables between stages, "
          + "which keep one copy on the partitions' leaders, and node(s) " + view.getOutList() + " are out: run it "
          + "once they are back, or without keepIntermediate()", null);
    }
    if (view.getOutCount() > 0 && job.inputFiles == null && inputSpec.replication() < 2) {
      throw new JobFailedException(ErrorCode.NOT_SERVING, "job " + job.name + ": its input '" + job.inputTable
          + "' keeps one copy, and node(s) " + view.getOutList() + " holding some of it are out", null);
    }
    String jarHash = awaitJar(shippedJar);
    trace("prepared", start);
    int n = job.stages.size();
    List<StageSummary> summaries = new ArrayList<>();
    Map<String, Long> counters = new TreeMap<>();
    if (reruns > 0) {
      counters.put(JobResult.RERUNS_COUNTER, (long) reruns); // each a run of the whole job, after a node was lost
    }
    List<String> intermediates = new ArrayList<>();
    String input = job.inputTable;
    boolean inputMultiValued = inputSpec.multiValued();
    if (files != null) {
      files.prepare(jobId);
    }
    createAllTables();
    began = true;
    trace("created tables", start);
    for (int i = 0; i < n; i++) {
      Job.StagePlan plan = job.stages.get(i);
      boolean last = i == n - 1;
      String output = outputOf(i);
      // a table between stages keeps every value, whatever stage reads it next
      boolean outputMultiValued = !last || job.multiValuedOutput;
      if (!last) {
        intermediates.add(keptName(i));
      }
      StageSpec spec = StageSpec.newBuilder()
          .setIndex(i)
          .setDropInput(i > 0 && !job.keepIntermediate)
          .setKind(plan.map() ? StageSpec.Kind.MAP : StageSpec.Kind.REDUCE)
          .setInputTable(input)
          .setInputMultiValued(inputMultiValued)
          .setOutputTable(last && files != null ? "" : output)
          .setOutputDir(files != null ? job.outputDir.toString() : "") // every stage checks it
          .setOutputMultiValued(outputMultiValued)
          .setFunctionClass(plan.functionClass())
          .setCombinerClass(plan.combinerClass())
          .setPartitionerClass(plan.partitionerClass())
          .setInputKeySerde(plan.inKey().getClass().getName())
          .setInputValueSerde(plan.inValue().getClass().getName())
          .setOutputKeySerde(plan.outKey().getClass().getName())
          .setOutputValueSerde(plan.outValue().getClass().getName())
          .putAllConfig(job.config)
          .setJarHash(jarHash)
          .setThreads(job.threads)
          .addAllInputSplits(i == 0 ? splits : List.of())
          .build();
      if (!plan.map() && !inputMultiValued) {
        throw new JobFailedException(ErrorCode.BAD_REQUEST, "stage " + i + " reduces table '" + input
            + "', which is not multi-valued (write it with multiValuedOutput())", null);
      }
      summaries.add(runStage(spec, n, plan.map() ? "map" : "reduce", counters));
      trace("ran stage " + i, start);
      input = output;
      inputMultiValued = outputMultiValued;
    }
    committing = true;
    commit();
    trace("committed", start);
    return new JobResult(jobId, summaries, counters, (System.nanoTime() - start) / 1e9,
        job.keepIntermediate ? intermediates : List.of());
  }

  /** Splits a job over files may have: the list goes to every node in one frame. */
  static final int MAX_SPLITS = 100_000;

  /**
   * The input files cut into splits, given round-robin to the job's nodes: about four per node
   * (see {@link TextSplits}), so that a node's task threads share them.
   */
  private List<FileSplit> splits() {
    List<TextSplits.Split> planned;
    try {
      planned = TextSplits.plan(TextSplits.files(job.inputFiles), 4 * nodes.size());
    } catch (IOException | UncheckedIOException e) {
      throw new JobFailedException(ErrorCode.NO_SUCH_FILE, "job " + job.name + " cannot read its input "
          + job.inputFiles + " here: " + e, e);
    }
    if (planned.size() > MAX_SPLITS) {
      // every node gets the whole list with the stage: it must fit a frame
      throw new JobFailedException(ErrorCode.BAD_REQUEST, "job " + job.name + ": its input " + job.inputFiles
          + " makes " + planned.size() + " splits, more than " + MAX_SPLITS + " (one per file at least): join"
          + " small files first", null);
    }
    List<FileSplit> splits = new ArrayList<>();
    for (int i = 0; i < planned.size(); i++) {
      TextSplits.Split p = planned.get(i);
      splits.add(FileSplit.newBuilder().setPath(p.file().toString()).setStart(p.start()).setLength(p.length())
          .setFileSize(p.fileSize()).setFileOffset(p.fileOffset()).setNode(nodes.get(i % nodes.size())).build());
    }
    return splits;
  }

  /**
   * The job reads its input by the serdes it declares for it; a table whose declared types are
   * others would be decoded wrongly (or fail in the middle of a task), so the job is refused
   * before any task runs.
   */
  private void checkInputTypes(PairTypes input) {
    Job.StagePlan first = job.stages.get(0);
    DataType key = first.inKey().dataType();
    DataType value = first.inValue().dataType();
    if (!readsAs(input.key(), key) || !readsAs(input.value(), value)) {
      throw new JobFailedException(ErrorCode.BAD_REQUEST, "job " + job.name + ": stage 0 reads table '"
          + job.inputTable + "', which holds key=" + PairTypes.name(input.key()) + " value=" + PairTypes.name(input.value())
          + ", as key=" + PairTypes.name(key) + " value=" + PairTypes.name(value) + " (" + first.inKey().getClass().getSimpleName() + ", "
          + first.inValue().getClass().getSimpleName() + "): declare the table's types in input(...)", null);
    }
  }

  /**
   * Whether data stored as {@code stored} reads as {@code declared}: the same type, or a string
   * read as bytes (the same encoding as keys, the same UTF-8 bytes as values: nothing is lost).
   */
  private static boolean readsAs(DataType stored, DataType declared) {
    return stored == declared
        || stored == DataType.STRING && declared == DataType.BYTES;
  }


  /** The name a kept table between stages takes when the job commits. */
  private String keptName(int stage) {
    return job.outputTable + ".stage" + stage;
  }

  /**
   * Makes the output visible on every node. A node that fails here leaves the output committed
   * on the others; the job fails naming it (see the class comment).
   */
  private void commit() {
    if (channels.spec().replication() > 1) {
      ClusterView now = ClientInternals.view(client).getView();
      if (now.getEpoch() != view.getEpoch()) {
        committing = false; // nothing committed: the job may run again on the copies that count now
        throw new JobFailedException(ErrorCode.STALE_VIEW, "job " + job.name + " (" + jobId + ") ran on membership "
            + "epoch " + view.getEpoch() + ", which moved on to " + now.getEpoch() + " before its commit", null);
      }
    }
    List<Throwable> errors = new ArrayList<>();
    List<CompletableFuture<Frame<Response>>> commits = new ArrayList<>();
    for (int node : nodes) {
      try {
        commits.add(channels.get(node).call(Request.newBuilder().setCommitJob(CommitJob.newBuilder().setJobId(jobId)
            .setViewEpoch(view.getEpoch()))));
      } catch (RuntimeException e) {
        commits.add(CompletableFuture.failedFuture(e));
      }
    }
    List<Integer> committed = new ArrayList<>();
    long expected = (files != null ? 0 : 1) + (job.keepIntermediate ? job.stages.size() - 1 : 0);
    for (int i = 0; i < nodes.size(); i++) {
      int node = nodes.get(i);
      try {
        Frame<Response> r = NodeChannels.await(commits.get(i), SssClient.DEFAULT_TIMEOUT);
        long renamed = r.header().getAck().getPairs();
        r.release();
        if (renamed != expected) {
          // a node that restarted since its stages ran lost the job's tables with its reservations
          throw new SssException(ErrorCode.NO_SUCH_TABLE, "node " + node + " committed " + renamed + " of the job's "
              + expected + " table(s): it lost them (did it restart during the job?)");
        }
        committed.add(node);
      } catch (RuntimeException e) {
        errors.add(e);
      }
    }
    if (!errors.isEmpty() && committed.isEmpty() && errors.stream().map(NodeChannels::unwrap).allMatch(
        e -> e instanceof SssException s && (s.code() == ErrorCode.STALE_VIEW || s.code() == ErrorCode.NOT_SERVING))) {
      committing = false; // every node refused before committing: the job may run again
    }
    if (!errors.isEmpty()) {
      RuntimeException cause = NodeChannels.unwrap(errors.get(0));
      throw new JobFailedException(cause instanceof SssException s ? s.code() : ErrorCode.INTERNAL,
          "job " + job.name + " (" + jobId + ") failed to commit its output '" + job.outputName() + "': "
              + cause.getMessage() + (committed.isEmpty() ? "" : " (committed on nodes " + committed
              + " only: drop the table or rerun with overwrite())"), cause);
    }
    if (files != null) {
      files.commit(jobId);
    }
  }

  private static final Logger LOG = LoggerFactory.getLogger(JobCoordinator.class);

  private void trace(String what, long start) {
    if (LOG.isDebugEnabled()) {
      LOG.debug("job {} {}: {} at {} ms", job.name, jobId, what, String.format("%.1f", (System.nanoTime() - start) / 1e6));
    }
  }

  /**
   * Makes sure every node has the job's JAR: asks all nodes at once and uploads where it is
   * missing. Completes with the JAR's hash ("" when the classes are on the servers' class path).
   */
  private CompletableFuture<String> shipJar() throws IOException {
    Path jar = job.jar != null ? job.jar
        : System.getProperty(JOB_JAR_PROPERTY) != null ? Path.of(System.getProperty(JOB_JAR_PROPERTY)) : null;
    if (jar == null || InProcessClusters.seeOnClassPath(channels.spec(), jar)) {
      return CompletableFuture.completedFuture("");
    }
    String hash = JarHashes.of(jar);
    List<CompletableFuture<Void>> shipped = new ArrayList<>();
    for (int node : nodes) {
      var connection = channels.get(node);
      shipped.add(connection.call(Request.newBuilder().setHasJar(HasJar.newBuilder().setHash(hash)), null,
          SssClient.DEFAULT_TIMEOUT).thenCompose(has -> {
            boolean present = has.header().getAck().getPairs() > 0;
            has.release();
            if (present) {
              return CompletableFuture.completedFuture(null);
            }
            byte[] bytes;
            try {
              bytes = Files.readAllBytes(jar);
            } catch (IOException e) {
              return CompletableFuture.failedFuture(e);
            }
            return connection.call(Request.newBuilder().setPutJar(PutJar.newBuilder().setHash(hash)),
                Unpooled.wrappedBuffer(bytes), SssClient.DEFAULT_TIMEOUT).thenAccept(Frame::release);
          }));
    }
    return CompletableFuture.allOf(shipped.toArray(new CompletableFuture[0])).thenApply(v -> hash);
  }

  private static String awaitJar(CompletableFuture<String> shipped) throws InterruptedException {
    try {
      return shipped.get();
    } catch (ExecutionException e) {
      throw NodeChannels.unwrap(e);
    }
  }

  static String sha256(byte[] bytes) {
    try {
      return HexFormat.of().formatHex(MessageDigest.getInstance("SHA-256").digest(bytes));
    } catch (NoSuchAlgorithmException e) {
      throw new IllegalStateException(e);
    }
  }

  private String outputOf(int stage) {
    return JobTables.stageOutput(jobId, stage);
  }

  /**
   * Creates every table of the job on every node at once (creating a column family costs a disk
   * sync each). The last stage's table reserves the output's name, and kept tables between
   * stages reserve theirs; a node where such a name exists (without overwrite) or is reserved by
   * another job refuses, and the job fails before any stage runs.
   */
  private void createAllTables() {
    int n = job.stages.size();
    List<CompletableFuture<Frame<Response>>> creates = new ArrayList<>();
    for (int i = 0; i < n; i++) {
      Job.StagePlan plan = job.stages.get(i);
      boolean last = i == n - 1;
      if (last && files != null) {
        continue; // its tasks write files
      }
      CreateTable.Builder create = CreateTable.newBuilder()
          .setTable(outputOf(i))
          .setJobId(jobId)
          .setOptions(last ? outputOptions(plan, job.multiValuedOutput, job.outputCompression,
              channels.spec().replication())
              : intermediateOptions(plan));
      if (last || job.keepIntermediate) {
        create.setCommitAs(last ? job.outputTable : keptName(i)).setCommitReplaces(job.overwrite);
      }
      CreateTable built = create.build(); // one message, read by the loops of every node's connection
      for (int node : nodes) { // connected all at once: the job's first round to a new client's nodes
        try {
          creates.add(channels.connection(node).thenCompose(c -> c.call(Request.newBuilder().setCreateTable(built))));
        } catch (RuntimeException e) {
          creates.add(CompletableFuture.failedFuture(e));
        }
      }
    }
    RuntimeException first = null;
    for (CompletableFuture<Frame<Response>> c : creates) {
      try {
        NodeChannels.await(c, SssClient.DEFAULT_TIMEOUT).release();
      } catch (RuntimeException e) {
        first = first != null ? first : e;
      }
    }
    if (first != null) {
      throw first;
    }
  }

  private static TableOptions intermediateOptions(Job.StagePlan plan) {
    return JobTables.betweenStages(plan.outKey().dataType(), plan.outValue().dataType());
  }

  /** A job's output keeps as many copies as the cluster's other tables; the tables between stages keep one. */
  private static TableOptions outputOptions(Job.StagePlan plan, boolean multiValued,
                                           TableSpec.Compression compression, int replication) {
    return TableOptions.newBuilder()
        .setReplication(replication == 1 ? 0 : replication) // one copy: the field's default, as before replication
        .setMultiValued(multiValued)
        .setCompression(WireTypes.toProto(compression))
        .setKeyType(plan.outKey().dataType())
        .setValueType(plan.outValue().dataType())
        .build();
  }

  /** Runs one stage on every node and waits for the barrier, watching liveness and cancel. */
  private StageSummary runStage(StageSpec spec, int stageCount, String kind, Map<String, Long> counters)
      throws Exception {
    long start = System.nanoTime();
    List<CompletableFuture<Frame<Response>>> futures = new ArrayList<>();
    for (int node : nodes) {
      futures.add(channels.get(node).call(Request.newBuilder().setRunStage(
          RunStage.newBuilder().setJobId(jobId).setStage(spec).setView(view)), null, Duration.ZERO));
    }
    CompletableFuture<Void> all = CompletableFuture.allOf(futures.toArray(new CompletableFuture[0]));
    CompletableFuture<Object> firstFailure = new CompletableFuture<>();
    for (CompletableFuture<Frame<Response>> f : futures) {
      f.whenComplete((r, e) -> {
        if (e != null) {
          firstFailure.complete(e);
        }
      });
    }
    long lastPoll = System.nanoTime();
    while (true) {
      try {
        CompletableFuture.anyOf(all, firstFailure).get(POLL_MILLIS / 5, TimeUnit.MILLISECONDS);
      } catch (TimeoutException ignored) {
        // poll below
      } catch (ExecutionException ignored) {
        // handled through firstFailure
      }
      if (firstFailure.isDone()) {
        fail(stageFailure((Throwable) firstFailure.get(), spec.getIndex(), futures), futures);
      }
      if (all.isDone()) {
        break;
      }
      if (cancelReason != null) {
        fail(new JobFailedException(ErrorCode.JOB_ABORTED, "job " + job.name + " (" + jobId + ") "
            + cancelReason, null), futures);
      }
      if (System.nanoTime() - lastPoll >= POLL_MILLIS * 1_000_000) {
        lastPoll = System.nanoTime();
        try {
          pollProgress(spec.getIndex(), stageCount, kind, start);
        } catch (RuntimeException e) {
          fail(stageFailure(e, spec.getIndex(), futures), futures);
        }
      }
    }
    long in = 0;
    long out = 0;
    long shuffled = 0;
    long bytes = 0;
    long slowestNode = 0;
    long tasks = 0;
    long taken = 0;
    long builtFilePairs = 0;
    boolean overFiles = spec.getInputSplitsCount() > 0 || spec.getInputTable().isEmpty();
    int[] runs = new int[overFiles ? spec.getInputSplitsCount() : client.spec().partitionMap().partitions()];
    for (CompletableFuture<Frame<Response>> f : futures) {
      Frame<Response> r = f.get();
      StageReport rep = r.header().getStageReport();
      for (int p : rep.getPartitionsRunList()) {
        if (p >= runs.length) {
          miscounted = true;
          throw new JobFailedException(ErrorCode.INTERNAL, "job " + job.name + " (" + jobId + ") stage "
              + spec.getIndex() + ": a node reports a task " + p + " of " + runs.length, null);
        }
        runs[p]++;
      }
      taken += rep.getTasksTaken();
      builtFilePairs += rep.getPairsInBuiltFiles();
      slowestNode = Math.max(slowestNode, rep.getElapsedNanos());
      tasks += rep.getTasksTotal();
      in += rep.getRecordsIn();
      out += rep.getRecordsOut();
      shuffled += rep.getRecordsShuffled();
      bytes += rep.getBytesShuffled();
      rep.getCountersMap().forEach((k, v) -> counters.merge(k, v, Long::sum));
      r.release();
    }
    checkRunOnce(spec, runs);
    if (taken > 0) {
      counters.merge(JobResult.TASKS_TAKEN_COUNTER, taken, Long::sum);
    }
    if (builtFilePairs > 0) {
      counters.merge(JobResult.BUILT_FILE_PAIRS_COUNTER, builtFilePairs, Long::sum);
    }
    double seconds = (System.nanoTime() - start) / 1e9;
    if (LOG.isDebugEnabled()) { // a float formatted in a fresh JVM: milliseconds of a short job
      trace("stage " + spec.getIndex() + " took " + String.format("%.1f", slowestNode / 1e6) + " ms on its slowest node",
          start);
    }
    listener.update(spec.getIndex(), stageCount, kind, tasks, tasks, in, out, bytes, seconds);
    return new StageSummary(spec.getIndex(), kind, in, out, shuffled, bytes, seconds);
  }

  /**
   * Every task of a stage (a partition, or a split of files) must have run exactly once, on
   * whichever node ran it: a task run twice or never would make a wrong answer, not an error.
   */
  private void checkRunOnce(StageSpec spec, int[] runs) {
    List<String> wrong = new ArrayList<>();
    for (int p = 0; p < runs.length; p++) {
      if (runs[p] != 1) {
        wrong.add((spec.getInputTable().isEmpty() ? "split " : "partition ") + p + " ran " + runs[p] + " times");
      }
    }
    if (!wrong.isEmpty()) {
      miscounted = true;
      throw new JobFailedException(ErrorCode.INTERNAL, "job " + job.name + " (" + jobId + ") stage " + spec.getIndex()
          + ": the nodes did not run every task exactly once: " + String.join(", ", wrong.subList(0,
          Math.min(wrong.size(), 8))) + (wrong.size() > 8 ? " and " + (wrong.size() - 8) + " more" : ""), null);
    }
  }

  private void pollProgress(int stage, int stageCount, String kind, long start) {
    List<CompletableFuture<Frame<Response>>> polls = new ArrayList<>();
    for (int node : nodes) {
      polls.add(channels.get(node).call(Request.newBuilder().setStageProgress(
          StageProgress.newBuilder().setJobId(jobId)), null, LIVENESS_TIMEOUT));
    }
    long done = 0;
    long total = 0;
    long in = 0;
    long out = 0;
    long bytes = 0;
    for (CompletableFuture<Frame<Response>> p : polls) {
      Frame<Response> r = NodeChannels.await(p, LIVENESS_TIMEOUT.plusSeconds(1));
      StageReport rep = r.header().getStageReport();
      done += rep.getTasksDone();
      total += rep.getTasksTotal();
      in += rep.getRecordsIn();
      out += rep.getRecordsOut();
      bytes += rep.getBytesShuffled();
      r.release();
    }
    listener.update(stage, stageCount, kind, done, total, in, out, bytes, (System.nanoTime() - start) / 1e9);
  }

  private JobFailedException stageFailure(Throwable e, int stage, List<CompletableFuture<Frame<Response>>> futures) {
    Throwable cause = NodeChannels.unwrap(e);
    // Prefer the root cause over the echoes it causes on other nodes (aborts, lost peers).
    for (CompletableFuture<Frame<Response>> f : futures) {
      if (f.isCompletedExceptionally()) {
        try {
          f.join();
        } catch (Exception ex) {
          RuntimeException c = NodeChannels.unwrap(ex);
          if (c instanceof SssException s && s.code() == ErrorCode.USER_CODE_FAILED) {
            cause = c;
            break;
          }
        }
      }
    }
    ErrorCode code = cause instanceof SssException s ? s.code() : ErrorCode.INTERNAL;
    return new JobFailedException(code, "job " + job.name + " (" + jobId + ") failed in stage " + stage + ": "
        + cause.getMessage(), cause);
  }

  /**
   * Fails the stage: the answers still to come are released as they arrive, and the failure
   * goes to {@link #run}, whose clean-up aborts the job everywhere and waits for it to stop.
   */
  private void fail(JobFailedException failure, List<CompletableFuture<Frame<Response>>> futures) {
    for (CompletableFuture<Frame<Response>> f : futures) {
      f.thenAccept(Frame::release);
    }
    throw failure;
  }

  /**
   * After a failure: aborts the job on every reachable node, which stops its tasks, releases
   * the names it reserved and drops its tables there, and waits (bounded) for the answers. A
   * node that cannot be reached drops the job's tables when it starts again.
   */
  private void cleanUp(String reason) {
    List<CompletableFuture<Frame<Response>>> aborts = new ArrayList<>();
    Set<Integer> gone = nodesDecidedGone();
    for (int node = 0; node < channels.spec().nodeCount(); node++) {
      var connection = channels.connectedOrNull(node);
      if (connection != null) {
        CompletableFuture<Frame<Response>> abort = connection.call(Request.newBuilder().setAbortJob(AbortJob.newBuilder()
            .setJobId(jobId).setReason(reason)), null, LIVENESS_TIMEOUT.plusSeconds(5));
        if (gone.contains(node)) {
          abort.thenAccept(Frame::release); // sent, not awaited (see nodesDecidedGone)
        } else {
          aborts.add(abort);
        }
      }
    }
    for (CompletableFuture<Frame<Response>> a : aborts) {
      try {
        a.get(LIVENESS_TIMEOUT.toMillis() + 6000, TimeUnit.MILLISECONDS).release();
      } catch (Exception ignored) {
        // best effort: a node lost meanwhile cleans up when it starts
      }
    }
    if (files != null) {
      files.abandon(jobId); // after the aborts: the nodes have stopped writing into it
    }
  }

}
