package org.sss.client;

import io.netty.buffer.ByteBuf;
import io.netty.buffer.Unpooled;
import java.time.Duration;
import java.util.LinkedHashMap;
import java.util.Map;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionException;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.Semaphore;
import java.util.concurrent.ThreadLocalRandom;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;
import java.util.concurrent.atomic.AtomicLong;
import java.util.concurrent.atomic.AtomicReference;
import java.util.function.Supplier;
import org.sss.client.internal.NodeChannels;
import org.sss.core.cluster.InSyncCopies;
import org.sss.core.cluster.PartitionMap;
import org.sss.core.cluster.ReplicaPlacement;
import org.sss.core.keys.PairTypes;
import org.sss.core.keys.StoredKeys;
import org.sss.core.proto.ClusterView;
import org.sss.core.proto.ErrorCode;
import org.sss.core.proto.PutBatch;
import org.sss.core.proto.Request;
import org.sss.core.proto.Response;
import org.sss.core.proto.SealBulk;
import org.sss.core.transport.Buffers;
import org.sss.core.transport.Frame;
import org.sss.core.transport.NodeUnavailableException;
import org.sss.core.transport.PairBlock;
import org.sss.core.transport.SssException;

/**
 * Writes many pairs into a table fast: pairs are routed to their owner node, packed into one
 * buffer per node, and sent as a batch when the buffer is full ({@code batchBytes}; a pair
 * larger than that travels alone); up to
 * {@code maxInFlight} batches per node are in flight at once, and {@link #put} blocks when all
 * are (backpressure, not unbounded buffering).
 *
 * <h2>Copies that change while it writes</h2>
 * In a replicated cluster a node may be decided out (or come back) while the writer runs; its
 * batches are then refused or lost. The writer keeps the pairs written since its last
 * checkpoint (every {@link #CHECKPOINT_BYTES} and at each flush, where every copy has
 * acknowledged everything before), and after such a failure it waits for the members'
 * decision, reads the view again and sends those pairs again, in their order, to the copies
 * that count now; sent twice to a copy, a pair leaves it as once. So a load goes on through a
 * node's death. A node cut off answers nothing: a batch to it unanswered for 5 s makes the
 * writer read the view, and once that node is decided out its batches are given up as lost
 * rather than waited for until the request timeout. A multi-valued table cannot take a pair twice (each would be a value of its
 * own): its writer fails instead, saying to write the pairs since the last flush again.
 *
 * <h2>How the nodes store the pairs</h2>
 * The writer's batches carry a session (a random number, new after every resend): the nodes
 * gather a session's pairs and write them into SST files, as they write a job's output (in
 * order within each partition, straight into files ingested at the bottom level where the keys
 * allow), not through the memtable and the WAL. A read stores what is gathered first, so a pair
 * is read as soon as its batch was acknowledged. {@link #flush()} then <em>seals</em>: every node
 * that took pairs checks that it still holds all that it acknowledged in the session (one that
 * restarted since does not: it answers {@code WRITES_LOST}) and stores them durably. A node that
 * lost pairs has them sent again, as after a refusal, or, with one copy, fails the writer.
 *
 * <p>A pair is durable once {@link #flush()} or {@link #close()} has returned without an
 * exception. A failed batch fails the writer: the next {@code put}, {@code flush} or
 * {@code close} throws the first error, naming the node. Not thread-safe: one writer per thread.
 */
public final class BulkWriter implements AutoCloseable {
  private final NodeChannels channels;
  private final PartitionMap partitions;
  private final String table;
  private final PairTypes types;
  private final int batchBytes;
  private final int maxInFlight;
  private final ByteBuf[] buffers;
  private final int[] counts;
  /** Pairs of each buffer sent as their partition's first copy. */
  private final int[] leads;
  private final ReplicaPlacement placement;
  /** Copies of each pair: the cluster's replication. */
  private final int copies;
  /** The membership view the writer's copies come from (null with one copy). */
  private ClusterView view;
  /** Per partition, the copies that count under {@link #view}. */
  private int[][] targets;
  /** Reads the view again after a refusal; null when the writer cannot send again (see class comment). */
  private final Supplier<ClusterView> freshView;
  /** The pairs since the last checkpoint, as sent (stored keys), when they can be sent again. */
  private final ByteBuf sinceCheckpoint;
  private long pairsSinceCheckpoint;
  private boolean closed;
  private RuntimeException closeFailure;
  /** How long the writer waits for the copies to settle after a failure. */
  private final Duration timeout;
  private final InSyncCopies inSync;
  private final Semaphore[] inFlight;
  /** The batches under way to each node, with when each was sent: those to a node decided out are given up. */
  private final Map<CompletableFuture<?>, Long>[] pending;
  /** When the writer last finished reading the view while waiting for a node (see {@link #giveUpIfOut}). */
  private long viewReadNanos = System.nanoTime();
  /**
   * How long a batch goes unanswered before the writer asks whether its node was decided out,
   * and how long between two such reads: a healthy node under load answers well within it, so
   * a healthy load reads no view.
   */
  private static final long SILENT_NANOS = TimeUnit.SECONDS.toNanos(5);
  private final AtomicReference<RuntimeException> failure = new AtomicReference<>();
  /** The session the nodes gather this writer's pairs under; a new one after every resend. */
  private long session = newSession();
  /**
   * Pairs each node has gathered and acknowledged in {@link #session} since its last seal: what
   * the next seal checks it still holds.
   */
  private AtomicLong[] takenInSession;
  /** Nodes a seal of {@link #session} stored pairs on: the last seal tells them the session ended. */
  private boolean[] tookInSession;
  private final AtomicLong acknowledged = new AtomicLong();
  private long bytesWritten;

  BulkWriter(NodeChannels channels, String table, PairTypes types, int batchBytes, int maxInFlight,
             ClusterView view,
             Supplier<ClusterView> freshView, Duration timeout) {
    this.view = view;
    this.freshView = freshView;
    this.timeout = timeout;
    this.sinceCheckpoint = freshView == null ? null : Unpooled.buffer(1 << 16);
    this.channels = channels;
    this.partitions = channels.spec().partitionMap();
    this.table = table;
    this.types = types;
    this.batchBytes = batchBytes;
    this.maxInFlight = maxInFlight;
    int n = channels.spec().nodeCount();
    this.buffers = new ByteBuf[n];
    this.counts = new int[n];
    this.leads = new int[n];
    this.copies = channels.spec().replication();
    this.placement = channels.spec().placement();
    this.inSync = new InSyncCopies(placement);
    this.targets = view == null ? null : inSync.writeTargetsByPartition(view);
    this.inFlight = new Semaphore[n];
    this.takenInSession = newCounts(n);
    this.tookInSession = new boolean[n];
    @SuppressWarnings("unchecked")
    Map<CompletableFuture<?>, Long>[] under = new Map[n];
    this.pending = under;
    for (int i = 0; i < n; i++) {
      inFlight[i] = new Semaphore(maxInFlight);
      pending[i] = new ConcurrentHashMap<>();
    }
  }

  /**
   * Takes {@code permits} of node {@code node}'s in-flight window, waiting for batches under way.
   * A node cut off answers nothing, and its batches would wait for the request timeout; so while
   * waiting, the writer reads the view now and then, and gives up the batches of a node decided
   * out: they are sent again to the copies that count ({@link #sendAgain}).
   */
  private void acquire(int node, int permits) throws InterruptedException {
    Semaphore s = inFlight[node];
    while (!s.tryAcquire(permits, 1, TimeUnit.SECONDS)) {
      giveUpIfOut(node);
    }
  }

  private void giveUpIfOut(int node) {
    long now = System.nanoTime();
    if (freshView == null || view == null || now - viewReadNanos < SILENT_NANOS
        || pending[node].values().stream().noneMatch(sent -> now - sent >= SILENT_NANOS)) {
      return;
    }
    ClusterView current;
    try {
      current = freshView.get();
    } catch (RuntimeException unreachable) {
      return;
    } finally {
      viewReadNanos = System.nanoTime();
    }
    if (current.getEpoch() > view.getEpoch() && current.getOutList().contains(node)) {
      for (CompletableFuture<?> f : pending[node].keySet()) {
        f.completeExceptionally(new NodeUnavailableException("node " + node
            + " was decided out of the in-sync copies while a batch to it was under way", null));
      }
    }
  }

  /** Adds a pair (an encoded key and a value); may block while batches are in flight. */
  public void put(byte[] key, byte[] value) {
    checkFailure();
    int partition = partitions.partitionOf(key);
    if (copies == 1) {
      append(partitions.ownerOf(partition), partition, key, value, true);
    } else {
      if (sinceCheckpoint != null) {
        PairBlock.writeVarint(sinceCheckpoint, StoredKeys.storedLength(key.length, false));
        StoredKeys.writeStored(sinceCheckpoint, partition, key, false, 0, 0);
        PairBlock.writeVarint(sinceCheckpoint, value.length);
        sinceCheckpoint.writeBytes(value);
        pairsSinceCheckpoint++;
      }
      route(partition, key, value);
      if (sinceCheckpoint != null && sinceCheckpoint.readableBytes() >= CHECKPOINT_BYTES) {
        flush();
      }
    }
    bytesWritten += key.length + value.length;
  }

  /** Sends a pair to every copy that counts; the write is acknowledged when all have it. */
  private void route(int partition, byte[] key, byte[] value) {
    int[] holders = targets[partition];
    for (int i = 0; i < holders.length; i++) {
      append(holders[i], partition, key, value, i == 0);
    }
  }

  /** True for a failure after which the pairs can be sent again to the copies that count then. */
  /**
   * Keeps the first failure, unless a later one cannot be resent and the kept one can: a batch
   * refused by a node catching up must not hide another node's answer that the table is gone,
   * or the writer would resend until its timeout.
   */
  private void recordFailure(RuntimeException e) {
    failure.accumulateAndGet(e, (kept, now) -> kept == null || resendable(kept) && !resendable(now) ? now : kept);
  }

  private boolean resendable(RuntimeException e) {
    return sinceCheckpoint != null && (e instanceof NodeUnavailableException
        || e instanceof SssException s && (s.code() == ErrorCode.STALE_VIEW
            || s.code() == ErrorCode.NOT_SERVING || s.code() == ErrorCode.WRITES_LOST));
  }

  /**
   * After a batch was refused or lost: waits for every batch under way, drops what is buffered,
   * reads the view again and sends every pair since the checkpoint, in order, until all are
   * acknowledged or the copies have not settled within the timeout.
   */
  private void sendAgain() {
    long deadline = System.nanoTime() + timeout.toNanos();
    long pause = 200;
    long failedOn = view.getEpoch();
    while (true) {
      awaitInFlight();
      RuntimeException e = failure.get();
      if (e == null) {
        return;
      }
      if (!resendable(e)) {
        throw e;
      }
      if (System.nanoTime() > deadline) {
        RuntimeException last = new SssException(ErrorCode.INTERNAL, "the table's copies did not "
            + "settle within " + timeout.toSeconds() + " s of a failed batch: " + e.getMessage()
            + "; the pairs since the last flush may be on some copies only: write them again", e);
        failure.set(last); // final: the writer has failed
        throw last;
      }
      for (int node = 0; node < buffers.length; node++) {
        if (buffers[node] != null) {
          buffers[node].release();
          buffers[node] = null;
        }
        counts[node] = 0;
        leads[node] = 0;
      }
      try {
        Thread.sleep(pause);
      } catch (InterruptedException ie) {
        Thread.currentThread().interrupt();
        throw new SssException(ErrorCode.INTERNAL, "interrupted while writing", ie);
      }
      pause = Math.min(1_000, pause * 2);
      try {
        view = freshView.get();
        targets = inSync.writeTargetsByPartition(view);
      } catch (RuntimeException unreachable) {
        continue; // no node answers now: the deadline ends it
      }
      if (e instanceof NodeUnavailableException lost && !lost.refused()
          && view.getEpoch() == failedOn) {
        // a batch lost, not refused, may still be applied by a slow node: sent again on the same
        // epoch it could land after its resend; on a newer one the node has applied it first
        // (a node takes a new view only once the writes checked against the old are applied)
        continue;
      }
      failure.set(null);
      failedOn = view.getEpoch(); // a batch of this resend lost on the same epoch waits again
      // a session of its own: the nodes' counts of the old one include pairs some of them lost
      session = newSession();
      takenInSession = newCounts(buffers.length);
      tookInSession = new boolean[buffers.length];
      ByteBuf again = sinceCheckpoint.duplicate();
      while (again.isReadable()) {
        int keyLength = PairBlock.readVarint(again);
        int partition = StoredKeys.partitionAt(again, again.readerIndex(), keyLength);
        byte[] key = StoredKeys.readScannedKey(again, keyLength);
        byte[] value = new byte[PairBlock.readVarint(again)];
        again.readBytes(value);
        route(partition, key, value);
      }
      for (int node = 0; node < buffers.length; node++) {
        send(node);
      }
    }
  }

  private void append(int node, int partition, byte[] key, byte[] value, boolean leading) {
    int keyLength = StoredKeys.storedLength(key.length, false);
    int size = PairBlock.encodedSize(keyLength, value.length);
    ByteBuf buf = buffers[node];
    if (buf != null && counts[node] > 0 && buf.writableBytes() < size) {
      // send what fits rather than grow the buffer (growing copies it)
      send(node);
      buf = null;
    }
    if (buf == null) {
      buf = buffers[node] = Buffers.allocator().directBuffer(Math.max(size, Math.min(batchBytes, MAX_INITIAL_BYTES)));
    }
    PairBlock.writeVarint(buf, keyLength);
    StoredKeys.writeStored(buf, partition, key, false, 0, 0);
    PairBlock.writeVarint(buf, value.length);
    buf.writeBytes(value);
    counts[node]++;
    if (leading) {
      leads[node]++;
    }
    if (buf.readableBytes() >= batchBytes) {
      send(node);
    }
  }

  private void send(int node) {
    ByteBuf buf = buffers[node];
    if (buf == null || counts[node] == 0) {
      return;
    }
    RuntimeException failed = failure.get();
    if (failed != null && resendable(failed)) {
      // every pair since the checkpoint is sent again once the copies settle: this batch too
      // (sent now it could go to a node just given up on, and wait there)
      buf.release();
      buffers[node] = null;
      counts[node] = 0;
      leads[node] = 0;
      return;
    }
    int n = counts[node];
    int led = leads[node];
    buffers[node] = null;
    counts[node] = 0;
    leads[node] = 0;
    Semaphore permits = inFlight[node];
    try {
      acquire(node, 1);
    } catch (InterruptedException e) {
      buf.release();
      Thread.currentThread().interrupt();
      SssException interrupted = new SssException(ErrorCode.INTERNAL, "interrupted while writing", e);
      failure.compareAndSet(null, interrupted); // the writer has failed: its batch was never sent
      throw interrupted;
    }
    AtomicLong taken = takenInSession[node];
    try {
      CompletableFuture<Frame<Response>> sent =
          channels.get(node).call(Request.newBuilder().setPutBatch(
          PutBatch.newBuilder().setTable(table).setPairCount(n).setKeyType(types.key())
              .setValueType(types.value()).setReplication(copies).setViewEpoch(view == null ? 0 : view.getEpoch())
              .setBulkSession(session)), buf);
      pending[node].put(sent, System.nanoTime());
      sent.whenComplete((r, e) -> {
            pending[node].remove(sent);
            // Record the outcome before giving the permit back: flush() returns as soon as it
            // holds every permit, and must then see this batch's failure.
            if (e != null) {
              recordFailure(explain(NodeChannels.unwrap(e)));
            } else {
              if (r.header().getAck().getGathered()) {
                taken.addAndGet(n);
              }
              r.release();
              if (sinceCheckpoint == null) {
                acknowledged.addAndGet(led); // a pair counts once, with its first copy's batch
              } // else counted at the checkpoint: a pair sent again must not count twice
            }
            permits.release();
          });
    } catch (RuntimeException e) {
      permits.release();
      buf.release();
      recordFailure(e);
      if (!resendable(e)) {
        throw e;
      } // else sent again once the copies settle (checkFailure)
    }
  }

  /**
   * A batch refused because the copies changed under the writer (a node left or joined them):
   * the writer's pairs may have reached some copies only, so it fails, saying to write again.
   */
  private RuntimeException explain(RuntimeException e) {
    boolean moved = e instanceof SssException s
        && (s.code() == ErrorCode.STALE_VIEW || s.code() == ErrorCode.NOT_SERVING);
    return !moved ? e : new SssException(((SssException) e).code(),
        "the table's copies changed during the bulk write (membership epoch " + view.getEpoch() + " when it began): "
            + e.getMessage() + "; the pairs written since the last flush may be on some copies only: write them again", e);
  }

  private void checkFailure() {
    RuntimeException e = failure.get();
    if (e != null) {
      if (resendable(e)) {
        sendAgain();
        return;
      }
      throw e;
    }
  }

  /** Waits until no batch is under way; an interrupt is kept for the caller, not obeyed. */
  private void awaitInFlight() {
    boolean interrupted = false;
    for (int node = 0; node < inFlight.length; node++) {
      while (true) {
        try {
          acquire(node, maxInFlight);
          break;
        } catch (InterruptedException e) {
          interrupted = true;
        }
      }
      inFlight[node].release(maxInFlight);
    }
    if (interrupted) {
      Thread.currentThread().interrupt();
    }
  }

  /**
   * Sends every buffered pair, waits until all are acknowledged, and seals them on every node
   * that took some: they are durable when this returns.
   */
  public void flush() {
    flush(false);
  }

  private void flush(boolean last) {
    long deadline = System.nanoTime() + timeout.toNanos();
    do {
      for (int node = 0; node < buffers.length; node++) {
        send(node);
      }
      awaitInFlight();
      if (failure.get() != null && System.nanoTime() > deadline) {
        // every seal found a loss again (a node that keeps restarting): the pairs are not stored
        RuntimeException e = failure.get();
        RuntimeException gaveUp = new SssException(ErrorCode.INTERNAL, "the pairs could not be sealed within "
            + timeout.toSeconds() + " s: " + e.getMessage() + "; the pairs since the last flush may be on"
            + " some copies only: write them again", e);
        failure.set(gaveUp);
        throw gaveUp;
      }
      checkFailure();
    } while (!seal(last, deadline));
    if (sinceCheckpoint != null) {
      // every copy that counts has every pair so far: a checkpoint
      acknowledged.addAndGet(pairsSinceCheckpoint);
      pairsSinceCheckpoint = 0;
      sinceCheckpoint.clear();
    }
  }

  /**
   * Asks every node that took pairs in this session to store them durably, once it has checked
   * that it still holds them all. Returns false after a failure that a resend mends (recorded:
   * the caller's next {@link #checkFailure} sends the pairs since the checkpoint again); throws
   * one that it does not.
   */
  private boolean seal(boolean last, long deadline) {
    Map<Integer, CompletableFuture<Frame<Response>>> seals = new LinkedHashMap<>();
    long[] sealing = new long[takenInSession.length];
    for (int node = 0; node < takenInSession.length; node++) {
      sealing[node] = takenInSession[node].get();
      if (sealing[node] == 0 && !(last && tookInSession[node])) {
        continue;
      }
      try {
        // no request timeout: a seal may take long (it stores everything gathered); a node cut
        // off is given up on once decided out, and the flush's deadline ends the wait
        CompletableFuture<Frame<Response>> f = channels.get(node).call(Request.newBuilder().setSealBulk(
            SealBulk.newBuilder().setTable(table).setSession(session).setPairs(sealing[node]).setLast(last)),
            null, Duration.ZERO);
        pending[node].put(f, System.nanoTime()); // a node cut off is given up on as for a batch
        seals.put(node, f);
      } catch (RuntimeException e) {
        recordFailure(e);
      }
    }
    for (Map.Entry<Integer, CompletableFuture<Frame<Response>>> s : seals.entrySet()) {
      int node = s.getKey();
      try {
        awaitSeal(node, s.getValue(), deadline).release();
        takenInSession[node].addAndGet(-sealing[node]); // stored: the next seal counts from here
        tookInSession[node] = true;
      } catch (RuntimeException e) {
        recordFailure(explain(NodeChannels.unwrap(e)));
      } finally {
        pending[node].remove(s.getValue());
      }
    }
    RuntimeException e = failure.get();
    if (e != null && !resendable(e)) {
      throw e;
    }
    return e == null;
  }

  /**
   * The seal's answer; while it is awaited, a node decided out is given up on
   * ({@link #giveUpIfOut}), and past the flush's deadline the writer fails.
   */
  private Frame<Response> awaitSeal(int node, CompletableFuture<Frame<Response>> f, long deadline) {
    boolean interrupted = false;
    try {
      while (true) {
        try {
          return f.get(1, TimeUnit.SECONDS);
        } catch (TimeoutException stillSealing) {
          if (System.nanoTime() > deadline) {
            f.cancel(false);
            throw new SssException(ErrorCode.INTERNAL, "node " + node + " did not answer the seal of table '"
                + table + "' within " + timeout.toSeconds() + " s; the pairs since the last flush may not be"
                + " stored there: write them again");
          }
          giveUpIfOut(node);
        } catch (InterruptedException ie) {
          interrupted = true;
        } catch (ExecutionException ee) {
          throw ee.getCause() instanceof RuntimeException r ? r : new CompletionException(ee.getCause());
        }
      }
    } finally {
      if (interrupted) {
        Thread.currentThread().interrupt();
      }
    }
  }

  private static long newSession() {
    long s;
    do {
      s = ThreadLocalRandom.current().nextLong();
    } while (s == 0 || s == -1); // 0 is no session, -1 no stream
    return s;
  }

  private static AtomicLong[] newCounts(int nodes) {
    AtomicLong[] counts = new AtomicLong[nodes];
    for (int i = 0; i < nodes; i++) {
      counts[i] = new AtomicLong();
    }
    return counts;
  }

  /** The batches sent and not yet answered, over every node (see {@code ClientInternals}). */
  int batchesInFlight() {
    int n = 0;
    for (Map<CompletableFuture<?>, Long> sent : pending) {
      n += sent.size();
    }
    return n;
  }

  /** Pairs the servers have acknowledged so far. */
  public long acknowledged() {
    return acknowledged.get();
  }

  /** Key and value bytes handed to {@link #put} so far. */
  public long bytesWritten() {
    return bytesWritten;
  }

  @Override
  public void close() {
    if (closed) {
      if (closeFailure != null) {
        throw again(closeFailure); // closing again after a failure does not make the pairs stored
      }
      return; // closing twice (a close inside try-with-resources) changes nothing
    }
    closed = true;
    try {
      flush(true);
    } catch (RuntimeException e) {
      closeFailure = e;
      throw again(e);
    } finally {
      if (sinceCheckpoint != null) {
        sinceCheckpoint.release();
      }
      for (int i = 0; i < buffers.length; i++) {
        if (buffers[i] != null) {
          buffers[i].release();
          buffers[i] = null;
        }
      }
    }
  }

  /**
   * A new exception of {@code e}'s kind carrying it: a close throws one each time, not {@code e}
   * itself, since the caller may have had {@code e} (from put, flush or an earlier close)
   * already, and try-with-resources would add it to itself as suppressed, which throws an
   * IllegalArgumentException ("Self-suppression not permitted") in place of the failure.
   */
  private static RuntimeException again(RuntimeException e) {
    if (e instanceof NodeUnavailableException) {
      return new NodeUnavailableException(e.getMessage(), e);
    }
    if (e instanceof SssException s) {
      return new SssException(s.code(), s.getMessage(), e);
    }
    return new IllegalStateException(e.getMessage(), e);
  }

  /** The most bytes of pairs kept to be sent again, in a replicated cluster; then a flush. */
  static final int CHECKPOINT_BYTES = 64 << 20;
  /** Default size of one batch. */
  static final int DEFAULT_BATCH_BYTES = 1 << 20;
  /** Default batches in flight per node. */
  static final int DEFAULT_IN_FLIGHT = 4;
  /** A batch buffer starts at most this large (and grows for larger batches). */
  private static final int MAX_INITIAL_BYTES = 16 << 20;
}
