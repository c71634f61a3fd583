package org.sss.client.cli;

import java.nio.file.Path;
import java.util.concurrent.Callable;
import org.sss.client.SssClient;
import org.sss.client.cluster.SssCluster;
import org.sss.client.io.BulkIO;
import picocli.CommandLine;
import picocli.CommandLine.Command;
import picocli.CommandLine.Parameters;

/** Writes a table to a text file. */
@Command(name = "dump", mixinStandardHelpOptions = true,
    description = "Write TABLE to OUT as KEY<TAB>VALUE lines in key order.")
final class DumpCommand implements Callable<Integer> {
  @CommandLine.Spec
  CommandLine.Model.CommandSpec spec;

  @Parameters(index = "0", paramLabel = "TABLE")
  String table;

  @Parameters(index = "1", paramLabel = "OUT")
  Path out;

  @Override
  public Integer call() throws Exception {
    ProgressMeter meter = new ProgressMeter("dump " + table);
    try (SssCluster c = SssCommand.clusterOf(spec).openRunning("dump"); SssClient client = c.client()) {
      BulkIO.dump(client, table, out, meter::add);
    }
    meter.done();
    return 0;
  }
}
