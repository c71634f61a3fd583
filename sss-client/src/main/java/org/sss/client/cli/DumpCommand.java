package org.sss.client.cli;

import java.nio.file.Files;
import java.nio.file.Path;
import java.util.concurrent.Callable;
import org.sss.client.SssClient;
import org.sss.client.cluster.SssCluster;
import org.sss.client.io.BulkIO;
import org.sss.client.job.ProgressListener;
import picocli.CommandLine;
import picocli.CommandLine.Command;
import picocli.CommandLine.Option;
import picocli.CommandLine.Parameters;

/** Writes a table to a text file, or to part files written by the nodes in parallel. */
@Command(name = "dump", mixinStandardHelpOptions = true,
    description = {"Write TABLE to OUT as KEY<TAB>VALUE lines.",
        "OUT ending in / or naming a directory: every node writes its partitions into part-m-NNNNN files there"
            + " at once, each in key order, then _SUCCESS (as a Hadoop job's output). Otherwise: one file in key"
            + " order."})
final class DumpCommand implements Callable<Integer> {
  @CommandLine.Spec
  CommandLine.Model.CommandSpec spec;

  @Parameters(index = "0", paramLabel = "TABLE")
  String table;

  @Parameters(index = "1", paramLabel = "OUT")
  String out;

  @Option(names = "--overwrite", description = "replace what the directory OUT holds (default: refuse if it holds anything)")
  boolean overwrite;

  @Override
  public Integer call() throws Exception {
    ProgressMeter meter = new ProgressMeter("dump " + table);
    boolean parts = out.endsWith("/") || Files.isDirectory(Path.of(out));
    try (SssCluster c = SssCommand.clusterOf(spec).openRunning("dump"); SssClient client = c.client()) {
      if (parts) {
        BulkIO.dumpParts(client, table, Path.of(out), overwrite, ProgressListener.console(), meter::add);
      } else {
        BulkIO.dump(client, table, Path.of(out), meter::add);
      }
    }
    meter.done();
    return 0;
  }
}
