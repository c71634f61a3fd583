package org.sss.client.cluster;

import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.List;
import java.util.ServiceLoader;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.stream.Stream;
import org.sss.client.internal.InProcessClusters;
import org.sss.core.cluster.ClusterSpec;
import org.sss.core.cluster.EmbeddedNodes;
import org.sss.core.cluster.ReplicaPlacement;
import org.sss.core.transport.Auth;

/**
 * Nodes running in this JVM on loopback, with their data in a temporary directory. Each node
 * listens on a port the kernel picked when its socket was bound, before the cluster spec was
 * made: no port is picked as free and bound later.
 */
final class EmbeddedCluster implements SssCluster {
  private final ClusterSpec spec;
  private final AutoCloseable nodes;
  private final Path dir;
  /**
   * Closes the nodes and deletes their directory when the JVM ends without {@link #close}
   * (Ctrl-C during an embedded command): temporary data must not outlive its process.
   */
  private final Thread cleanUpAtExit;
  private final AtomicBoolean closed = new AtomicBoolean();

  private EmbeddedCluster(ClusterSpec spec, AutoCloseable nodes, Path dir) {
    this.spec = spec;
    this.nodes = nodes;
    this.dir = dir;
    this.cleanUpAtExit = new Thread(this::closeNodesAndDelete, "sss-embedded-cleanup");
    Runtime.getRuntime().addShutdownHook(cleanUpAtExit);
    InProcessClusters.add(spec);
  }

  static EmbeddedCluster start(int n, int partitions, int replication) throws IOException {
    EmbeddedNodes launcher = ServiceLoader.load(EmbeddedNodes.class).findFirst().orElseThrow(() ->
        new IllegalStateException("no embedded server on the class path (add the sss-server module)"));
    MachineLimits.checkEmbedded(n); // before anything is made: a refused start leaves nothing behind
    Path dir = Files.createTempDirectory("sss-embedded-");
    try {
      EmbeddedNodes.Started started = launcher.startOnFreePorts(n, "127.0.0.1",
          nodes -> withCopies(ClusterSpec.of(nodes, partitions, Auth.randomSecret()), replication),
          dir);
      return new EmbeddedCluster(started.spec(), started.nodes(), dir);
    } catch (Exception e) {
      deleteTree(dir);
      throw new IOException("cannot start an embedded cluster: " + e.getMessage(), e);
    }
  }

  /**
   * The spec keeping {@code replication} copies: each node a host of its own, and a port each for
   * the members' consensus (picked free, since the consensus library binds its own socket).
   */
  private static ClusterSpec withCopies(ClusterSpec spec, int replication) {
    if (replication == 1) {
      return spec;
    }
    List<ReplicaPlacement.Location> hosts = new ArrayList<>();
    for (int i = 0; i < spec.nodeCount(); i++) {
      hosts.add(new ReplicaPlacement.Location("embedded-" + i, ClusterSpec.DEFAULT_RACK));
    }
    try {
      return spec.withRaftPorts(FreePorts.pick(spec.nodeCount())).withReplication(replication, hosts);
    } catch (IOException e) {
      throw new UncheckedIOException(e);
    }
  }

  @Override
  public ClusterSpec spec() {
    return spec;
  }

  @Override
  public void close() {
    try {
      Runtime.getRuntime().removeShutdownHook(cleanUpAtExit);
    } catch (IllegalStateException shuttingDown) {
      // the hook runs, or has run, already
    }
    closeNodesAndDelete();
  }

  private void closeNodesAndDelete() {
    if (!closed.compareAndSet(false, true)) {
      return;
    }
    InProcessClusters.remove(spec);
    try {
      nodes.close();
    } catch (Exception e) {
      throw new IllegalStateException("stopping the embedded cluster failed", e);
    } finally {
      deleteTree(dir);
    }
  }

  static void deleteTree(Path dir) {
    try (Stream<Path> paths = Files.walk(dir)) {
      paths.sorted(Comparator.reverseOrder()).forEach(p -> p.toFile().delete());
    } catch (IOException ignored) {
      // best effort: a temporary directory
    }
  }
}
