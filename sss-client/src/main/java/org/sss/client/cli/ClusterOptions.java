package org.sss.client.cli;

import java.io.IOException;
import java.nio.file.Path;
import org.sss.client.cluster.SssCluster;
import picocli.CommandLine;
import picocli.CommandLine.Option;

/**
 * Where a command runs: the cluster file given with {@code --cluster}, or an embedded cluster
 * of {@code --nodes} nodes started for the command and stopped after it.
 */
public final class ClusterOptions {
  @Option(names = "--cluster", paramLabel = "FILE", scope = CommandLine.ScopeType.INHERIT,
      description = "cluster file of a running cluster (default: an embedded cluster for this command, where it"
          + " makes sense; data commands need a running one)")
  Path clusterFile;

  /**
   * One by default: the nodes of an embedded cluster share one JVM and its cores, so more of them
   * only divide the same threads and send each other through loopback sockets what one node keeps
   * in memory (a command on a 6-byte file: medians 0.39 s with one node, 0.46 s with three, 12
   * alternated runs each; WordCount of 1 GiB: medians 4.75 against 5.0 s). Spark's {@code local[N]} and Hadoop's local
   * mode are one process too. More nodes show a distributed run on one machine.
   */
  @Option(names = "--nodes", paramLabel = "N", defaultValue = "1",
      description = "nodes of the embedded cluster when no --cluster is given (default: ${DEFAULT-VALUE})")
  int nodes;

  /** The cluster to run on; close it when done (stops an embedded one, leaves a remote one). */
  public SssCluster open() throws IOException {
    if (clusterFile != null) {
      return SssCluster.remote(clusterFile);
    }
    return SssCluster.embedded(nodes);
  }

  /**
   * The running cluster a data command works on. Without {@code --cluster} it refuses: an
   * embedded cluster ends with the command, and what a load or put wrote (or what a count or
   * scan could read) ends with it.
   */
  public SssCluster openRunning(String command) throws IOException {
    if (clusterFile == null) {
      throw new IllegalArgumentException(command + " needs a running cluster (--cluster FILE): an embedded one would"
          + " end with this command, and its data with it; start one with bin/sss cluster start --dir DIR");
    }
    return open();
  }

  public boolean embedded() {
    return clusterFile == null;
  }

  public int nodes() {
    return nodes;
  }
}
