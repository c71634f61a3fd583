package org.sss.client.cli;

import java.io.BufferedWriter;
import java.io.OutputStreamWriter;
import java.nio.charset.StandardCharsets;
import java.util.Arrays;
import java.util.Locale;
import java.util.concurrent.Callable;
import org.sss.client.ScanOptions;
import org.sss.client.SssClient;
import org.sss.client.TableScan;
import org.sss.client.TableSpec;
import org.sss.client.cluster.SssCluster;
import org.sss.client.io.PairPrinter;
import org.sss.core.api.Pair;
import org.sss.core.keys.KeyCodec;
import org.sss.core.proto.DataType;
import picocli.CommandLine;
import picocli.CommandLine.Command;
import picocli.CommandLine.Option;
import picocli.CommandLine.Parameters;

/** Prints a table's pairs in key order. */
@Command(name = "scan", mixinStandardHelpOptions = true,
    description = "Print pairs in key order as KEY<TAB>VALUE lines.")
final class ScanCommand implements Callable<Integer> {
  @CommandLine.Spec
  CommandLine.Model.CommandSpec spec;

  @Parameters(paramLabel = "TABLE")
  String table;

  @Option(names = "--prefix", paramLabel = "P",
      description = "only keys starting with P (string and bytes keys)")
  String prefix;

  @Option(names = "--limit", paramLabel = "N", defaultValue = "0", description = "at most N pairs")
  long limit;

  @Override
  public Integer call() throws Exception {
    try (SssCluster c = SssCommand.clusterOf(spec).openRunning("scan"); SssClient client = c.client()) {
      TableSpec o = client.tableStats(table).spec();
      ScanOptions options = ScanOptions.inKeyOrder().withLimit(limit);
      if (prefix != null) {
        options = options.withPrefix(prefixBytes(o.types().key(), prefix));
      }
      BufferedWriter out = new BufferedWriter(new OutputStreamWriter(System.out, StandardCharsets.UTF_8), 1 << 16);
      PairPrinter printer = new PairPrinter(o);
      try (TableScan scan = client.scan(table, options)) {
        while (scan.hasNext()) {
          Pair p = scan.next();
          out.write(printer.key(p.key()));
          out.write('\t');
          out.write(printer.value(p.value()));
          out.write('\n');
        }
      }
      out.flush();
      if (printer.warning(table) != null) {
        System.err.println(printer.warning(table));
      }
    }
    return 0;
  }

  /** The encoded prefix: the escaped bytes without the terminator, so longer keys match. */
  static byte[] prefixBytes(DataType type, String prefix) {
    if (type != DataType.STRING && type != DataType.BYTES) {
      // only their escaped encoding has prefixes that are prefixes of the text
      throw new IllegalArgumentException("--prefix needs string or bytes keys; this table has "
          + type.name().toLowerCase(Locale.ROOT) + " keys");
    }
    byte[] full = KeyCodec.encodeString(prefix);
    return Arrays.copyOf(full, full.length - 2);
  }
}
