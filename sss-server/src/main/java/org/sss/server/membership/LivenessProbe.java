package org.sss.server.membership;

import java.time.Duration;
import java.util.Arrays;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;
import org.sss.core.cluster.ClusterSpec;
import org.sss.core.proto.GetView;
import org.sss.core.proto.Request;
import org.sss.core.proto.ViewAnswer;
import org.sss.core.transport.Connection;
import org.sss.core.transport.Pipelines;
import org.sss.core.transport.Tls;

/**
 * Whether each node answers on its SSS port: an authenticated request ({@code GetView}) over a
 * connection kept open between probes. A probe never blocks its caller; a node counts as
 * silent from its last answer (or from when probing began) until its next one. What is probed
 * is the service clients use, not Raft's own heartbeats: a node whose store or port is gone is
 * down for its clients whatever its Raft does; so is a node that answers without a lease (it
 * cannot reach the majority, so it refuses every read and write), and so is one whose workers
 * have begun none of the requests waiting for them for {@link #STALLED_MILLIS}: a node answers a
 * probe on its event loop, so that workers merely busy do not make it silent.
 */
final class LivenessProbe implements AutoCloseable {
  private static final Duration PROBE_TIMEOUT = Duration.ofSeconds(1);
  /**
   * Requests waiting this long with no worker beginning one make a node count as silent: busy
   * workers begin one now and then, hung ones (a disk that stopped answering) never do. The
   * node is decided down {@code Membership.DOWN_AFTER_MILLIS} later.
   */
  static final long STALLED_MILLIS = 10_000;
  /**
   * A synced write of a few bytes beside the store under way this long makes a node count as
   * silent: its disk does not answer ({@link DiskProbe}). Workers alone do not show a disk that
   * hangs under one of them while the others stay free (a connection's writes run one at a
   * time); and the time a request runs says nothing, since counts of large partitions and
   * commits waiting on locks run long on healthy nodes. Measured here: under a 3 GB buffered
   * write to the same file system, the probe's longest write took 0.6 s.
   */
  static final long DISK_STALLED_MILLIS = 20_000;
  /**
   * The system property that sets {@link #DISK_STALLED_MILLIS} otherwise, for disks whose synced
   * writes may take longer (network block storage); the same on every node.
   */
  static final String DISK_STALLED_PROPERTY = "sss.disk.stalled.millis";

  /**
   * {@link #DISK_STALLED_MILLIS}, or the value of {@link #DISK_STALLED_PROPERTY}, which must be a
   * positive number of milliseconds: 0 would count every node silent (and make a leader hand
   * over for ever), not turn the rule off.
   */
  static long diskStalledMillis() {
    String set = System.getProperty(DISK_STALLED_PROPERTY);
    if (set == null) {
      return DISK_STALLED_MILLIS;
    }
    try {
      long millis = Long.parseLong(set.trim());
      if (millis > 0) {
        return millis;
      }
    } catch (NumberFormatException e) {
      // said below
    }
    throw new IllegalArgumentException(DISK_STALLED_PROPERTY + " must be a positive number of milliseconds, not '"
        + set + "'");
  }

  private final ClusterSpec spec;
  private final int self;
  private final io.netty.handler.ssl.SslContext tls;
  private final CompletableFuture<Connection>[] links;
  private final boolean[] inFlight;
  private final boolean[] lastOk;
  /** The store id each node last answered with (see {@code ClusterView.stores}). */
  private final String[] stores;
  private final long[] lastAnswerNanos;

  @SuppressWarnings("unchecked")
  /** The disk rule's limit, read once: the probe's callbacks must not meet a setting changed meanwhile. */
  private final long diskStalledMillis;

  LivenessProbe(ClusterSpec spec, int self, long diskStalledMillis) {
    this.spec = spec;
    this.self = self;
    this.diskStalledMillis = diskStalledMillis;
    this.tls = Tls.clientContext(spec);
    int n = spec.nodeCount();
    this.links = new CompletableFuture[n];
    this.inFlight = new boolean[n];
    this.lastOk = new boolean[n];
    this.lastAnswerNanos = new long[n];
    this.stores = new String[n];
    Arrays.fill(stores, "");
    forget();
  }

  /** Counts every node as having answered now: a new leader gives each node the full time. */
  synchronized void forget() {
    long now = System.nanoTime();
    Arrays.fill(lastAnswerNanos, now);
    Arrays.fill(lastOk, false);
  }

  /** Starts a probe of every other node that has none on its way. */
  synchronized void probeAll() {
    for (int node = 0; node < links.length; node++) {
      if (node != self && !inFlight[node]) {
        inFlight[node] = true;
        int n = node;
        link(node).thenCompose(c -> c.call(Request.newBuilder().setGetView(GetView.getDefaultInstance()), null,
                PROBE_TIMEOUT))
            .orTimeout(PROBE_TIMEOUT.toMillis() * 2, TimeUnit.MILLISECONDS)
            .whenComplete((answer, failure) -> {
              // a node that answers but cannot confirm its view with a majority refuses to serve:
              // for writers it is as silent as a dead one (a link cut one way)
              boolean serving = answer != null && serves(answer.header().getView(), diskStalledMillis);
              if (answer != null) {
                store(n, answer.header().getView().getStore());
                answer.release();
              }
              answered(n, failure == null && serving);
            });
      }
    }
  }

  /**
   * Whether an answer says its node serves: its view confirmed by a majority within the lease,
   * its workers not stalled for {@link #STALLED_MILLIS} (the answer comes from the node's
   * event loop, which still answers when every worker hangs), and its disk answering within
   * {@link #DISK_STALLED_MILLIS}.
   */
  static boolean serves(ViewAnswer a) {
    return serves(a, DISK_STALLED_MILLIS);
  }

  /** {@link #serves(ViewAnswer)} with a disk counting as not answering after {@code diskStalledMillis}. */
  static boolean serves(ViewAnswer a, long diskStalledMillis) {
    return a.getConfirmedMillisAgo() <= Membership.LEASE_MILLIS && a.getWorkersStalledMillis() < STALLED_MILLIS
        && a.getDiskStalledMillis() < diskStalledMillis;
  }

  private synchronized void store(int node, String id) {
    stores[node] = id;
  }

  /** The store id the node last answered with; empty before it answered. */
  synchronized String store(int node) {
    return stores[node];
  }

  private synchronized void answered(int node, boolean ok) {
    inFlight[node] = false;
    lastOk[node] = ok;
    if (ok) {
      lastAnswerNanos[node] = System.nanoTime();
    }
    // a link that failed or broke is opened afresh by the next probe (link()); one still
    // connecting is left to finish: on a loaded machine a handshake may take longer than a
    // probe's wait, and cutting it off each time would never let one through
  }

  private CompletableFuture<Connection> link(int node) {
    if (links[node] == null || links[node].isCompletedExceptionally()
        || links[node].isDone() && !links[node].join().isActive()) {
      links[node] = Connection.open(spec.node(node), spec.secret(), "node-" + self + "-membership",
          spec.partitionMap().layout(), tls, Pipelines.DEFAULT_MAX_FRAME, PROBE_TIMEOUT);
    }
    return links[node];
  }

  synchronized long silentMillis(int node) {
    return TimeUnit.NANOSECONDS.toMillis(System.nanoTime() - lastAnswerNanos[node]);
  }

  /** True when the node's last probe was answered. */
  synchronized boolean answered(int node) {
    return lastOk[node];
  }

  @Override
  public synchronized void close() {
    for (CompletableFuture<Connection> f : links) {
      if (f != null) {
        f.thenAccept(Connection::close);
      }
    }
  }
}
