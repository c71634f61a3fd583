package org.sss.server.store;

import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.Comparator;
import java.util.HashSet;
import java.util.Optional;
import java.util.Set;
import java.util.stream.Stream;
import org.sss.core.cluster.ClusterSpec;
import org.sss.core.cluster.RelayoutRequest;
import org.sss.core.cluster.ReplicaPlacement;
import org.sss.kvs.KeyRanges;
import org.sss.kvs.NodeStore;
import org.sss.kvs.StoreTable;

/**
 * A node's part in a rebalance: carries out the {@link RelayoutRequest} that {@code cluster
 * resize} leaves in the node's data directory, taking its data from one partition layout to
 * another. A node's data is tied to the layout it was written under, and a node refuses to start
 * on another; this is the one way past that check, and it empties what the new layout does not
 * give the node, so no stale copy is ever served.
 *
 * <p>Emptied: the partitions whose copies move (on every node, to be written again by the
 * resize, so every copy of a moved partition holds the same pairs), and every partition the node
 * does not hold under the new layout. Then the membership's Raft log goes (its group belongs to
 * the old layout), the new layout is recorded, and the instruction is deleted. Each step may be
 * done again: a node stopped part way through does the whole of it again at its next start.
 */
public final class Relayout {
  private Relayout() {
  }

  /**
   * Carries out the instruction in {@code dataDir} if there is one; returns the number of
   * partition ranges emptied, or -1 when there was no instruction.
   *
   * @throws IllegalStateException when the instruction is not for this cluster file or this store
   */
  public static int applyIfAsked(NodeStore store, Path dataDir, ClusterSpec spec, int self) {
    Optional<RelayoutRequest> asked = RelayoutRequest.read(dataDir);
    if (asked.isEmpty()) {
      return -1;
    }
    RelayoutRequest r = asked.get();
    Path file = dataDir.resolve(RelayoutRequest.FILE);
    String layout = spec.partitionMap().layout();
    if (!r.to().equals(layout)) {
      throw new IllegalStateException(file + " asks for partition layout " + r.to()
          + " but the cluster file has " + layout + " (finish or undo the resize: bin/sss cluster resize --undo)");
    }
    String recorded = store.recordedLayout();
    if (recorded != null && !recorded.equals(r.from()) && !recorded.equals(r.to())) {
      throw new IllegalStateException(file + " moves data written under layout " + r.from()
          + ", but this node's data was written under " + recorded);
    }
    Set<Integer> empty = new HashSet<>(r.empty());
    ReplicaPlacement placement = spec.placement();
    int ranges = 0;
    for (StoreTable t : store.tables()) {
      for (int partition = 0; partition < placement.partitions(); partition++) {
        if (empty.contains(partition) || !placement.holds(self, partition, t.options().getReplication())) {
          byte[][] range = KeyRanges.partition(partition, new byte[0]);
          t.deleteRange(range[0], range[1]);
          ranges++;
        }
      }
      t.flush(); // a table without a WAL keeps its range deletes only once flushed
    }
    deleteTree(dataDir.resolve("membership"));
    store.recordLayout(r.to());
    try {
      RelayoutRequest.done(dataDir);
    } catch (IOException e) {
      throw new UncheckedIOException("cannot delete " + file, e);
    }
    return ranges;
  }

  private static void deleteTree(Path root) {
    if (!Files.exists(root)) {
      return;
    }
    try (Stream<Path> walk = Files.walk(root)) {
      for (Path f : walk.sorted(Comparator.reverseOrder()).toList()) {
        Files.deleteIfExists(f);
      }
    } catch (IOException e) {
      throw new UncheckedIOException("cannot remove " + root, e);
    }
  }
}
