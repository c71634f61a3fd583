package org.sss.client.cluster;

import java.io.BufferedInputStream;
import java.io.BufferedOutputStream;
import java.io.DataInputStream;
import java.io.DataOutputStream;
import java.io.EOFException;
import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Properties;
import java.util.function.Consumer;
import java.util.stream.Stream;
import org.sss.client.BulkWriter;
import org.sss.client.ScanOptions;
import org.sss.client.SssClient;
import org.sss.client.TableScan;
import org.sss.core.api.Pair;
import org.sss.core.cluster.ClusterSpec;
import org.sss.core.keys.PairTypes;
import org.sss.core.keys.StoredKeys;
import org.sss.core.proto.TableInfo;
import org.sss.core.proto.TableOptions;

/**
 * Gives a cluster of server processes on this machine ({@link LocalProcessCluster}) another
 * number of nodes or partitions, moving its data: a node's partitions, and the partition of every
 * key, follow from those two numbers, so changing either by editing the cluster file would hide
 * data (the nodes refuse to start on a layout their data was not written under).
 *
 * <h2>How</h2>
 * <ol>
 *   <li>Every table is read whole, through the client, into a staging directory beside the
 *       nodes ({@code DIR/resize-staging}), with its options; the exact count of each is kept.
 *   <li>The cluster stops (every table flushed), its node directories and cluster file move to
 *       {@code DIR/resize-old}, and a cluster of the new shape starts in {@code DIR} with the same
 *       secret, replication and heap.
 *   <li>Every table is created with its options and written back; each must count what it
 *       counted before.
 *   <li>Only then are the old directories and the staging removed. A failure before that puts
 *       the old cluster back as it was (the new one is stopped and removed) and says so.
 * </ol>
 * It needs free disk for a copy of the data, and every node up. Multi-valued tables keep every
 * value of each key (the copies get new uniquifiers, so values of a key may list in another order).
 */
public final class ClusterResize {
  private static final String STAGING = "resize-staging";
  private static final String OLD = "resize-old";

  private final Path dir;
  private final Consumer<String> progress;
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
    return new ClusterResize(dir, progress, c -> { }).run(nodes, partitions);
  }

  /** {@link #resize} with a step run before the tables are written back. */
  static LocalProcessCluster resize(Path dir, int nodes, int partitions, Consumer<String> progress,
                                    Consumer<LocalProcessCluster> beforeRestore) throws IOException {
    return new ClusterResize(dir, progress, beforeRestore).run(nodes, partitions);
  }

  private LocalProcessCluster run(int nodes, int partitions) throws IOException {
    LocalProcessCluster old = LocalProcessCluster.attach(dir);
    ClusterSpec was = old.spec();
    int n = nodes > 0 ? nodes : was.nodeCount();
    int p = partitions > 0 ? partitions : n * ClusterSpec.DEFAULT_PARTITIONS_PER_NODE;
    if (n == was.nodeCount() && p == was.partitionMap().partitions()) {
      throw new IllegalArgumentException(dir + " already has " + n + " nodes and " + p + " partitions");
    }
    if (was.tls()) {
      throw new IllegalArgumentException("resizing a cluster with TLS is not supported: its nodes' certificates"
          + " would have to be made for the new nodes");
    }
    if (was.replication() > n) {
      throw new IllegalArgumentException("the cluster keeps " + was.replication() + " copies of each partition;"
          + " " + n + " nodes cannot hold them");
    }
    for (Path leftover : List.of(dir.resolve(STAGING), dir.resolve(OLD))) {
      if (Files.exists(leftover)) {
        throw new IllegalArgumentException(leftover + " exists: an earlier resize did not finish; see what it"
            + " said, and move it away");
      }
    }
    String heap = rememberedHeap();
    Map<String, Staged> staged;
    try {
      staged = stage(was);
    } catch (IOException | RuntimeException e) {
      deleteTree(dir.resolve(STAGING));
      throw e;
    }
    progress.accept("stopping the cluster of " + was.nodeCount() + " nodes");
    List<String> stopped = old.stop();
    if (stopped.stream().anyMatch(line -> line.contains("NOT STOPPED"))) {
      deleteTree(dir.resolve(STAGING));
      throw new IllegalStateException("cannot stop every node, nothing was changed: " + String.join("; ", stopped));
    }
    Path oldDir = dir.resolve(OLD);
    Files.createDirectories(oldDir);
    for (int i = 0; i < was.nodeCount(); i++) {
      Files.move(dir.resolve("node-" + i), oldDir.resolve("node-" + i));
    }
    Files.move(dir.resolve("cluster.properties"), oldDir.resolve("cluster.properties"));
    LocalProcessCluster resized = null;
    try {
      resized = startResized(was, n, p, heap);
      beforeRestore.accept(resized);
      restore(resized, staged);
    } catch (IOException | RuntimeException e) {
      rollBack(resized, was, e);
      throw e;
    }
    deleteTree(oldDir);
    deleteTree(dir.resolve(STAGING));
    progress.accept("resized: " + n + " nodes, " + p + " partitions, " + staged.size() + " table(s)");
    return resized;
  }

  /** A table read into the staging directory: its options, its file and its exact count. */
  private record Staged(TableOptions options, Path file, long pairs) {}

  private Map<String, Staged> stage(ClusterSpec spec) throws IOException {
    Path staging = Files.createDirectories(dir.resolve(STAGING));
    Map<String, Staged> out = new LinkedHashMap<>();
    try (SssClient client = SssClient.connect(spec)) {
      client.ping();
      List<TableInfo> tables = client.listTables();
      for (TableInfo t : tables) {
        if (t.getName().startsWith("sss-")) {
          throw new IllegalStateException("a job is running (its table '" + t.getName() + "' exists): resize when"
              + " none runs; nothing was changed");
        }
        if (t.getMissingOnCount() > 0) {
          throw new IllegalStateException("table '" + t.getName() + "' is incomplete (missing on nodes "
              + t.getMissingOnList() + "): drop it first; nothing was changed");
        }
      }
      int i = 0;
      for (TableInfo t : tables) {
        Path file = staging.resolve("table-" + (i++) + ".pairs");
        long pairs = 0;
        boolean multi = t.getOptions().getMultiValued();
        try (DataOutputStream w = new DataOutputStream(new BufferedOutputStream(Files.newOutputStream(file), 1 << 16));
             TableScan scan = client.scan(t.getName(), ScanOptions.anyOrder())) {
          while (scan.hasNext()) {
            Pair pair = scan.next();
            write(w, StoredKeys.withoutUniquifier(pair.key(), multi));
            write(w, pair.value());
            pairs++;
          }
        }
        long counted = client.count(t.getName());
        if (counted != pairs) {
          throw new IllegalStateException("table '" + t.getName() + "' changed while it was read (" + pairs
              + " pairs read, " + counted + " counted): resize when nothing writes; nothing was changed");
        }
        out.put(t.getName(), new Staged(t.getOptions(), file, pairs));
        progress.accept("read " + t.getName() + ": " + pairs + " pairs");
      }
    }
    return out;
  }

  private LocalProcessCluster startResized(ClusterSpec was, int n, int p, String heap) throws IOException {
    ClusterSpec spec = LocalProcessCluster.newSpec(n, p, was.replication(), was.secret());
    spec.save(dir.resolve("cluster.properties"));
    progress.accept("starting " + n + " nodes with " + p + " partitions");
    return LocalProcessCluster.start(dir, 0, 0, 0, heap);
  }

  private void restore(LocalProcessCluster resized, Map<String, Staged> staged) throws IOException {
    try (SssClient client = SssClient.connect(resized.spec())) {
      for (Map.Entry<String, Staged> e : staged.entrySet()) {
        String table = e.getKey();
        Staged s = e.getValue();
        client.createTable(table, s.options().toBuilder().clearReplication().build(), false);
        try (DataInputStream r = new DataInputStream(new BufferedInputStream(Files.newInputStream(s.file()), 1 << 16));
             BulkWriter w = client.writer(table, PairTypes.of(s.options()))) {
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
        long counted = client.count(table);
        if (counted != s.pairs()) {
          throw new IllegalStateException("table '" + table + "' counts " + counted + " pairs after the resize, "
              + s.pairs() + " before");
        }
        progress.accept("wrote " + table + ": " + counted + " pairs");
      }
    }
  }

  /** Stops and removes the new cluster, and puts the old one back and starts it. */
  private void rollBack(LocalProcessCluster resized, ClusterSpec was, Exception cause) {
    try {
      if (resized != null) {
        resized.stop();
      } else if (Files.exists(dir.resolve("cluster.properties"))) {
        LocalProcessCluster.attach(dir).stop(); // a start that failed part way stops its own nodes; this is for certain
      }
      try (Stream<Path> files = Files.list(dir)) {
        for (Path f : files.toList()) {
          String name = f.getFileName().toString();
          if (name.startsWith("node-") || name.equals("cluster.properties")) {
            deleteTree(f);
          }
        }
      }
      Path oldDir = dir.resolve(OLD);
      for (int i = 0; i < was.nodeCount(); i++) {
        Files.move(oldDir.resolve("node-" + i), dir.resolve("node-" + i));
      }
      Files.move(oldDir.resolve("cluster.properties"), dir.resolve("cluster.properties"));
      deleteTree(oldDir);
      deleteTree(dir.resolve(STAGING));
      LocalProcessCluster.start(dir, 0, 0, 0, null);
      cause.addSuppressed(new IllegalStateException("the resize was undone: the old cluster runs again"));
    } catch (IOException | RuntimeException undo) {
      cause.addSuppressed(new IllegalStateException("the resize could not be undone (" + undo.getMessage() + "): the"
          + " old cluster's nodes and file are in " + dir.resolve(OLD) + ", its tables in " + dir.resolve(STAGING)));
    }
  }

  private String rememberedHeap() throws IOException {
    Path file = dir.resolve("node-0").resolve("launch.properties");
    if (!Files.exists(file)) {
      return null;
    }
    Properties p = new Properties();
    try (java.io.Reader r = Files.newBufferedReader(file, StandardCharsets.UTF_8)) {
      p.load(r);
    }
    return p.getProperty("heap");
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
      for (Path p : walk.sorted(java.util.Comparator.reverseOrder()).toList()) {
        Files.deleteIfExists(p);
      }
    } catch (IOException e) {
      throw new java.io.UncheckedIOException("cannot remove " + root, e);
    }
  }
}
