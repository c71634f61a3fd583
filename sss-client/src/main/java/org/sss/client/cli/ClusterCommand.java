package org.sss.client.cli;

import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import java.util.concurrent.Callable;
import org.sss.client.cluster.ClusterResize;
import org.sss.client.cluster.LocalProcessCluster;
import picocli.CommandLine;
import picocli.CommandLine.Command;
import picocli.CommandLine.Option;

/** Starts and stops a local multi-process cluster. */
@Command(name = "cluster", mixinStandardHelpOptions = true,
    description = "Start, stop or resize a cluster of server processes on this machine.",
    subcommands = {ClusterCommand.Start.class, ClusterCommand.Stop.class, ClusterCommand.Resize.class})
final class ClusterCommand {

  @Command(name = "start", mixinStandardHelpOptions = true,
      description = "Start N server processes on 127.0.0.1 and write DIR/cluster.properties; "
          + "on an existing DIR, start exactly the nodes that do not run, with their data. Returns when all answer; "
          + "a node that fails to start is named with what it logged, and nodes that ran before keep running.")
  static final class Start implements Callable<Integer> {
    @Option(names = "--nodes", paramLabel = "N", description = "nodes of a new cluster (default: 3)")
    Integer nodes;

    @Option(names = "--dir", paramLabel = "DIR", required = true, description = "the cluster's directory")
    Path dir;

    @Option(names = "--partitions", paramLabel = "P", defaultValue = "0",
        description = "partitions of a new cluster (default: 8 per node)")
    int partitions;

    @Option(names = "--replication", paramLabel = "R", defaultValue = "0",
        description = "copies of each partition in a new cluster (default: 2 where it has 2 or more nodes, else 1);"
            + " each local node counts as a host of its own")
    int replication;

    @Option(names = "--heap", description = "-Xmx of each server started (default: the node's last, else 1g)")
    String heap;

    @picocli.CommandLine.Spec
    CommandLine.Model.CommandSpec spec;

    @Override
    public Integer call() throws Exception {
      SssCommand.refuseClusterFile(spec, "the cluster is the one in --dir");
      if (nodes != null && nodes < 1) {
        throw new IllegalArgumentException("--nodes must be at least 1, not " + nodes);
      }
      if (partitions < 0) {
        throw new IllegalArgumentException("--partitions must be positive, not " + partitions);
      }
      if (replication < 0) {
        throw new IllegalArgumentException("--replication must be positive, not " + replication);
      }
      int copies = replication;
      if (copies == 0 && !Files.exists(dir.resolve("cluster.properties"))) {
        copies = (nodes == null ? 3 : nodes) >= 2 ? 2 : 1; // a new cluster keeps two copies where it can
      }
      LocalProcessCluster c = LocalProcessCluster.start(dir, nodes == null ? 0 : nodes, partitions, copies, heap);
      for (int i = 0; i < c.spec().nodeCount(); i++) {
        System.out.printf("node %d  %s  pid %d%n", i, c.spec().node(i).hostPort(), c.pid(i).orElse(-1L));
      }
      if (c.spec().replication() > 1) {
        System.out.println("replication: " + c.spec().replication() + " copies of each partition");
      }
      System.out.println("cluster file: " + c.clusterFile());
      return 0;
    }
  }

  @Command(name = "resize", mixinStandardHelpOptions = true,
      description = "Give the running cluster in DIR another number of nodes or partitions, moving its data. With"
          + " the partition count kept (adding nodes, or removing the last ones for good) only the partitions whose"
          + " copies change move: they are read out to DIR/resize-staging, the nodes take the new layout and they"
          + " are written back and counted. With another partition count every table moves so. Needs every node"
          + " up and in sync, no job running and disk for a copy of what moves; a failure puts the old cluster back.")
  static final class Resize implements Callable<Integer> {
    @Option(names = "--dir", paramLabel = "DIR", required = true, description = "the cluster's directory")
    Path dir;

    @Option(names = "--nodes", paramLabel = "N", defaultValue = "0", description = "nodes (default: as now)")
    int nodes;

    @Option(names = "--partitions", paramLabel = "P", defaultValue = "0",
        description = "partitions (default: as now; a node count past it needs more)")
    int partitions;

    @Option(names = "--undo", description = "end a resize whose process died: put the old cluster back (or finish"
        + " one that had completed)")
    boolean undo;

    @picocli.CommandLine.Spec
    CommandLine.Model.CommandSpec spec;

    @Override
    public Integer call() throws Exception {
      SssCommand.refuseClusterFile(spec, "the cluster is the one in --dir");
      if (undo) {
        System.out.println(ClusterResize.undo(dir, line -> System.out.println(line)));
        return 0;
      }
      if (nodes < 0 || partitions < 0) {
        throw new IllegalArgumentException("--nodes and --partitions must be positive");
      }
      LocalProcessCluster c = ClusterResize.resize(dir, nodes, partitions,
          line -> System.out.println(line));
      System.out.println("cluster file: " + c.clusterFile());
      return 0;
    }
  }

  @Command(name = "stop", mixinStandardHelpOptions = true,
      description = "Stop the nodes of the cluster in DIR: each is asked to flush every table and exit; "
          + "one that does not answer gets SIGTERM, then SIGKILL after 15 s (said per node).")
  static final class Stop implements Callable<Integer> {
    @Option(names = "--dir", paramLabel = "DIR", required = true, description = "the cluster's directory")
    Path dir;

    @picocli.CommandLine.Spec
    CommandLine.Model.CommandSpec spec;

    @Override
    public Integer call() throws Exception {
      SssCommand.refuseClusterFile(spec, "the cluster is the one in --dir");
      List<String> report = LocalProcessCluster.attach(dir).stop();
      report.forEach(System.out::println);
      boolean allStopped = report.stream().noneMatch(line -> line.contains("NOT STOPPED"));
      System.out.println(allStopped ? "stopped" : "some nodes are still running");
      return allStopped ? 0 : 1;
    }
  }
}
