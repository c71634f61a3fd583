package org.sss.client.cli;

import java.nio.file.Path;
import java.util.concurrent.Callable;
import org.sss.client.SssClient;
import org.sss.client.cluster.SssCluster;
import org.sss.client.io.BulkIO;
import org.sss.core.keys.KeyType;
import picocli.CommandLine;
import picocli.CommandLine.Command;
import picocli.CommandLine.Parameters;

/** Loads a text file (one pair per line) or a directory (one pair per file). */
@Command(name = "load", mixinStandardHelpOptions = true,
    description = {"Load PATH into TABLE (created if absent).",
        "A text file becomes pairs (line number from 1, line); a directory, pairs (file name, content)."})
final class LoadCommand implements Callable<Integer> {
  @CommandLine.Spec
  CommandLine.Model.CommandSpec spec;

  @Parameters(index = "0", paramLabel = "TABLE")
  String table;

  @Parameters(index = "1", paramLabel = "PATH")
  Path path;

  @CommandLine.Option(names = "--value", paramLabel = "TYPE", defaultValue = "string",
      description = "type of a text file's lines: string or bytes (default: ${DEFAULT-VALUE})")
  String valueType;

  @Override
  public Integer call() throws Exception {
    ProgressMeter meter = new ProgressMeter("load " + table);
    try (SssCluster c = SssCommand.clusterOf(spec).open(); SssClient client = c.client()) {
      BulkIO.load(client, table, path, KeyType.parse(valueType), meter::add);
    }
    meter.done();
    return 0;
  }
}
