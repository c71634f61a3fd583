package org.sss.examples;

import java.io.IOException;
import java.io.UncheckedIOException;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.atomic.AtomicInteger;
import org.junit.jupiter.api.extension.BeforeAllCallback;
import org.junit.jupiter.api.extension.ExtensionContext;
import org.sss.client.cluster.SssCluster;

/**
 * Embedded clusters shared by the example tests, one per node count: started on first use and
 * stopped when the whole test run ends, so that the tests pay for each cluster once. Tests use
 * fresh table names ({@link #table}) and so never see each other's data.
 */
final class SharedClusters implements BeforeAllCallback {
  private static final Map<Integer, SssCluster> CLUSTERS = new ConcurrentHashMap<>();
  private static final AtomicInteger TABLES = new AtomicInteger();

  @Override
  public void beforeAll(ExtensionContext context) {
    context.getRoot().getStore(ExtensionContext.Namespace.GLOBAL).getOrComputeIfAbsent(
        SharedClusters.class.getName(), k -> (ExtensionContext.Store.CloseableResource) SharedClusters::closeAll);
  }

  /** The shared cluster of {@code nodes} nodes. */
  static SssCluster get(int nodes) {
    return CLUSTERS.computeIfAbsent(nodes, n -> {
      try {
        return SssCluster.embedded(n);
      } catch (IOException e) {
        throw new UncheckedIOException(e);
      }
    });
  }

  /** A table name no other test uses. */
  static String table(String role) {
    return "t" + TABLES.incrementAndGet() + "-" + role;
  }

  private static void closeAll() {
    CLUSTERS.values().forEach(SssCluster::close);
    CLUSTERS.clear();
  }
}
