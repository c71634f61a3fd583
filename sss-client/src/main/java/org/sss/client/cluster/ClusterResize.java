package org.sss.client.cluster;

import java.io.BufferedInputStream;
import java.io.BufferedOutputStream;
import java.io.DataInputStream;
import java.io.DataOutputStream;
import java.io.EOFException;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardCopyOption;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.HashSet;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.function.Consumer;
import java.util.stream.Stream;
import org.sss.client.BulkWriter;
import org.sss.client.MembershipView;
import org.sss.client.ScanOptions;
import org.sss.client.SssClient;
import org.sss.core.transport.SssException;
import org.sss.client.TableScan;
import org.sss.client.TableSpec;
import org.sss.client.TableStatus;
import org.sss.core.api.Pair;
import org.sss.core.cluster.ClusterSpec;
import org.sss.core.cluster.JobTables;
import org.sss.core.cluster.PartitionMap;
import org.sss.core.cluster.Rebalancing;
import org.sss.core.cluster.RelayoutRequest;
import org.sss.core.cluster.ReplicaPlacement;
import org.sss.core.keys.StoredKeys;
import org.sss.core.proto.ErrorCode;
import org.sss.core.transport.Auth;

/**
 * Gives a cluster of server processes on this machine ({@link LocalProcessCluster}) another
 * number of nodes or partitions, moving its data: a node's partitions, and the partition of every
 * key, follow from those two numbers, so changing either by editing the cluster file would hide
 * data (the nodes refuse to start on a layout their data was not written under).
 *
 * <h2>How</h2>
 * <ol>
 *   <li>The new shape is checked (partitions, the machine's memory) and every node must answer.
 *   <li><b>Staging.</b> The cluster stops (every table flushed) and starts again on ports and a
 *       secret of its own, which no client knows: nothing can write while it is read. Every table
 *       is read whole into {@code DIR/resize-staging}, with its options and exact count; then it
 *       stops.
 *   <li><b>Switched.</b> Its node directories and cluster file move to {@code DIR/resize-old}; a
 *       cluster of the new shape starts in {@code DIR} (the same secret, replication and heap);
 *       every table is created and written back, and must count what it counted before.
 *   <li><b>Done.</b> The new cluster stops (flushing every table, so that a table without a WAL
 *       is on disk before the old copy goes) and starts again; the old directories and the
 *       staging are removed.
 * </ol>
 * Each step is written to {@code DIR/resize.journal} before it begins. A failure, or Ctrl-C,
 * before the end puts the old cluster back and says so; if the resizing process itself dies,
 * the journal stays: {@code cluster start} refuses the directory, naming
 * {@code cluster resize --dir DIR --undo}, which puts the old cluster back (or, when the new one
 * was complete, finishes the clean-up). It needs free disk for one more copy of the data.
 * Multi-valued tables keep every value of each key (the copies get new uniquifiers, so the values
 * of a key may list in another order).
 */
public final class ClusterResize {
  static final String STAGING = "resize-staging";
  static final String OLD = "resize-old";
  static final String JOURNAL = "resize.journal";
  /** In the staging directory: the files of the clusters no client knows, old shape and new. */
  static final String HIDDEN_OLD = "old-cluster.properties";
  static final String HIDDEN_NEW = "new-cluster.properties";

  /** In the staging directory: which file holds which table, for an undo by another process. */
  static final String MANIFEST = "tables.properties";

  /**
   * STAGING: nothing changed yet. SWITCHED: the new shape may run. DONE: the new cluster is
   * complete and named by the cluster file. PUT_BACK: a rebalance was undone, every moved
   * partition is back under the old layout; only leftovers remain to remove.
   */
  private enum Phase { STAGING, SWITCHED, DONE, PUT_BACK }

  /** Where a resize stands, as its journal says: its phase, and whether it moves partitions. */
  private record Journal(Phase phase, boolean moves) {}

  private final Path dir;
  /**
   * Whether the partition count stays and only the partitions whose copies change move
   * ({@link Rebalancing}), rather than every table being read and written whole.
   */
  private boolean moves;
  private final Consumer<String> progress;
  /** Set when Ctrl-C put the old cluster back: the resizing thread must take no further step. */
  private volatile boolean aborted;
  /** Runs once the new cluster is up, before any table is written back (tests fail the resize there). */
  private final Consumer<LocalProcessCluster> beforeRestore;

  private ClusterResize(Path dir, Consumer<String> progress, Consumer<LocalProcessCluster> beforeRestore) {
    this.dir = dir;
    this.progress = progress;
    this.beforeRestore = beforeRestore;
  }

  /**
   * Resizes the running cluster in {@code dir} to {@code nodes} nodes (0: as many as now) and
   * {@code partitions} partitions (0: 8 per node); {@code progress} hears a line per step.
   *
   * @return the cluster of the new shape, running
   */
  public static LocalProcessCluster resize(Path dir, int nodes, int partitions, Consumer<String> progress)
      throws IOException {
    return resize(dir, nodes, partitions, progress, c -> { });
  }

  /** {@link #resize} with a step run before the tables are written back. */
  static LocalProcessCluster resize(Path dir, int nodes, int partitions, Consumer<String> progress,
                                    Consumer<LocalProcessCluster> beforeRestore) throws IOException {
    try (ResizeLock held = ResizeLock.take(dir)) {
      return new ClusterResize(dir, progress, beforeRestore).run(nodes, partitions);
    }
  }

  /**
   * Ends a resize whose process died, from its journal: puts the old cluster back and starts it,
   * or, when the new cluster was complete, removes what the old one left. Returns what it did.
   */
  public static String undo(Path dir, Consumer<String> progress) throws IOException {
    try (ResizeLock held = ResizeLock.take(dir)) {
      return undoHeld(dir, progress);
    }
  }

  private static String undoHeld(Path dir, Consumer<String> progress) throws IOException {
    Journal journal = readJournal(dir);
    if (journal == null) {
      throw new IllegalArgumentException(dir + " has no unfinished resize (no " + JOURNAL + ")");
    }
    Phase phase = journal.phase();
    ClusterResize r = new ClusterResize(dir, progress, c -> { });
    r.moves = journal.moves();
    if (phase == Phase.DONE) {
      r.finish();
      return "the resize had finished: its leftovers are removed; the new cluster stays";
    }
    if (phase == Phase.PUT_BACK) {
      r.leftoversOfPutBack();
      return "the old cluster is back, running";
    }
    ClusterSpec old = ClusterSpec.load(dir.resolve(OLD).resolve("cluster.properties"));
    r.putBack(old);
    return "the old cluster is back, running";
  }

  /** Refuses to start a cluster whose resize did not finish. */
  static void refuseUnfinished(Path dir) {
    if (Files.exists(dir.resolve(JOURNAL))) {
      throw new IllegalStateException(dir + ": a resize of this cluster did not finish (" + dir.resolve(JOURNAL)
          + "); bin/sss cluster resize --dir " + dir + " --undo puts the old cluster back, or completes a"
          + " resize that had finished");
    }
  }

  private LocalProcessCluster run(int nodes, int partitions) throws IOException {
    refuseUnfinished(dir);
    for (Path leftover : List.of(dir.resolve(STAGING), dir.resolve(OLD))) {
      if (Files.exists(leftover)) {
        throw new IllegalArgumentException(leftover + " exists: it is not this tool's to remove; move it elsewhere");
      }
    }
    LocalProcessCluster old = LocalProcessCluster.attach(dir);
    ClusterSpec was = old.spec();
    int n = nodes > 0 ? nodes : was.nodeCount();
    int p = partitions > 0 ? partitions : was.partitionMap().partitions();
    if (n == was.nodeCount() && p == was.partitionMap().partitions()) {
      throw new IllegalArgumentException(dir + " already has " + n + " nodes and " + p + " partitions");
    }
    moves = p == was.partitionMap().partitions();
    if (was.tls()) {
      throw new IllegalArgumentException("resizing a cluster with TLS is not supported: its nodes' certificates"
          + " would have to be made for the new nodes");
    }
    if (was.replication() > n) {
      throw new IllegalArgumentException("the cluster keeps " + was.replication() + " copies of each partition;"
          + " " + n + " nodes cannot hold them");
    }
    PartitionMap.roundRobin(p, n); // refuses a shape it cannot map, before anything changes
    List<Integer> moved = moves ? Rebalancing.moved(was.placement(), target(was, n, was.secret()).placement()) : null;
    String heap = rememberedHeap();
    String eachHeap = heap == null ? LocalProcessCluster.DEFAULT_HEAP : heap;
    String warning = MachineLimits.checkProcesses(n, MachineLimits.bytesOf(eachHeap), eachHeap);
    if (warning != null) {
      progress.accept(warning);
    }
    try (SssClient client = SssClient.connect(was)) {
      client.ping();
      checkInSync(client.view());
      for (int i = 0; i < was.nodeCount() && was.replication() > 1; i++) {
        MembershipView own = client.view(i);
        if (!own.serving()) {
          throw new IllegalStateException("node " + i + " does not serve (its store not yet the one the members"
              + " recorded, or its view unconfirmed): resize once it does; nothing was changed");
        }
      }
      List<TableStatus> tables = client.listTables(); // every node serves: its list is what it holds
      checkTables(tables);
      if (moves) {
        checkMovable(tables, was);
      }
    }

    Files.createDirectories(dir.resolve(OLD));
    Files.copy(dir.resolve("cluster.properties"), dir.resolve(OLD).resolve("cluster.properties"));
    writeJournal(Phase.STAGING);
    Thread onInterrupt = new Thread(() -> {
      System.err.println("resize interrupted: putting the old cluster back");
      try {
        aborted = true; // the resizing thread takes no further step
        putBack(was);
        System.err.println("the old cluster is back, running");
      } catch (IOException | RuntimeException e) {
        System.err.println("could not put the old cluster back (" + e.getMessage() + "): run bin/sss cluster resize"
            + " --dir " + dir + " --undo");
      }
    }, "sss-resize-undo");
    Runtime.getRuntime().addShutdownHook(onInterrupt);
    LocalProcessCluster resized;
    try {
      Map<String, Staged> staged = stage(old, was, moved);
      if (moves) {
        ClusterSpec next = target(was, n, Auth.randomSecret());
        next.save(dir.resolve(STAGING).resolve(HIDDEN_NEW));
        synchronized (this) {
          checkNotAborted();
          writeJournal(Phase.SWITCHED);
          // the nodes that stay take the new layout when they start: emptied where their copies moved
          for (int i = 0; i < Math.min(n, was.nodeCount()); i++) {
            new RelayoutRequest(was.partitionMap().layout(), next.partitionMap().layout(), moved).write(dataDir(i));
          }
        }
        progress.accept("starting " + n + " nodes; moving " + moved.size() + " of " + p + " partitions");
        resized = LocalProcessCluster.startFrom(dir, dir.resolve(STAGING).resolve(HIDDEN_NEW), heap);
      } else {
        synchronized (this) {
          checkNotAborted();
          writeJournal(Phase.SWITCHED);
          Path oldDir = dir.resolve(OLD);
          for (int i = 0; i < was.nodeCount(); i++) {
            Files.move(dir.resolve("node-" + i), oldDir.resolve("node-" + i));
          }
        }
        resized = startResized(was, n, p, heap);
      }
      beforeRestore.accept(resized);
      restore(resized, staged, moved);
      resized = publish(resized, was);
    } catch (IOException | RuntimeException | Error e) {
      String outcome;
      try {
        Phase reached = putBack(was);
        outcome = reached == Phase.DONE
            ? "resized, but the new cluster did not start in time: run bin/sss cluster start --dir " + dir
            : "resize undone, the old cluster runs again as it was";
      } catch (IOException | RuntimeException undo) {
        outcome = "resize NOT undone (" + undo.getMessage().lines().findFirst().orElse("") + "): run bin/sss cluster"
            + " resize --dir " + dir + " --undo";
      }
      removeHook(onInterrupt);
      String cause = e.getMessage() == null ? e.toString() : e.getMessage();
      throw new IllegalStateException(outcome + "; it failed: " + cause, e);
    }
    removeHook(onInterrupt);
    finish();
    progress.accept("resized: " + n + " nodes, " + p + " partitions" + (moves ? " (" + moved.size()
        + " partitions moved)" : ""));
    return resized;
  }

  private void checkNotAborted() {
    if (aborted) {
      throw new IllegalStateException("interrupted: the old cluster was put back");
    }
  }

  private static void removeHook(Thread hook) {
    try {
      Runtime.getRuntime().removeShutdownHook(hook);
    } catch (IllegalStateException shuttingDown) {
      // the hook runs
    }
  }

  private static void checkTables(List<TableStatus> tables) {
    for (TableStatus t : tables) {
      if (t.name().startsWith(JobTables.PREFIX)) {
        throw new IllegalStateException("a job is running (its table '" + t.name() + "' exists): resize when"
            + " none runs; nothing was changed");
      }
      if (!t.missingOn().isEmpty()) {
        throw new IllegalStateException("table '" + t.name() + "' is incomplete (missing on nodes "
            + t.missingOn() + "): drop it first; nothing was changed");
      }
    }
  }

  /**
   * Refuses a move of partitions the cluster is not ready for: a table keeping fewer copies than
   * the cluster (a job's kept intermediate, on its partitions' leaders alone, which a change of
   * leader alone would lose).
   */
  private static void checkMovable(List<TableStatus> tables, ClusterSpec was) {
    for (TableStatus t : tables) {
      if (Math.max(1, t.spec().replication()) != was.replication()) {
        throw new IllegalStateException("table '" + t.name() + "' keeps " + t.spec().replication() + " copy(ies),"
            + " the cluster " + was.replication() + ": drop it first (a job's kept intermediate); nothing was changed");
      }
    }
  }

  /**
   * Refuses a cluster whose nodes are not all in sync: the resize reads one copy of each
   * partition, and the nodes it starts decide their membership afresh (every node in sync), so a
   * node out or catching up would be taken as whole.
   */
  private static void checkInSync(MembershipView view) {
    if (view.replicated() && !view.whole()) {
      throw new IllegalStateException("not every node is in sync (down " + view.down() + ", out " + view.out()
          + ", catching up " + view.joining() + "): resize once they are; nothing was changed");
    }
  }

  /**
   * The cluster of {@code n} nodes the partitions move to: the old nodes where they were (their
   * host and rack labels kept), new ones labelled as {@code cluster start} labels them, on ports
   * of their own; its map is {@link Rebalancing#plan}'s.
   */
  private static ClusterSpec target(ClusterSpec was, int n, String secret) throws IOException {
    ClusterSpec fresh = LocalProcessCluster.newSpec(n, was.partitionMap().partitions(), was.replication(), secret);
    List<ReplicaPlacement.Location> locations = new ArrayList<>(fresh.locations());
    for (int i = 0; i < Math.min(n, was.nodeCount()); i++) {
      locations.set(i, was.locations().get(i));
    }
    PartitionMap map = Rebalancing.plan(was.placement(), n, locations);
    return new ClusterSpec(fresh.nodes(), map, secret, false, null, was.replication(), locations, fresh.raftPorts());
  }

  /** Each node's membership (Raft) storage roots, one per group the node ran in. */
  private Set<Path> membershipGroups(int nodes) throws IOException {
    Set<Path> out = new HashSet<>();
    for (int i = 0; i < nodes; i++) {
      Path root = dataDir(i).resolve("membership");
      if (Files.isDirectory(root)) {
        try (Stream<Path> groups = Files.list(root)) {
          groups.forEach(out::add);
        }
      }
    }
    return out;
  }

  /**
   * Removes the membership storage of the private run, made since {@code before}: a group of its
   * own (another secret), of no use once it stopped.
   */
  private void removeGroupsSince(Set<Path> before, int nodes) throws IOException {
    for (Path group : membershipGroups(nodes)) {
      if (!before.contains(group)) {
        deleteTree(group);
      }
    }
  }

  /**
   * Removes the membership (Raft) storage of nodes {@code 0..nodes-1}: after a private run under
   * a layout the cluster's own group never ran on (a fresh group once the nodes took it), so
   * nothing of the cluster's own is lost.
   */
  private void forgetMembership(int nodes) {
    for (int i = 0; i < nodes; i++) {
      deleteTree(dataDir(i).resolve("membership"));
    }
  }

  private Path dataDir(int node) {
    return dir.resolve("node-" + node).resolve("data");
  }

  /** A table read into the staging directory: its spec, its file and its exact count. */
  private record Staged(TableSpec spec, Path file, long pairs) {}

  /**
   * Stops the cluster, starts it again where no client can reach it (new ports and secret, the
   * same layout), reads every table into the staging directory and stops it.
   */
  private Map<String, Staged> stage(LocalProcessCluster old, ClusterSpec was, List<Integer> moved) throws IOException {
    progress.accept("stopping the cluster of " + was.nodeCount() + " nodes");
    stopOrFail(old);
    ClusterSpec fresh = LocalProcessCluster.newSpec(was.nodeCount(), was.partitionMap().partitions(),
        was.replication(), Auth.randomSecret());
    ClusterSpec hidden = new ClusterSpec(fresh.nodes(), was.partitionMap(), fresh.secret(), false, null,
        was.replication(), was.locations(), fresh.raftPorts());
    Files.createDirectories(dir.resolve(STAGING));
    // a file of its own, not DIR/cluster.properties: a client reading that one must not reach it
    hidden.save(dir.resolve(STAGING).resolve(HIDDEN_OLD));
    progress.accept(moved == null ? "reading every table, with the cluster on ports no client knows"
        : "reading the " + moved.size() + " partitions that move, with the cluster on ports no client knows");
    Set<Path> membershipBefore = membershipGroups(was.nodeCount());
    LocalProcessCluster quiet = LocalProcessCluster.startFrom(dir, dir.resolve(STAGING).resolve(HIDDEN_OLD), null);
    Path staging = Files.createDirectories(dir.resolve(STAGING));
    Map<String, Staged> out = new LinkedHashMap<>();
    try (SssClient client = SssClient.connect(hidden)) {
      List<TableStatus> tables = client.listTables();
      checkTables(tables);
      if (moved != null) {
        checkMovable(tables, was); // again: a job may have kept an intermediate since the first check
      }
      int i = 0;
      for (TableStatus t : tables) {
        Path file = staging.resolve("table-" + (i++) + ".pairs");
        if (moved != null && moved.isEmpty()) {
          out.put(t.name(), new Staged(t.spec(), file, 0)); // nothing moves
          Files.createFile(file);
          continue;
        }
        long pairs = 0;
        boolean multi = t.spec().multiValued();
        ScanOptions which = moved == null ? ScanOptions.anyOrder() : ScanOptions.anyOrder().inPartitions(moved);
        try (DataOutputStream w = new DataOutputStream(new BufferedOutputStream(Files.newOutputStream(file), 1 << 16));
             TableScan scan = client.scan(t.name(), which)) {
          while (scan.hasNext()) {
            Pair pair = scan.next();
            write(w, StoredKeys.withoutUniquifier(pair.key(), multi));
            write(w, pair.value());
            pairs++;
          }
        }
        long counted = moved == null ? client.count(t.name()) : client.count(t.name(), moved);
        if (counted != pairs) {
          throw new IllegalStateException("table '" + t.name() + "': " + pairs + " pairs read, " + counted
              + " counted");
        }
        out.put(t.name(), new Staged(t.spec(), file, pairs));
        progress.accept("read " + t.name() + ": " + pairs + " pairs");
      }
      writeManifest(out);
    } finally {
      stopOrFail(quiet);
      removeGroupsSince(membershipBefore, was.nodeCount());
    }
    return out;
  }

  private static void stopOrFail(LocalProcessCluster cluster) {
    List<String> report = cluster.stop();
    List<String> failed = report.stream().filter(line -> line.contains("NOT STOPPED")).toList();
    if (!failed.isEmpty()) {
      throw new IllegalStateException("cannot stop every node: " + String.join("; ", failed));
    }
  }

  /** Starts the new shape from a private file (a secret of its own): no client can reach it yet. */
  private LocalProcessCluster startResized(ClusterSpec was, int n, int p, String heap) throws IOException {
    ClusterSpec spec = LocalProcessCluster.newSpec(n, p, was.replication(), Auth.randomSecret());
    Path file = dir.resolve(STAGING).resolve(HIDDEN_NEW);
    spec.save(file);
    progress.accept("starting " + n + " nodes with " + p + " partitions");
    return LocalProcessCluster.startFrom(dir, file, heap);
  }

  /**
   * Stops the new cluster (every table flushed, those without a WAL too) and starts it again
   * from DIR/cluster.properties with the cluster's own secret: from here on clients reach it.
   */
  private LocalProcessCluster publish(LocalProcessCluster hidden, ClusterSpec was) throws IOException {
    progress.accept("flushing the new cluster and opening it to clients");
    stopOrFail(hidden);
    ClusterSpec h = hidden.spec();
    ClusterSpec open = new ClusterSpec(h.nodes(), h.partitionMap(), was.secret(), false, null, h.replication(),
        h.locations(), h.raftPorts());
    synchronized (this) {
      checkNotAborted(); // a put-back under way (Ctrl-C) owns the node directories from here on
      forgetMembership(h.nodeCount()); // the private run's group; the cluster's own starts afresh
      // the file first: a put-back copies the old one back, and once DONE says the new cluster
      // stays, the file must already name it (finish() removes the nodes it does not name)
      open.save(dir.resolve("cluster.properties"));
      writeJournal(Phase.DONE); // from here on, --undo keeps the new cluster
    }
    return LocalProcessCluster.start(dir, 0, 0, 0, null, true);
  }

  /**
   * Writes the staged pairs into the cluster: every table whole into a new cluster, or, when
   * partitions move ({@code moved} not null), the moved partitions into tables that every node
   * that stayed still holds (new nodes get them first).
   */
  private void restore(LocalProcessCluster resized, Map<String, Staged> staged, List<Integer> moved)
      throws IOException {
    try (SssClient client = SssClient.connect(resized.spec())) {
      for (Map.Entry<String, Staged> e : staged.entrySet()) {
        String table = e.getKey();
        Staged s = e.getValue();
        try {
          client.createTable(table, s.spec().replication(0), false); // with moves: made on the nodes without it
        } catch (SssException exists) {
          if (moved == null || exists.code() != ErrorCode.TABLE_EXISTS) {
            throw exists;
          }
        }
        try (DataInputStream r = new DataInputStream(new BufferedInputStream(Files.newInputStream(s.file()), 1 << 16));
             BulkWriter w = client.writer(table, s.spec().types())) {
          while (true) {
            byte[] key;
            try {
              key = read(r);
            } catch (EOFException end) {
              break;
            }
            w.put(key, read(r));
          }
        }
        long counted = moved == null ? client.count(table) : moved.isEmpty() ? 0 : client.count(table, moved);
        if (counted != s.pairs()) {
          throw new IllegalStateException("table '" + table + "' counts " + counted + " pairs"
              + (moved == null ? "" : " in the partitions moved") + " after the resize, " + s.pairs() + " before");
        }
        progress.accept("wrote " + table + ": " + counted + " pairs");
      }
    }
  }

  /**
   * Stops whatever runs in the directory and puts the old cluster back as the journal's phase
   * left it: its node directories (when they had moved) and its cluster file; then starts it.
   * The phase is read here, under the lock: a put-back by Ctrl-C's hook may have ended while
   * this caller waited for the lock, and must not be done again; returns the phase it acted on.
   */
  private synchronized Phase putBack(ClusterSpec was) throws IOException {
    Phase phase = phaseOf(readJournal(dir));
    if (phase == null) {
      return null; // put back already
    }
    putBackFrom(was, phase);
    return phase;
  }

  private void putBackFrom(ClusterSpec was, Phase phase) throws IOException {
    if (phase == Phase.DONE) {
      finish(); // the new cluster was complete and open to clients: it stays
      return;
    }
    if (phase == Phase.PUT_BACK) {
      leftoversOfPutBack();
      return;
    }
    // whatever runs here, from whichever file it was started: the staging cluster, the new one
    for (Path file : List.of(dir.resolve(STAGING).resolve(HIDDEN_NEW), dir.resolve(STAGING).resolve(HIDDEN_OLD),
        dir.resolve("cluster.properties"))) {
      if (Files.exists(file)) {
        stopOrFail(LocalProcessCluster.attach(dir, file));
      }
    }
    Path oldDir = dir.resolve(OLD);
    if (phase == Phase.SWITCHED && moves) {
      moveBack(was);
      return;
    }
    if (phase != Phase.STAGING) {
      try (Stream<Path> files = Files.list(dir)) {
        for (Path f : files.toList()) {
          String name = f.getFileName().toString();
          if (name.matches("node-[0-9]+")
              && (Files.exists(oldDir.resolve(name)) || Integer.parseInt(name.substring(5)) >= was.nodeCount())) {
            deleteTree(f); // a node of the new shape
          }
        }
      }
      for (int i = 0; i < was.nodeCount(); i++) {
        if (Files.exists(oldDir.resolve("node-" + i))) {
          Files.move(oldDir.resolve("node-" + i), dir.resolve("node-" + i));
        }
      }
    }
    Files.copy(oldDir.resolve("cluster.properties"), dir.resolve("cluster.properties"),
        StandardCopyOption.REPLACE_EXISTING);
    LocalProcessCluster.start(dir, 0, 0, 0, null, true); // points the nodes at DIR/cluster.properties again
    deleteTree(dir.resolve(STAGING));
    deleteTree(oldDir);
    Files.deleteIfExists(dir.resolve(JOURNAL)); // last: until the old cluster runs, --undo can try again
  }

  /**
   * Puts back a cluster whose partitions had begun to move: the nodes of the new shape go, every
   * old node takes the old layout again (emptying the partitions that moved) and the staged pairs
   * of those partitions are written back, with the cluster on ports no client knows; then it
   * starts from its own file.
   */
  private void moveBack(ClusterSpec was) throws IOException {
    ClusterSpec hiddenNew = ClusterSpec.load(dir.resolve(STAGING).resolve(HIDDEN_NEW));
    ClusterSpec hiddenOld = ClusterSpec.load(dir.resolve(STAGING).resolve(HIDDEN_OLD));
    List<Integer> moved = Rebalancing.moved(was.placement(), hiddenNew.placement());
    deleteNodesFrom(was.nodeCount());
    for (int i = 0; i < was.nodeCount(); i++) {
      new RelayoutRequest(hiddenNew.partitionMap().layout(), was.partitionMap().layout(), moved).write(dataDir(i));
    }
    progress.accept("putting the " + moved.size() + " moved partitions back");
    LocalProcessCluster quiet = LocalProcessCluster.startFrom(dir, dir.resolve(STAGING).resolve(HIDDEN_OLD), null);
    try {
      Map<String, Staged> staged = readManifest(hiddenOld);
      restore(quiet, staged, moved);
    } finally {
      stopOrFail(quiet);
    }
    forgetMembership(was.nodeCount()); // the quiet run's group; the old layout's own was emptied by the relayout
    Files.copy(dir.resolve(OLD).resolve("cluster.properties"), dir.resolve("cluster.properties"),
        StandardCopyOption.REPLACE_EXISTING);
    writeJournal(Phase.PUT_BACK); // the staged pairs are no longer needed: an undo from here only cleans up
    leftoversOfPutBack();
  }

  /** After a rebalance was put back: removes the staging and the journal, then starts the old cluster. */
  private void leftoversOfPutBack() throws IOException {
    Files.copy(dir.resolve(OLD).resolve("cluster.properties"), dir.resolve("cluster.properties"),
        StandardCopyOption.REPLACE_EXISTING);
    deleteTree(dir.resolve(STAGING));
    LocalProcessCluster.start(dir, 0, 0, 0, null, true); // a start that fails leaves the journal: undo again
    Files.deleteIfExists(dir.resolve(JOURNAL)); // before the old file goes: an undo could no longer find it
    deleteTree(dir.resolve(OLD));
  }

  /** Removes the directories of nodes numbered {@code first} and up: nodes no cluster file names any more. */
  private void deleteNodesFrom(int first) throws IOException {
    try (Stream<Path> files = Files.list(dir)) {
      for (Path f : files.toList()) {
        String name = f.getFileName().toString();
        if (name.matches("node-[0-9]{1,6}") && Integer.parseInt(name.substring(5)) >= first) {
          deleteTree(f);
        }
      }
    }
  }

  /** Records which staging file holds which table, and its count: an undo by another process reads it. */
  private void writeManifest(Map<String, Staged> staged) throws IOException {
    java.util.Properties p = new java.util.Properties();
    int i = 0;
    for (Map.Entry<String, Staged> e : staged.entrySet()) {
      p.setProperty("table." + i + ".name", e.getKey());
      p.setProperty("table." + i + ".file", e.getValue().file().getFileName().toString());
      p.setProperty("table." + i + ".pairs", Long.toString(e.getValue().pairs()));
      i++;
    }
    try (var w = Files.newBufferedWriter(dir.resolve(STAGING).resolve(MANIFEST), StandardCharsets.UTF_8)) {
      p.store(w, "the tables a resize read");
    }
  }

  /** The staged tables, as {@link #writeManifest} recorded them, with the specs the cluster of {@code spec} holds. */
  private Map<String, Staged> readManifest(ClusterSpec spec) throws IOException {
    java.util.Properties p = new java.util.Properties();
    try (var r = Files.newBufferedReader(dir.resolve(STAGING).resolve(MANIFEST), StandardCharsets.UTF_8)) {
      p.load(r);
    }
    Map<String, TableSpec> specs = new java.util.HashMap<>();
    try (SssClient client = SssClient.connect(spec)) {
      client.listTables().forEach(t -> specs.put(t.name(), t.spec()));
    }
    Map<String, Staged> out = new LinkedHashMap<>();
    for (int i = 0; p.containsKey("table." + i + ".name"); i++) {
      String name = p.getProperty("table." + i + ".name");
      TableSpec tableSpec = specs.get(name);
      if (tableSpec == null) {
        throw new IllegalStateException("table '" + name + "' was staged but no node holds it");
      }
      out.put(name, new Staged(tableSpec, dir.resolve(STAGING).resolve(p.getProperty("table." + i + ".file")),
          Long.parseLong(p.getProperty("table." + i + ".pairs"))));
    }
    return out;
  }

  /** Removes what the old cluster and the staging left, once the new cluster is complete and on disk. */
  private void finish() throws IOException {
    deleteNodesFrom(ClusterSpec.load(dir.resolve("cluster.properties")).nodeCount()); // nodes removed for good
    deleteTree(dir.resolve(OLD));
    deleteTree(dir.resolve(STAGING));
    Files.deleteIfExists(dir.resolve(JOURNAL));
  }

  private void writeJournal(Phase phase) throws IOException {
    String text = "# a resize of this cluster is under way; if this file outlives it, run\n"
        + "#   bin/sss cluster resize --dir " + dir + " --undo\n"
        + "phase=" + phase.name() + "\n"
        + "moves=" + moves + "\n";
    Path tmp = dir.resolve(JOURNAL + ".tmp");
    Files.writeString(tmp, text, StandardCharsets.UTF_8);
    Files.move(tmp, dir.resolve(JOURNAL), StandardCopyOption.REPLACE_EXISTING, StandardCopyOption.ATOMIC_MOVE);
  }

  private static Journal readJournal(Path dir) throws IOException {
    Path file = dir.resolve(JOURNAL);
    if (!Files.exists(file)) {
      return null;
    }
    Phase phase = null;
    boolean moves = false;
    for (String line : Files.readAllLines(file, StandardCharsets.UTF_8)) {
      if (line.startsWith("phase=")) {
        phase = Phase.valueOf(line.substring("phase=".length()).trim());
      } else if (line.startsWith("moves=")) {
        moves = Boolean.parseBoolean(line.substring("moves=".length()).trim());
      }
    }
    if (phase == null) {
      throw new IllegalStateException(file + " names no phase");
    }
    return new Journal(phase, moves);
  }

  private static Phase phaseOf(Journal journal) {
    return journal == null ? null : journal.phase();
  }

  /** The heap node 0 last started with, for the new nodes; null when none was recorded. */
  private String rememberedHeap() throws IOException {
    return LocalProcessCluster.launchSettings(dir.resolve("node-0")).getProperty("heap");
  }

  private static void write(DataOutputStream w, byte[] bytes) throws IOException {
    w.writeInt(bytes.length);
    w.write(bytes);
  }

  private static byte[] read(DataInputStream r) throws IOException {
    byte[] b = new byte[r.readInt()];
    r.readFully(b);
    return b;
  }

  private static void deleteTree(Path root) {
    if (!Files.exists(root)) {
      return;
    }
    try (Stream<Path> walk = Files.walk(root)) {
      for (Path p : walk.sorted(Comparator.reverseOrder()).toList()) {
        Files.deleteIfExists(p);
      }
    } catch (IOException e) {
      throw new UncheckedIOException("cannot remove " + root, e);
    }
  }
}
