package org.sss.client.cli;

import java.util.concurrent.Callable;
import org.sss.client.SssClient;
import org.sss.client.cluster.SssCluster;
import org.sss.core.keys.KeyType;
import org.sss.core.keys.PairTypes;
import picocli.CommandLine;
import picocli.CommandLine.Command;
import picocli.CommandLine.Parameters;

/** Writes one pair, typed by the table's key and value types. */
@Command(name = "put", mixinStandardHelpOptions = true, description = "Write one pair into a table.")
final class PutCommand implements Callable<Integer> {
  @CommandLine.Spec
  CommandLine.Model.CommandSpec spec;

  @Parameters(index = "0", paramLabel = "TABLE")
  String table;

  @Parameters(index = "1", paramLabel = "KEY")
  String key;

  @Parameters(index = "2", paramLabel = "VALUE")
  String value;

  @Override
  public Integer call() throws Exception {
    try (SssCluster c = SssCommand.clusterOf(spec).openRunning("put"); SssClient client = c.client()) {
      PairTypes types = client.tableStats(table).spec().types();
      client.put(table, types, KeyType.encodeKey(types.key(), key), KeyType.encodeValue(types.value(), value));
    }
    return 0;
  }
}
