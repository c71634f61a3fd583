package org.sss.client.cli;

import java.nio.file.Path;
import java.util.concurrent.Callable;
import org.sss.client.cluster.LocalProcessCluster;
import picocli.CommandLine.Command;
import picocli.CommandLine.Option;

/** Starts and stops a local multi-process cluster. */
@Command(name = "cluster", mixinStandardHelpOptions = true,
    description = "Start or stop a cluster of server processes on this machine.",
    subcommands = {ClusterCommand.Start.class, ClusterCommand.Stop.class})
final class ClusterCommand {

  @Command(name = "start", mixinStandardHelpOptions = true,
      description = "Start N server processes on 127.0.0.1 and write DIR/cluster.properties; "
          + "on an existing DIR, restart the stopped nodes with their data. Returns when all answer.")
  static final class Start implements Callable<Integer> {
    @Option(names = "--nodes", paramLabel = "N", defaultValue = "3", description = "nodes of a new cluster")
    int nodes;

    @Option(names = "--dir", paramLabel = "DIR", required = true, description = "the cluster's directory")
    Path dir;

    @Option(names = "--partitions", paramLabel = "P", defaultValue = "0",
        description = "partitions of a new cluster (default: 8 per node)")
    int partitions;

    @Option(names = "--heap", defaultValue = "1g", description = "-Xmx of each server (default: ${DEFAULT-VALUE})")
    String heap;

    @Override
    public Integer call() throws Exception {
      LocalProcessCluster c = LocalProcessCluster.start(dir, nodes, partitions, heap);
      for (int i = 0; i < c.spec().nodeCount(); i++) {
        System.out.printf("node %d  %s  pid %d%n", i, c.spec().node(i).hostPort(), c.pid(i).orElse(-1L));
      }
      System.out.println("cluster file: " + c.clusterFile());
      return 0;
    }
  }

  @Command(name = "stop", mixinStandardHelpOptions = true, description = "Stop the cluster in DIR.")
  static final class Stop implements Callable<Integer> {
    @Option(names = "--dir", paramLabel = "DIR", required = true, description = "the cluster's directory")
    Path dir;

    @Override
    public Integer call() throws Exception {
      LocalProcessCluster.attach(dir).stopAll();
      System.out.println("stopped");
      return 0;
    }
  }
}
