package org.sss.client.cli;

import java.time.Duration;
import java.util.Locale;
import java.util.concurrent.Callable;
import java.util.stream.Collectors;
import org.sss.client.SssClient;
import org.sss.client.TableSpec;
import org.sss.client.TableStatus;
import org.sss.client.cluster.CopyCheck;
import org.sss.client.cluster.SssCluster;
import org.sss.core.keys.KeyType;
import org.sss.core.keys.PairTypes;
import picocli.CommandLine;
import picocli.CommandLine.Command;
import picocli.CommandLine.Option;
import picocli.CommandLine.Parameters;

/** Table management. */
@Command(name = "table", mixinStandardHelpOptions = true, description = "Create, drop, list and inspect tables.",
    subcommands = {TableCommand.Create.class, TableCommand.Drop.class, TableCommand.ListTables.class,
        TableCommand.Stats.class, TableCommand.Verify.class})
final class TableCommand {

  @Command(name = "create", mixinStandardHelpOptions = true, description = "Create a table on every node.")
  static final class Create implements Callable<Integer> {
    @CommandLine.Spec
    CommandLine.Model.CommandSpec spec;

    @Parameters(paramLabel = "NAME")
    String name;

    @Option(names = "--key", defaultValue = "string", description = "key type: long, string, bytes (default: ${DEFAULT-VALUE})")
    String keyType;

    @Option(names = "--value", defaultValue = "string", description = "value type: long, string, bytes (default: ${DEFAULT-VALUE})")
    String valueType;

    @Option(names = "--compression", defaultValue = "lz4", description = "lz4, zstd or none (default: ${DEFAULT-VALUE})")
    String compression;

    @Option(names = "--no-wal", description = "skip the write-ahead log (faster; a crash loses recent writes)")
    boolean noWal;

    @Option(names = "--if-absent", description = "succeed if the table exists")
    boolean ifAbsent;

    @Override
    public Integer call() throws Exception {
      TableSpec options = TableSpec.of(PairTypes.of(KeyType.parse(keyType), KeyType.parse(valueType)))
          .compression(parseCompression(compression))
          .writeAheadLog(!noWal);
      try (SssCluster c = SssCommand.clusterOf(spec).openRunning("table"); SssClient client = c.client()) {
        client.createTable(name, options, ifAbsent);
      }
      System.out.println("created " + name);
      return 0;
    }
  }

  static TableSpec.Compression parseCompression(String s) {
    return switch (s.toLowerCase(Locale.ROOT)) {
      case "lz4" -> TableSpec.Compression.LZ4;
      case "zstd" -> TableSpec.Compression.ZSTD;
      case "none" -> TableSpec.Compression.NONE;
      default -> throw new IllegalArgumentException("unknown compression '" + s + "' (expected lz4, zstd or none)");
    };
  }

  @Command(name = "drop", mixinStandardHelpOptions = true, description = "Drop a table and its data on every node.")
  static final class Drop implements Callable<Integer> {
    @CommandLine.Spec
    CommandLine.Model.CommandSpec spec;

    @Parameters(paramLabel = "NAME")
    String name;

    @Option(names = "--if-exists", description = "succeed if the table does not exist")
    boolean ifExists;

    @Override
    public Integer call() throws Exception {
      try (SssCluster c = SssCommand.clusterOf(spec).openRunning("table"); SssClient client = c.client()) {
        client.dropTable(name, ifExists);
      }
      System.out.println("dropped " + name);
      return 0;
    }
  }

  @Command(name = "list", mixinStandardHelpOptions = true, description = "List tables with pairs and bytes.")
  static final class ListTables implements Callable<Integer> {
    @CommandLine.Spec
    CommandLine.Model.CommandSpec spec;

    @Override
    public Integer call() throws Exception {
      try (SssCluster c = SssCommand.clusterOf(spec).openRunning("table"); SssClient client = c.client()) {
        for (TableStatus t : client.listTables()) {
          System.out.println(describe(t));
        }
      }
      return 0;
    }
  }

  @Command(name = "stats", mixinStandardHelpOptions = true,
      description = "A table's options, estimated pairs and bytes, summed over the nodes.")
  static final class Stats implements Callable<Integer> {
    @CommandLine.Spec
    CommandLine.Model.CommandSpec spec;

    @Parameters(paramLabel = "NAME")
    String name;

    @Override
    public Integer call() throws Exception {
      try (SssCluster c = SssCommand.clusterOf(spec).openRunning("table"); SssClient client = c.client()) {
        System.out.println(describe(client.tableStats(name)));
      }
      return 0;
    }
  }

  @Command(name = "verify", mixinStandardHelpOptions = true,
      description = {"Compare the copies of every partition of a table, each summed up on its own node.",
          "A node sums up its copy as its pairs and a digest of them. Copies that differ give answers that depend on"
              + " the copy a reader reaches. Exit status 0 when every copy was compared and all agree; 1 when some"
              + " differ or were not compared; 3 when the command fails (no cluster, no such table, a repair refused). A table"
              + " written during the check may differ for that reason alone: check it again."})
  static final class Verify implements Callable<Integer> {
    @CommandLine.Spec
    CommandLine.Model.CommandSpec spec;

    @Parameters(paramLabel = "NAME")
    String name;

    @Option(names = "--repair", description = "put copies that differ right: the node holding the most differing"
        + " copies copies every partition it holds again from the other copies (every replicated table; its running"
        + " jobs stop as when a node leaves), then the copies are compared again, until none differ; when one"
        + " partition alone differs, it keeps its first copy")
    boolean repair;

    @Override
    public Integer call() throws Exception {
      try (SssCluster c = SssCommand.clusterOf(spec).openRunning("table"); SssClient client = c.client()) {
        CopyCheck.Report r = CopyCheck.run(client, name);
        if (repair && !r.differing().isEmpty()) {
          report(r);
          r = CopyCheck.repair(client, r, REPAIR_WAIT, System.out::println);
        }
        return report(r);
      } catch (CommandLine.ParameterException e) {
        throw e;
      } catch (Exception e) {
        // not 1, which says the copies differ: a script must tell a failed check from a failing one
        String message = e instanceof java.nio.file.FileSystemException f ? SssCommand.describe(f)
            : e.getMessage() == null ? e.toString() : e.getMessage();
        spec.commandLine().getErr().println(spec.qualifiedName() + ": " + message.lines().findFirst().orElse(""));
        if (Boolean.getBoolean("sss.debug")) {
          e.printStackTrace(spec.commandLine().getErr());
        }
        return FAILED;
      }
    }

    /** The exit status when the command could not check (or repair) the copies. */
    static final int FAILED = 3;

    /** How long a node may take to catch up before the repair gives up waiting (it goes on). */
    private static final Duration REPAIR_WAIT = Duration.ofMinutes(30);

    private int report(CopyCheck.Report r) {
      int partitions = r.partitions().size();
      if (r.copies() == 1) {
        System.out.println(name + ": " + partitions + " partitions of one copy each: nothing to compare");
        return 0;
      }
      for (CopyCheck.Partition p : r.partitions()) {
        if (p.differs() || p.incomplete()) {
          System.out.println("partition " + p.partition() + (p.differs() ? " differs: " : " not compared: ")
              + p.copies().stream().map(Verify::describe).collect(Collectors.joining("; ")));
        }
      }
      int differing = r.differing().size();
      int incomplete = r.incomplete().size();
      System.out.println(name + ": " + partitions + " partitions of " + r.copies() + " copies: "
          + (differing == 0 && incomplete == 0 ? "every copy the same"
              : differing + " with copies that differ, " + incomplete + " with copies not compared"));
      return differing == 0 && incomplete == 0 ? 0 : 1;
    }

    private static String describe(CopyCheck.Copy c) {
      return "node " + c.node() + " " + (c.notCompared() == null
          ? c.pairs() + " pairs (digest " + Long.toHexString(c.digest()) + ")" : "not compared (" + c.notCompared() + ")");
    }
  }

  static String describe(TableStatus t) {
    TableSpec o = t.spec();
    return String.format("%s\tkey=%s value=%s compression=%s wal=%s pairs~%d bytes=%d",
        t.name(), o.types().key().name().toLowerCase(), o.types().value().name().toLowerCase(),
        o.compression().name().toLowerCase(), o.writeAheadLog() ? "on" : "off", t.pairs(), t.bytes())
        + (t.backgroundWork() ? " (flushing or compacting)" : "")
        + (!t.missingOn().isEmpty() ? " INCOMPLETE: missing on node(s) " + t.missingOn()
            + " (a create or drop failed part way); drop it" : "");
  }
}
