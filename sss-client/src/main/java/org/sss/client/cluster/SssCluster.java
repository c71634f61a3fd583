package org.sss.client.cluster;

import java.io.IOException;
import java.nio.file.Path;
import org.sss.client.SssClient;
import org.sss.core.cluster.ClusterSpec;

/** A running cluster this process started or knows of; closing it stops what it started. */
public interface SssCluster extends AutoCloseable {
  /** Who the nodes are and how keys map to them. */
  ClusterSpec spec();

  /** A new client of this cluster (close it when done). */
  default SssClient client() {
    return SssClient.connect(spec());
  }

  @Override
  void close();

  /**
   * {@code n} nodes inside this JVM on loopback, data under a temporary directory that is
   * deleted on close. Needs the server module on the class path (it is found at run time).
   */
  static SssCluster embedded(int n) throws IOException {
    return EmbeddedCluster.start(n, n * ClusterSpec.DEFAULT_PARTITIONS_PER_NODE, 1);
  }

  /** Like {@link #embedded(int)} with an explicit partition count. */
  static SssCluster embedded(int n, int partitions) throws IOException {
    return EmbeddedCluster.start(n, partitions, 1);
  }

  /**
   * Like {@link #embedded(int, int)}, keeping {@code replication} copies of each stored pair. Its
   * nodes share this JVM and this machine but count as hosts of their own ({@code embedded-0},
   * {@code embedded-1}, ...), so copies are placed, written and read as on separate hosts: it
   * measures what copies cost, and survives no failure of the machine.
   */
  static SssCluster embedded(int n, int partitions, int replication) throws IOException {
    return EmbeddedCluster.start(n, partitions, replication);
  }

  /** A cluster described by a cluster file, started elsewhere; close does not stop it. */
  static SssCluster remote(Path clusterFile) throws IOException {
    ClusterSpec spec = ClusterSpec.load(clusterFile);
    return new SssCluster() {
      @Override
      public ClusterSpec spec() {
        return spec;
      }

      @Override
      public void close() {}
    };
  }
}
