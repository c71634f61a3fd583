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
    description = {"Load PATH into a new TABLE; an existing one only with --append or --replace.",
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

  @CommandLine.Option(names = "--append",
      description = "load into the table if it exists: its other pairs stay, pairs of the same keys are replaced")
  boolean append;

  @CommandLine.Option(names = "--replace", description = "drop the table first if it exists")
  boolean replace;

  @Override
  public Integer call() throws Exception {
    if (append && replace) {
      throw new CommandLine.ParameterException(spec.commandLine(), "--append and --replace exclude each other");
    }
    ProgressMeter meter = new ProgressMeter("load " + table);
    try (SssCluster c = SssCommand.clusterOf(spec).openRunning("load"); SssClient client = c.client()) {
      java.util.Optional<org.sss.core.proto.TableInfo> existing = client.listTables().stream()
          .filter(t -> t.getName().equals(table)).findFirst();
      if (existing.isPresent() && !append && !replace) {
        throw new IllegalArgumentException("table '" + table + "' exists (about " + existing.get().getPairs()
            + " pairs); nothing was loaded: --append adds to it (pairs of the same keys are replaced),"
            + " --replace drops it first");
      }
      if (existing.isPresent() && replace) {
        client.dropTable(table, true);
      }
      BulkIO.load(client, table, path, KeyType.parse(valueType), meter::add);
    }
    meter.done();
    return 0;
  }
}
