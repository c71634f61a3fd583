package org.sss.client.cli;

import java.util.concurrent.Callable;
import org.sss.client.SssClient;
import org.sss.client.cluster.SssCluster;
import picocli.CommandLine;
import picocli.CommandLine.Command;
import picocli.CommandLine.Option;

/** Checks that nodes answer and accept the secret (a container health check uses it). */
@Command(name = "ping", mixinStandardHelpOptions = true,
    description = "Check that every node (or one) answers an authenticated request.")
final class PingCommand implements Callable<Integer> {
  @CommandLine.Spec
  CommandLine.Model.CommandSpec spec;

  @Option(names = "--node", paramLabel = "N", defaultValue = "-1", description = "only this node")
  int node;

  @Override
  public Integer call() throws Exception {
    java.util.List<String> failed = new java.util.ArrayList<>();
    try (SssCluster c = SssCommand.clusterOf(spec).open(); SssClient client = c.client()) {
      for (int n = 0; n < c.spec().nodeCount(); n++) {
        if (node < 0 || node == n) {
          long t0 = System.nanoTime();
          try {
            client.channels().get(n);
          } catch (RuntimeException e) {
            failed.add(e.getMessage()); // every node is tried: one that does not answer hides no other
            continue;
          }
          System.out.printf("%s ok (%.1f ms)%n", c.spec().node(n), (System.nanoTime() - t0) / 1e6);
        }
      }
      if (c.spec().replication() > 1 && failed.size() < c.spec().nodeCount()) {
        System.out.println(describe(client.view()));
      }
    }
    if (!failed.isEmpty()) {
      throw new IllegalStateException(failed.size() == 1 ? failed.get(0)
          : failed.get(0) + "; and " + (failed.size() - 1) + " more: " + String.join("; ", failed.subList(1, failed.size())));
    }
    return 0;
  }

  /** One line: the membership as the nodes decided it. */
  static String describe(org.sss.core.proto.ViewAnswer a) {
    String confirmed = a.getConfirmedMillisAgo() == Long.MAX_VALUE ? "not yet confirmed by a majority"
        : "confirmed by a majority " + a.getConfirmedMillisAgo() + " ms ago";
    org.sss.core.proto.ClusterView v = a.getView();
    return "membership: epoch " + v.getEpoch() + ", down "
        + (v.getDownCount() == 0 ? "none" : "node(s) " + v.getDownList())
        + (v.getOutCount() == 0 ? "" : ", out of the in-sync copies " + v.getOutList())
        + (v.getJoiningCount() == 0 ? "" : ", catching up " + v.getJoiningList())
        + ", leader " + (a.getLeader() < 0 ? "unknown" : "node " + a.getLeader()) + ", voters " + a.getVotersList()
        + " (" + confirmed + ")";
  }
}
