package org.sss.client.cli;

import java.util.Optional;
import java.util.concurrent.Callable;
import org.sss.client.SssClient;
import org.sss.client.cluster.SssCluster;
import org.sss.core.keys.KeyType;
import org.sss.core.proto.TableOptions;
import picocli.CommandLine;
import picocli.CommandLine.Command;
import picocli.CommandLine.Parameters;

/** Reads one key; prints the value, or fails when the key is absent. */
@Command(name = "get", mixinStandardHelpOptions = true,
    description = "Print the value of one key (exit status 1 when absent).")
final class GetCommand implements Callable<Integer> {
  @CommandLine.Spec
  CommandLine.Model.CommandSpec spec;

  @Parameters(index = "0", paramLabel = "TABLE")
  String table;

  @Parameters(index = "1", paramLabel = "KEY")
  String key;

  @Override
  public Integer call() throws Exception {
    try (SssCluster c = SssCommand.clusterOf(spec).open(); SssClient client = c.client()) {
      TableOptions o = client.tableStats(table).getOptions();
      Optional<byte[]> v = client.get(table, KeyType.encodeKey(o.getKeyType(), key));
      if (v.isEmpty()) {
        throw new IllegalArgumentException("no key '" + key + "' in table '" + table + "'");
      }
      System.out.println(KeyType.decodeValue(o.getValueType(), v.get()));
    }
    return 0;
  }
}
