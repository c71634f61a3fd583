package org.sss.client.cli;

import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.Callable;
import org.sss.client.MembershipView;
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
    List<String> failed = new ArrayList<>();
    try (SssCluster c = SssCommand.clusterOf(spec).open(); SssClient client = c.client()) {
      for (int n = 0; n < c.spec().nodeCount(); n++) {
        if (node < 0 || node == n) {
          long t0 = System.nanoTime();
          try {
            client.ping(n);
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
  static String describe(MembershipView v) {
    String confirmed = v.confirmedMillisAgo() == Long.MAX_VALUE ? "not yet confirmed by a majority"
        : "confirmed by a majority " + v.confirmedMillisAgo() + " ms ago";
    return "membership: epoch " + v.epoch() + ", down "
        + (v.down().isEmpty() ? "none" : "node(s) " + v.down())
        + (v.out().isEmpty() ? "" : ", out of the in-sync copies " + v.out())
        + (v.joining().isEmpty() ? "" : ", catching up " + v.joining())
        + ", leader " + (v.leader() < 0 ? "unknown" : "node " + v.leader()) + ", voters " + v.voters()
        + " (" + confirmed + ")";
  }
}
