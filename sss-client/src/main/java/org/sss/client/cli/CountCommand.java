package org.sss.client.cli;

import java.util.concurrent.Callable;
import org.sss.client.SssClient;
import org.sss.client.cluster.SssCluster;
import picocli.CommandLine;
import picocli.CommandLine.Command;
import picocli.CommandLine.Parameters;

/** Prints one number: the exact pair count of a table. */
@Command(name = "count", mixinStandardHelpOptions = true, description = "Print the number of pairs in a table.")
final class CountCommand implements Callable<Integer> {
  @CommandLine.Spec
  CommandLine.Model.CommandSpec spec;

  @Parameters(paramLabel = "TABLE")
  String table;

  @Override
  public Integer call() throws Exception {
    try (SssCluster c = SssCommand.clusterOf(spec).openRunning("count"); SssClient client = c.client()) {
      System.out.println(client.count(table));
    }
    return 0;
  }
}
