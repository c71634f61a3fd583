package org.sss.server.membership;

import java.time.Duration;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.TreeSet;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;
import org.sss.core.cluster.ClusterSpec;
import org.sss.core.cluster.InSyncCopies;
import org.sss.core.cluster.JobTables;
import org.sss.core.proto.ClusterView;
import org.sss.core.proto.GetView;
import org.sss.core.proto.ListTables;
import org.sss.core.proto.Request;
import org.sss.core.proto.Response;
import org.sss.core.proto.ScanNext;
import org.sss.core.proto.ScanOpen;
import org.sss.core.proto.TableInfo;
import org.sss.core.proto.TableOptions;
import org.sss.core.proto.ViewChange;
import org.sss.core.transport.Connection;
import org.sss.core.transport.Frame;
import org.sss.core.transport.Pipelines;
import org.sss.core.transport.Tls;
import org.sss.kvs.KeyRanges;
import org.sss.kvs.NodeStore;
import org.sss.kvs.RunFile;
import org.sss.kvs.StoreTable;

/**
 * How a node that is out of the in-sync copies gets back in: it empties its copies of every
 * replicated table, is decided <em>joining</em>, copies each partition it holds from a copy in
 * sync and up, and is decided up.
 *
 * <p>While it joins, writers send it every write (it is among their copies), so the copy only
 * has to bring what was written before: each source first reaches the joining epoch, after which
 * no write sent without this node is still being applied there ({@link Membership#awaitEpoch}),
 * and then scans a snapshot. A key written here since the node joined is newer than the
 * snapshot's, or as new, so the copy leaves it alone ({@link LiveWrites}). What is copied goes
 * into SST files of whole partitions, ingested as they are (see {@link #copyTable}), not through
 * the write path. Writes to
 * multi-valued tables are refused while a node joins: their copies store a value under keys of
 * their own making, so a value both copied and written live could not be told apart.
 *
 * <p>A node that stops while joining is decided out again and starts over.
 */
final class CatchUp implements AutoCloseable {
  private static final Logger LOG = LoggerFactory.getLogger(CatchUp.class);
  private static final int CHUNK_BYTES = 4 << 20;
  /** Bytes copied into one run file before it is ingested. */
  private static final long RUN_BYTES = 256L << 20;
  private static final Duration REQUEST_TIMEOUT = Duration.ofSeconds(60);

  private final ClusterSpec spec;
  private final int self;
  private final NodeStore store;
  private final Membership membership;
  private final InSyncCopies copies;
  private final AtomicBoolean running = new AtomicBoolean();
  private final LiveWrites live = new LiveWrites();
  private volatile Thread worker;

  CatchUp(ClusterSpec spec, int self, NodeStore store, Membership membership) {
    this.spec = spec;
    this.self = self;
    this.store = store;
    this.membership = membership;
    this.copies = new InSyncCopies(spec.placement());
  }

  boolean running() {
    return running.get();
  }

  /** Starts catching up on a thread of its own, unless it is under way. */
  void startIfIdle() {
    if (store == null || !running.compareAndSet(false, true)) {
      return;
    }
    Thread t = new Thread(this::run, "sss-node" + self + "-catch-up");
    t.setDaemon(true);
    worker = t;
    t.start();
  }

  /** Applies a live write while joining, recording its keys (see {@link LiveWrites}). */
  void applyLive(String table, List<byte[]> storedKeys, Runnable write) {
    live.apply(table, storedKeys, write);
  }

  private void run() {
    try {
      while (!membership.closed()) {
        ClusterView v = membership.view();
        try {
          if (v.getOutList().contains(self)) {
            long started = System.nanoTime();
            int tables = clear();
            membership.propose(ViewChange.newBuilder().setExpectEpoch(v.getEpoch()).setMarkJoining(self).build(),
                "node " + self + " emptied its copies of " + tables + " table(s) in "
                    + TimeUnit.NANOSECONDS.toMillis(System.nanoTime() - started) + " ms and catches up");
          } else if (v.getJoiningList().contains(self)) {
            long started = System.nanoTime();
            long pairs;
            try {
              pairs = copyAll(v);
            } catch (Exception e) {
              // what was copied may hide live writes (a run ingested, its write-back not done):
              // only emptying the copies again and starting over is sure to be right
              LOG.warn("node {}: catching up failed, starting over: {}", self, e.toString());
              ClusterView now = membership.view();
              if (now.getJoiningList().contains(self)) {
                membership.propose(ViewChange.newBuilder().setExpectEpoch(now.getEpoch()).setMarkOut(self).build(),
                    "node " + self + " failed to catch up (" + e.getMessage() + ") and starts over");
              }
              Thread.sleep(1_000);
              continue;
            }
            for (StoreTable t : replicatedTables()) {
              if (t.options().getDisableWal()) {
                t.flush(); // what was copied must survive a crash once the node counts as in sync
              }
            }
            ClusterView now = membership.view();
            if (now.getJoiningList().contains(self)) {
              membership.propose(ViewChange.newBuilder().setExpectEpoch(now.getEpoch()).setMarkUp(self).build(),
                  "node " + self + " copied " + pairs + " pair(s) in "
                      + TimeUnit.NANOSECONDS.toMillis(System.nanoTime() - started) + " ms and is in sync again");
            }
          } else {
            live.forgetAll();
            return; // in sync (or down: the leader decides)
          }
        } catch (Exception e) {
          LOG.warn("node {}: catching up failed, trying again: {}", self, e.toString());
          Thread.sleep(1_000);
        }
      }
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
    } finally {
      running.set(false);
    }
  }

  /**
   * Empties this node's copies of every replicated table, once no read or stage still reads them;
   * returns how many tables.
   */
  private int clear() {
    live.forgetAll();
    List<StoreTable> tables = replicatedTables();
    membership.emptyCopies(() -> {
      for (StoreTable t : tables) {
        for (int p : spec.placement().partitionsHeldBy(self)) {
          byte[][] range = KeyRanges.partition(p, new byte[0]);
          t.deleteRange(range[0], range[1]);
        }
      }
    });
    // out, it commits no job: their reservations would refuse the tables it makes again
    int jobs = store.abandonAllJobs();
    if (jobs > 0) {
      LOG.warn("node {}: gave up {} job(s) it held while it was out", self, jobs);
    }
    return tables.size();
  }

  private List<StoreTable> replicatedTables() {
    return store.tables().stream()
        .filter(t -> t.options().getReplication() > 1 && !JobTables.isJobTable(t.name()))
        .toList();
  }

  /** Copies every partition this node holds from a copy in sync and up; returns the pairs copied. */
  private long copyAll(ClusterView view) throws Exception {
    long pairs = 0;
    Map<Integer, Connection> links = new HashMap<>();
    try {
      Set<String> complete = syncTables(links, view);
      List<Integer> held = spec.placement().partitionsHeldBy(self); // ascending: a run file takes its keys in order
      for (StoreTable t : replicatedTables()) {
        if (complete.contains(t.name())) {
          pairs += copyTable(links, view, t, held);
        }
      }
    } finally {
      links.values().forEach(Connection::close);
    }
    return pairs;
  }

  /**
   * Copies a table's partitions into run files of about {@link #RUN_BYTES} each, in key order,
   * and ingests each whole: the copy bypasses the memtable, the WAL and the flushes and
   * compactions that writing the pairs one by one would cost.
   */
  private long copyTable(Map<Integer, Connection> links, ClusterView view, StoreTable t, List<Integer> held)
      throws Exception {
    long pairs = 0;
    int next = 0;
    while (next < held.size()) {
      Set<Integer> inRun = new HashSet<>();
      try (RunFile run = t.newRunFile()) {
        long bytes = 0;
        while (next < held.size() && bytes < RUN_BYTES) {
          int p = held.get(next++);
          inRun.add(p);
          bytes += copy(link(links, sourceOf(view, p)), t, p, view.getEpoch(), run);
        }
        pairs += run.pairs();
        live.ingestKeepingLive(t, run, inRun);
      }
    }
    return pairs;
  }

  private int sourceOf(ClusterView view, int partition) {
    for (int node : spec.placement().replicasOf(partition)) {
      if (node != self && InSyncCopies.serves(view, node)) {
        return node;
      }
    }
    throw new IllegalStateException("partition " + partition + " has no copy in sync and up to copy from");
  }

  private Connection link(Map<Integer, Connection> links, int node) throws Exception {
    Connection c = links.get(node);
    if (c == null || !c.isActive()) {
      c = Connection.open(spec.node(node), spec.secret(), "node-" + self + "-catch-up",
          spec.partitionMap().layout(), Tls.clientContext(spec),
          Pipelines.DEFAULT_MAX_FRAME, REQUEST_TIMEOUT).get(30, TimeUnit.SECONDS);
      links.put(node, c);
    }
    return c;
  }

  /**
   * Makes this node's replicated tables those of the nodes in sync: tables made while this node
   * was out (a job's output) are created, tables dropped or replaced meanwhile are dropped (and
   * made again with the others' options). Asked once each of those nodes is at the joining
   * epoch: a job that ran without this node commits only on the epoch it ran on, so none commits
   * after the lists. Returns the tables every node in sync holds alike, the ones to copy; a
   * table only some hold (a create, drop or commit that failed part way) is named, and this
   * node's emptied copy of it dropped: it is missing here as on some of the others.
   */
  private Set<String> syncTables(Map<Integer, Connection> links, ClusterView view) throws Exception {
    List<Map<String, TableOptions>> lists = new ArrayList<>();
    for (int node = 0; node < spec.nodeCount(); node++) {
      if (node != self && InSyncCopies.serves(view, node)) {
        lists.add(tablesOf(link(links, node), view.getEpoch()));
      }
    }
    if (lists.isEmpty()) {
      throw new IllegalStateException("no node in sync and up to copy the tables from");
    }
    Set<String> complete = new TreeSet<>();
    Set<String> anywhere = new TreeSet<>();
    for (Map<String, TableOptions> l : lists) {
      anywhere.addAll(l.keySet());
    }
    for (String name : anywhere) {
      TableOptions o = lists.get(0).get(name);
      if (o != null && lists.stream().allMatch(l -> o.equals(l.get(name)))) {
        complete.add(name);
      } else {
        LOG.warn("node {}: table '{}' is not alike on every node in sync; it is not copied (drop it)", self, name);
      }
    }
    for (StoreTable t : replicatedTables()) {
      TableOptions o = complete.contains(t.name()) ? lists.get(0).get(t.name()) : null;
      // a table the others do not all hold alike is dropped here too: this node emptied its copy
      // when it came back, and serving that empty copy would answer "absent" for every key
      if (o == null || !o.equals(t.options())) {
        store.drop(t.name(), true);
        live.forget(t.name()); // its keys written live went to the table dropped
        LOG.warn("node {}: dropped table '{}', {} while it was out", self, t.name(),
            !anywhere.contains(t.name()) ? "dropped" : o == null ? "left unlike on the nodes in sync" : "replaced");
      }
    }
    for (String name : complete) {
      if (store.table(name).isEmpty()) {
        store.create(name, lists.get(0).get(name), true);
        LOG.warn("node {}: created table '{}', made while it was out", self, name);
      }
    }
    return complete;
  }

  /** The replicated tables of a node, once it is at membership epoch {@code epoch}. */
  private static Map<String, TableOptions> tablesOf(Connection source, long epoch) throws Exception {
    long end = System.nanoTime() + TimeUnit.SECONDS.toNanos(30);
    while (true) {
      Frame<Response> v = source.call(Request.newBuilder().setGetView(GetView.getDefaultInstance()))
          .get(30, TimeUnit.SECONDS);
      long at = v.header().getView().getView().getEpoch();
      // a node that does not serve (its store not the one recorded: an empty one) has no tables to go by
      boolean serving = v.header().getView().getServing();
      v.release();
      if (at >= epoch && serving) {
        break;
      }
      if (System.nanoTime() > end) {
        throw new IllegalStateException("a node to copy from " + (serving ? "stays at membership epoch " + at + " < "
            + epoch : "does not serve"));
      }
      Thread.sleep(100);
    }
    Frame<Response> r = source.call(Request.newBuilder().setListTables(ListTables.getDefaultInstance()))
        .get(60, TimeUnit.SECONDS);
    Map<String, TableOptions> theirs = new HashMap<>();
    try {
      for (TableInfo t : r.header().getTables().getTablesList()) {
        if (t.getOptions().getReplication() > 1 && !JobTables.isJobTable(t.getName())) {
          theirs.put(t.getName(), t.getOptions());
        }
      }
    } finally {
      r.release();
    }
    return theirs;
  }

  /** Copies a partition into {@code run}; returns the bytes copied. */
  private long copy(Connection c, StoreTable t, int partition, long epoch, RunFile run) throws Exception {
    Frame<Response> r = c.call(Request.newBuilder().setScanOpen(ScanOpen.newBuilder().setTable(t.name())
        .addPartitions(partition).setStandIn(true).setChunkBytes(CHUNK_BYTES).setMinViewEpoch(epoch))).get();
    long bytes = 0;
    while (true) {
      long cursor;
      boolean done;
      try {
        bytes += live.addCopied(t, r.body(), run);
        cursor = r.header().getScan().getCursor();
        done = r.header().getScan().getDone() || cursor == 0;
      } finally {
        r.release();
      }
      if (done) {
        return bytes;
      }
      r = c.call(Request.newBuilder().setScanNext(ScanNext.newBuilder().setCursor(cursor))).get();
    }
  }

  @Override
  public void close() {
    Thread t = worker;
    if (t != null) {
      t.interrupt();
    }
  }
}
