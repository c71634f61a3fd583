package org.sss.client.cli;

import java.util.List;
import java.util.concurrent.Callable;
import org.sss.client.SssClient;
import org.sss.client.TableSpec;
import org.sss.client.cluster.SssCluster;
import org.sss.client.io.PairPrinter;
import org.sss.core.keys.KeyType;
import picocli.CommandLine;
import picocli.CommandLine.Command;
import picocli.CommandLine.Parameters;

/** Reads one key; prints its value (every value, one a line, of a multi-valued table), or fails when absent. */
@Command(name = "get", mixinStandardHelpOptions = true,
    description = "Print the value of one key; of a multi-valued table every value, one a line (exit status 1 when absent).")
final class GetCommand implements Callable<Integer> {
  @CommandLine.Spec
  CommandLine.Model.CommandSpec spec;

  @Parameters(index = "0", paramLabel = "TABLE")
  String table;

  @Parameters(index = "1", paramLabel = "KEY")
  String key;

  @Override
  public Integer call() throws Exception {
    try (SssCluster c = SssCommand.clusterOf(spec).openRunning("get"); SssClient client = c.client()) {
      TableSpec o = client.tableStats(table).spec();
      List<byte[]> values = client.getAll(table, KeyType.encodeKey(o.types().key(), key));
      if (values.isEmpty()) {
        throw new IllegalArgumentException("no key '" + key + "' in table '" + table + "'");
      }
      PairPrinter printer = new PairPrinter(o);
      for (byte[] v : values) {
        System.out.println(printer.value(v));
      }
      if (printer.warning(table) != null) {
        System.err.println(printer.warning(table));
      }
    }
    return 0;
  }
}
