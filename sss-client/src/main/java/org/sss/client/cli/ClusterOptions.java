package org.sss.client.cli;

import java.io.IOException;
import java.nio.file.Path;
import org.sss.client.cluster.SssCluster;
import picocli.CommandLine.Option;

/**
 * Where a command runs: the cluster file given with {@code --cluster}, or an embedded cluster
 * of {@code --nodes} nodes started for the command and stopped after it.
 */
public final class ClusterOptions {
  @Option(names = "--cluster", paramLabel = "FILE", scope = picocli.CommandLine.ScopeType.INHERIT,
      description = "cluster file of a running cluster (default: an embedded cluster for this command)")
  Path clusterFile;

  @Option(names = "--nodes", paramLabel = "N", defaultValue = "3",
      description = "nodes of the embedded cluster when no --cluster is given (default: ${DEFAULT-VALUE})")
  int nodes;

  /** The cluster to run on; close it when done (stops an embedded one, leaves a remote one). */
  public SssCluster open() throws IOException {
    if (clusterFile != null) {
      return SssCluster.remote(clusterFile);
    }
    return SssCluster.embedded(nodes);
  }

  public boolean embedded() {
    return clusterFile == null;
  }

  public int nodes() {
    return nodes;
  }
}
