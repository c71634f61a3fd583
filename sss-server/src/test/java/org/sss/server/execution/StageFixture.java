package org.sss.server.execution;

import static org.junit.jupiter.api.Assertions.assertEquals;

import java.nio.file.Path;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.HexFormat;
import java.util.List;
import java.util.Map;
import java.util.TreeMap;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicLong;
import java.util.concurrent.atomic.AtomicReference;
import org.sss.core.cluster.ClusterSpec;
import org.sss.core.cluster.NodeAddress;
import org.sss.core.keys.PairTypes;
import org.sss.core.proto.ClusterView;
import org.sss.core.proto.DataType;
import org.sss.core.proto.StageSpec;
import org.sss.core.proto.TableOptions;
import org.sss.kvs.NodeStore;
import org.sss.kvs.StoreCursor;
import org.sss.kvs.StoreTable;

/**
 * One node's real store and the stage plumbing its tasks share ({@link StageShuffle},
 * {@link StageContext}), built as {@code EngineService.runStage} builds them, for the tests of
 * the shuffle writer and the map and reduce tasks. Nothing here opens a connection: a shuffle
 * whose pairs all belong to this node never asks its {@link PeerLinks} for one.
 */
final class StageFixture implements AutoCloseable {
  static final String JOB = "job1";

  final NodeStore store;
  final ClusterSpec spec;
  final int self;
  final PeerLinks peers;
  final ExecutorService readers = Executors.newCachedThreadPool();
  final AtomicReference<Throwable> failure = new AtomicReference<>();
  final AtomicBoolean aborted = new AtomicBoolean();
  /** The node's sequence counter for uniquifiers, shared by its stages (EngineService's). */
  final AtomicLong sequence = new AtomicLong();

  StageFixture(Path dir, ClusterSpec spec, int self) {
    this.store = NodeStore.open(dir);
    this.spec = spec;
    this.self = self;
    this.peers = new PeerLinks(spec, self);
  }

  /** A cluster of {@code nodes} nodes on loopback ports nobody listens on, partitions dealt round-robin. */
  static ClusterSpec cluster(int nodes, int partitions) {
    List<NodeAddress> addresses = new ArrayList<>();
    for (int i = 0; i < nodes; i++) {
      addresses.add(new NodeAddress(i, "127.0.0.1", 20_001 + 2 * i));
    }
    return ClusterSpec.of(addresses, partitions, "");
  }

  static TableOptions options(boolean multiValued, DataType key, DataType value) {
    return TableOptions.newBuilder().setMultiValued(multiValued).setKeyType(key).setValueType(value).build();
  }

  /** A table of this job, created as the coordinator creates a stage's output. */
  StoreTable jobTable(int stage, TableOptions options) {
    return store.createForJob(JOB, org.sss.core.cluster.JobTables.stageOutput(JOB, stage), options, "", false);
  }

  StageShuffle shuffle(StoreTable output, PairTypes types, int maxValueBytes) {
    return new StageShuffle(JOB, output.name(), types, output.options().getMultiValued(), self, spec.partitionMap(),
        spec.placement(), output, peers, failure, sequence, maxValueBytes, aborted, ClusterView.getDefaultInstance());
  }

  StageContext context(StageSpec stage, StoreTable input, StageShuffle shuffle) {
    return new StageContext(JOB, stage, self, StageFixture.class.getClassLoader(), input, shuffle, failure, aborted);
  }

  /** A map ordered as the store orders stored keys (unsigned bytes). */
  static TreeMap<byte[], byte[]> sorted() {
    return new TreeMap<>(Arrays::compareUnsigned);
  }

  /** Every pair of a table, by stored key. */
  static TreeMap<byte[], byte[]> contents(StoreTable table) {
    TreeMap<byte[], byte[]> out = sorted();
    try (StoreCursor c = table.scan(null, null)) {
      for (; c.valid(); c.next()) {
        out.put(c.key(), c.value());
      }
    }
    return out;
  }

  /** Compares two tables' pairs as text, so that a difference shows which pair. */
  static void assertSameContents(Map<byte[], byte[]> expected, Map<byte[], byte[]> actual) {
    assertEquals(lines(expected), lines(actual));
  }

  private static List<String> lines(Map<byte[], byte[]> pairs) {
    HexFormat hex = HexFormat.of();
    List<String> out = new ArrayList<>();
    pairs.forEach((k, v) -> out.add(hex.formatHex(k) + " = " + hex.formatHex(v)));
    return out;
  }

  @Override
  public void close() {
    readers.shutdownNow();
    peers.close();
    store.close();
  }
}
