package org.sss.client.cli;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.Locale;
import java.util.Optional;
import java.util.concurrent.Callable;
import org.sss.client.SssClient;
import org.sss.client.TableSpec;
import org.sss.client.TableStatus;
import org.sss.client.cluster.SssCluster;
import org.sss.client.io.BulkIO;
import org.sss.client.io.TextSplits;
import org.sss.client.job.ProgressListener;
import org.sss.core.keys.KeyType;
import picocli.CommandLine;
import picocli.CommandLine.Command;
import picocli.CommandLine.Parameters;

/** Loads a text file or a directory of them (one pair per line), or a directory's whole files (one pair per file). */
@Command(name = "load", mixinStandardHelpOptions = true,
    description = {"Load PATH into a new TABLE; an existing one only with --append or --replace.",
        "A text file becomes pairs (byte offset of the line, line), read by the nodes in parallel when they see the"
            + " file (else sent from here); a directory, the same pairs of its files' text end to end in path order"
            + " (names starting with . or _ left out), keyed by offset in that concatenation. A new or replaced table"
            + " appears whole when the load ends, or not at all; --append adds pairs as they arrive."})
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

  @CommandLine.Option(names = "--replace", description = "replace the table if it exists (when the load succeeds; refused for text only this"
      + " client sees, and with --whole-files)")
  boolean replace;

  @CommandLine.Option(names = "--whole-files", description = "a directory's files as pairs (file name relative to"
      + " PATH, content), one per file (the same files), string keys and bytes values, sent from here (as Spark's"
      + " wholeTextFiles)")
  boolean wholeFiles;

  @CommandLine.Option(names = "--compression", paramLabel = "KIND",
      description = "lz4, zstd or none: how a table this load makes (new or replaced) is compressed on disk"
          + " (default: lz4, as table create); an existing table appended to keeps its own")
  String compression;

  /** The bytes of text a load of {@code path} reads. */
  private static long textBytes(Path path) throws IOException {
    long bytes = 0;
    for (Path f : TextSplits.files(path)) {
      bytes += Files.size(f);
    }
    return bytes;
  }

  @Override
  public Integer call() throws Exception {
    if (append && replace) {
      throw new CommandLine.ParameterException(spec.commandLine(), "--append and --replace exclude each other");
    }
    TableSpec.Compression kind = compression == null ? TableSpec.Compression.LZ4
        : TableCommand.parseCompression(compression);
    ProgressMeter meter = new ProgressMeter("load " + table);
    try (SssCluster c = SssCommand.clusterOf(spec).openRunning("load"); SssClient client = c.client()) {
      Optional<TableStatus> existing = client.listTables().stream()
          .filter(t -> t.name().equals(table)).findFirst();
      if (existing.isPresent() && !append && !replace) {
        throw new IllegalArgumentException("table '" + table + "' exists (about " + existing.get().pairs()
            + " pairs); nothing was loaded: --append adds to it (pairs of the same keys are replaced),"
            + " --replace replaces it when the load succeeds");
      }
      if (existing.isPresent() && append && compression != null) {
        throw new IllegalArgumentException("table '" + table + "' exists and keeps its compression ("
            + existing.get().spec().compression().name().toLowerCase(Locale.ROOT) + "); nothing was loaded:"
            + " --compression applies to a table the load makes (new, or with --replace)");
      }
      if (wholeFiles) {
        if (replace || !"string".equals(valueType)) {
          throw new IllegalArgumentException("--whole-files loads (file name, content) pairs, string and bytes, sent"
              + " from here into a new table or appended: --replace and --value do not apply; nothing was loaded");
        }
        BulkIO.loadWholeFiles(client, table, path, kind, meter::add);
      } else {
        long before = meter.pairs();
        long pairs = BulkIO.load(client, table, path, KeyType.parse(valueType), kind, replace, meter::add,
            ProgressListener.console());
        if (meter.pairs() == before) { // the nodes read the files: count them here once
          meter.addAll(pairs, textBytes(path));
        }
      }
    }
    meter.done();
    return 0;
  }
}
