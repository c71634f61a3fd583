package org.sss.examples;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.security.SecureRandom;
import java.util.ArrayList;
import java.util.HexFormat;
import java.util.List;
import java.util.Locale;
import java.util.concurrent.Callable;
import org.sss.client.SssClient;
import org.sss.client.TableSpec;
import org.sss.client.cli.CommandExtension;
import org.sss.client.cli.SssCommand;
import org.sss.client.cluster.SssCluster;
import org.sss.client.io.BulkIO;
import org.sss.client.job.Job;
import org.sss.client.job.JobFailedException;
import org.sss.client.job.JobResult;
import org.sss.client.job.ProgressListener;
import org.sss.client.job.StageSummary;
import org.sss.core.api.Serdes;
import org.sss.core.proto.ErrorCode;
import picocli.CommandLine;
import picocli.CommandLine.Command;
import picocli.CommandLine.Option;
import picocli.CommandLine.Parameters;

/**
 * {@code sss example NAME ...}: runs one of the example jobs on files, against the cluster of
 * {@code --cluster FILE} or an embedded one. The input is loaded into new tables of the cluster,
 * the jobs run with a live progress line on stderr, the result is written to the output file and
 * a summary to stdout; the example's tables are dropped at the end unless {@code --keep-tables}.
 */
@Command(name = "example", mixinStandardHelpOptions = true,
    description = "Run an example job (the Hadoop examples on SSS) on local files.",
    subcommands = {
        ExampleCommand.WordCountCmd.class, ExampleCommand.GrepCmd.class, ExampleCommand.SortCmd.class,
        ExampleCommand.PiCmd.class, ExampleCommand.RandomTextWriterCmd.class,
        ExampleCommand.InvertedIndexCmd.class, ExampleCommand.AprioriCmd.class})
public final class ExampleCommand implements CommandExtension, Runnable {
  private static final SecureRandom RANDOM = new SecureRandom();

  @CommandLine.Spec
  CommandLine.Model.CommandSpec spec;

  @Override
  public String name() {
    return "example";
  }

  @Override
  public Object command() {
    return new ExampleCommand();
  }

  @Override
  public void run() {
    throw new CommandLine.ParameterException(spec.commandLine(), "missing example (see sss example --help)");
  }

  private static String newRunId() {
    byte[] id = new byte[3];
    RANDOM.nextBytes(id);
    return HexFormat.of().formatHex(id);
  }

  /** What every example shares: the cluster, its tables, progress and the summary. */
  abstract static class Base implements Callable<Integer> {
    @CommandLine.Spec
    CommandLine.Model.CommandSpec spec;

    @Option(names = "--keep-tables", description = "keep the example's tables in the cluster (their names are printed)")
    boolean keepTables;

    final List<String> tables = new ArrayList<>();
    final List<JobResult> jobs = new ArrayList<>();
    private final String runId = newRunId();
    private final long start = System.nanoTime();

    /** The example's work on an open client; returns the exit status. */
    abstract int run(SssClient client, SssCluster cluster) throws Exception;

    @Override
    public Integer call() throws Exception {
      // an OUT that cannot be written is named now, not after the job ran
      for (CommandLine.Model.PositionalParamSpec p : spec.positionalParameters()) {
        if (p.paramLabel().equals("OUT") && p.getValue() != null) {
          ExampleIO.checkWritable(p.getValue().toString());
        }
      }
      try (SssCluster c = SssCommand.clusterOf(spec).open(); SssClient client = c.client()) {
        boolean ok = false;
        // Ctrl-C skips the finally below: the example's tables go then too
        Thread dropAtExit = new Thread(() -> dropTables(client), "sss-example-cleanup");
        Runtime.getRuntime().addShutdownHook(dropAtExit);
        try {
          int status = run(client, c);
          ok = true;
          return status;
        } finally {
          try {
            Runtime.getRuntime().removeShutdownHook(dropAtExit);
          } catch (IllegalStateException shuttingDown) {
            // the hook drops them
          }
          if (keepTables && ok) {
            System.out.println("tables kept: " + String.join(" ", tables));
          } else {
            dropTables(client);
          }
        }
      }
    }

    /**
     * Drops the run's tables. One that cannot be dropped (a node is down) is named on stderr
     * with the command that drops it, rather than left behind without a word.
     */
    private void dropTables(SssClient client) {
      List<String> left = new ArrayList<>();
      String why = null;
      for (String t : List.copyOf(tables)) {
        try {
          client.dropTable(t, true);
        } catch (RuntimeException e) {
          left.add(t); // the run's own error, if any, is the one to report; this one is named below
          why = why != null ? why : e.getMessage();
        }
      }
      if (!left.isEmpty() && !SssCommand.clusterOf(spec).embedded()) { // an embedded cluster goes with the command
        System.err.println("tables left behind: " + String.join(" ", left) + " (" + why + "); drop them with"
            + " bin/sss --cluster FILE table drop NAME");
      }
    }

    /** A new table name for this run. */
    String table(String role) {
      String name = "example-" + spec.name() + "-" + runId + "-" + role;
      tables.add(name);
      return name;
    }

    /** Runs a job with the live progress line and records its result. */
    JobResult runJob(SssClient client, Job job) {
      try {
        JobResult r = client.submit(job).await(ProgressListener.console());
        jobs.add(r);
        return r;
      } finally {
        if (System.console() != null) {
          System.err.println();
        }
      }
    }

    /** The input loaded as (byte offset, line) ({@code sss load}), with a line on stdout. */
    String loadLines(SssClient client, String in) throws IOException {
      String t = table("in");
      long n = BulkIO.load(client, t, Path.of(in), p -> {});
      System.out.printf("loaded %,d lines from %s%n", n, in);
      return t;
    }

    /** The summary: time, and the records of every stage. */
    void summary(String what) {
      System.out.printf("%s: %s in %.2f s%n", spec.name(), what, (System.nanoTime() - start) / 1e9);
      for (JobResult r : jobs) {
        for (StageSummary s : r.stages()) {
          System.out.printf(Locale.ROOT, "  %s stage %d %-6s records in %,d  out %,d  written %,d  %.2f s%n",
              jobName(r), s.index() + 1, s.kind(), s.recordsIn(), s.recordsOut(), s.recordsShuffled(), s.seconds());
        }
      }
    }

    private String jobName(JobResult r) {
      return "job " + r.jobId();
    }
  }

  /** A table written out: the file, and its lines (the table's pairs). */
  record Dumped(Path file, long lines) {}

  /** Output file of a key-value table: a file, or a directory with a part file. */
  static Dumped dump(SssClient client, String table, String out) throws IOException {
    Path file = ExampleIO.outputFile(out, ExampleIO.PART_FILE);
    return new Dumped(file, BulkIO.dump(client, table, file, n -> {}));
  }

  @Command(name = "wordcount", mixinStandardHelpOptions = true,
      description = {"Count the words of IN into OUT as WORD<TAB>COUNT lines (Hadoop's wordcount).",
          "IN is a text file or a directory of them; OUT ending in / or naming a directory gets a part file."})
  static final class WordCountCmd extends Base {
    @Parameters(index = "0", paramLabel = "IN")
    String in;

    @Parameters(index = "1", paramLabel = "OUT")
    String out;

    @Option(names = "--no-combiner", description = "shuffle every (word, 1) pair uncombined")
    boolean noCombiner;

    @Override
    int run(SssClient client, SssCluster cluster) throws Exception {
      String output = table("out");
      try {
        // the nodes read IN's splits themselves: nothing is loaded first
        runJob(client, WordCount.jobOverFiles(Path.of(in), output, !noCombiner));
      } catch (JobFailedException e) {
        if (e.code() != ErrorCode.NO_SUCH_FILE || !Files.exists(Path.of(in))) {
          throw e;
        }
        System.err.println(e.getMessage() + "; loading " + in + " from here first");
        runJob(client, WordCount.job(loadLines(client, in), output, !noCombiner));
      }
      Dumped written = dump(client, output, out);
      summary(String.format("%,d distinct words written to %s", written.lines(), written.file()));
      return 0;
    }
  }

  @Command(name = "grep", mixinStandardHelpOptions = true,
      description = {"Count the matches of REGEX in IN into OUT, most frequent first (Hadoop's grep).",
          "OUT gets COUNT<TAB>MATCH lines, from a search job and a sort job; IN is a text file or directory."})
  static final class GrepCmd extends Base {
    @Parameters(index = "0", paramLabel = "IN")
    String in;

    @Parameters(index = "1", paramLabel = "OUT")
    String out;

    @Parameters(index = "2", paramLabel = "REGEX", description = "a Java regular expression")
    String regex;

    @Option(names = "--group", paramLabel = "G", defaultValue = "0", description = "count this group of each match (default: the whole match)")
    int group;

    @Option(names = "--no-combiner", description = "shuffle every (match, 1) pair uncombined")
    boolean noCombiner;

    @Override
    int run(SssClient client, SssCluster cluster) throws Exception {
      Grep.check(regex, group); // before loading anything
      String input = loadLines(client, in);
      String counts = table("counts");
      String sorted = table("sorted");
      runJob(client, Grep.job(input, counts, regex, group, !noCombiner));
      runJob(client, Grep.sortJob(counts, sorted));
      Path file = ExampleIO.outputFile(out, ExampleIO.PART_FILE);
      long n = Grep.writeSorted(client, sorted, file);
      summary(String.format("%,d distinct matches of '%s' written to %s", n, regex, file));
      return 0;
    }
  }

  @Command(name = "sort", mixinStandardHelpOptions = true,
      description = {"Sort the lines of IN into OUT, duplicates kept (Hadoop's sort).",
          "Lines compare as bytes (as LC_ALL=C sort); IN is a text file or directory."})
  static final class SortCmd extends Base {
    @Parameters(index = "0", paramLabel = "IN")
    String in;

    @Parameters(index = "1", paramLabel = "OUT")
    String out;

    @Override
    int run(SssClient client, SssCluster cluster) throws Exception {
      String input = loadLines(client, in);
      String sorted = table("sorted");
      runJob(client, Sort.job(input, sorted));
      Path file = ExampleIO.outputFile(out, ExampleIO.PART_FILE);
      long n = Sort.writeLines(client, sorted, file);
      summary(String.format("%,d lines sorted into %s", n, file));
      return 0;
    }
  }

  @Command(name = "pi", mixinStandardHelpOptions = true,
      description = "Estimate pi by quasi-Monte Carlo with MAPS map tasks of SAMPLES points each (Hadoop's pi).")
  static final class PiCmd extends Base {
    @Parameters(index = "0", paramLabel = "MAPS")
    int maps;

    @Parameters(index = "1", paramLabel = "SAMPLES")
    long samples;

    @Option(names = "--no-combiner", description = "shuffle every map's counts uncombined")
    boolean noCombiner;

    @Override
    int run(SssClient client, SssCluster cluster) throws Exception {
      System.out.println("Number of Maps  = " + maps);
      System.out.println("Samples per Map = " + samples);
      String input = table("in");
      String output = table("out");
      Pi.writeInput(client, input, maps, samples);
      runJob(client, Pi.job(input, output, !noCombiner));
      long inside = client.get(output, Serdes.STRING.encodeKey(Pi.INSIDE))
          .map(Serdes.LONG::decodeValue).orElse(0L);
      System.out.println("Estimated value of Pi is " + Pi.estimate(inside, (long) maps * samples));
      summary(String.format("%,d points", (long) maps * samples));
      return 0;
    }
  }

  @Command(name = "randomtextwriter", mixinStandardHelpOptions = true,
      description = {"Write about --bytes of random text to OUT (Hadoop's randomtextwriter).",
          "Lines of words from Hadoop's list, into one file or, when OUT ends in / or names a directory,"
              + " part-m-NNNNN files written by the map tasks on their nodes, a file per partition of the seed"
              + " table (OUT must then hold nothing)."})
  static final class RandomTextWriterCmd extends Base {
    @Parameters(index = "0", paramLabel = "OUT")
    String out;

    @Option(names = "--bytes", paramLabel = "N", required = true,
        description = "bytes to write, with an optional k, m or g suffix (powers of 1024)")
    String bytes;

    @Option(names = "--maps", paramLabel = "M", description = "map tasks (default: 2 per node)")
    Integer maps;

    @Option(names = "--rows-per-map", paramLabel = "R", defaultValue = "0", description = "at most R lines per map (default: no limit)")
    long rowsPerMap;

    @Option(names = "--seed", paramLabel = "S", description = "random seed (default: a new one)")
    Long seed;

    @Override
    int run(SssClient client, SssCluster cluster) throws Exception {
      long total = parseBytes(bytes);
      int m = maps != null ? maps : 2 * cluster.spec().nodeCount();
      long s = seed != null ? seed : RANDOM.nextLong();
      String seeds = table("seeds");
      RandomTextWriter.writeSeeds(client, seeds, m, total);
      boolean dir = ExampleIO.isDirectory(out);
      if (dir) { // each map task writes its part file on its node, as Hadoop's does
        Path target = Path.of(out);
        JobResult r;
        try {
          r = runJob(client, RandomTextWriter.jobToFiles(seeds, target, s, rowsPerMap, 0));
        } catch (JobFailedException e) {
          if (e.code() != ErrorCode.NO_SUCH_FILE) {
            throw e;
          }
          // the nodes cannot see OUT (another machine): the text goes through a table, written out from here
          System.err.println(e.getMessage().lines().findFirst().orElse("") + "; writing " + target + " from here");
          String text = table("text");
          r = runJob(client, RandomTextWriter.job(seeds, text, s, rowsPerMap));
          RandomTextWriter.writeText(client, text, Files.createDirectories(target), m, true);
        }
        summary(String.format("%,d lines, %,d bytes (seed %d, %d maps) written to %s", r.counter("RECORDS_WRITTEN"),
            r.counter("BYTES_WRITTEN"), s, m, target));
        return 0;
      }
      String text = table("text");
      JobResult r = runJob(client, RandomTextWriter.job(seeds, text, s, rowsPerMap));
      Path target = ExampleIO.outputFile(out, "");
      long lines = RandomTextWriter.writeText(client, text, target, m, false);
      summary(String.format("%,d lines, %,d bytes (seed %d, %d maps) written to %s", lines,
          r.counter("BYTES_WRITTEN"), s, m, target));
      return 0;
    }
  }

  /** Parses a byte count with an optional k, m or g suffix. */
  static long parseBytes(String s) {
    String t = s.trim().toLowerCase(Locale.ROOT);
    long unit = 1;
    if (t.endsWith("b")) {
      t = t.substring(0, t.length() - 1);
    }
    if (t.endsWith("k")) {
      unit = 1L << 10;
    } else if (t.endsWith("m")) {
      unit = 1L << 20;
    } else if (t.endsWith("g")) {
      unit = 1L << 30;
    }
    if (unit > 1) {
      t = t.substring(0, t.length() - 1);
    }
    try {
      long v = Long.parseLong(t);
      if (v < 0) {
        throw new NumberFormatException();
      }
      return Math.multiplyExact(v, unit);
    } catch (NumberFormatException | ArithmeticException e) {
      throw new IllegalArgumentException("not a byte count: '" + s + "' (e.g. 1000, 64k, 10m, 1g)");
    }
  }

  @Command(name = "invertedindex", mixinStandardHelpOptions = true,
      description = {"Index the words of the files below DIR into OUT (an inverted index).",
          "OUT gets WORD<TAB>FILE<TAB>FILE... lines, file names sorted."})
  static final class InvertedIndexCmd extends Base {
    @Parameters(index = "0", paramLabel = "DIR")
    Path dir;

    @Parameters(index = "1", paramLabel = "OUT")
    String out;

    @Option(names = "--no-combiner", description = "shuffle every (word, file) pair uncombined")
    boolean noCombiner;

    @Override
    int run(SssClient client, SssCluster cluster) throws Exception {
      if (!Files.isDirectory(dir)) {
        throw new IllegalArgumentException("not a directory: " + dir);
      }
      String input = table("files");
      long files = BulkIO.loadWholeFiles(client, input, dir, TableSpec.Compression.LZ4, n -> {});
      System.out.printf("loaded %,d files from %s%n", files, dir);
      String output = table("index");
      runJob(client, InvertedIndex.job(input, output, !noCombiner));
      Dumped written = dump(client, output, out);
      summary(String.format("%,d words of %,d files indexed into %s", written.lines(), files, written.file()));
      return 0;
    }
  }

  @Command(name = "apriori", mixinStandardHelpOptions = true,
      description = {"Find the frequent itemsets of the transactions in IN (hash-partitioned Apriori).",
          "IN has a transaction a line (item ids); OUT gets ITEMSET<TAB>SUPPORT lines, items joined by spaces."
              + " One job per itemset size."})
  static final class AprioriCmd extends Base {
    @Parameters(index = "0", paramLabel = "IN")
    String in;

    @Parameters(index = "1", paramLabel = "OUT")
    String out;

    @Option(names = "--min-support", paramLabel = "S", required = true,
        description = "least support: a transaction count (1 or more), or a fraction of the transactions (below 1)")
    double minSupport;

    @Option(names = "--max-size", paramLabel = "K", defaultValue = "0", description = "largest itemsets to find (default: no limit)")
    int maxSize;

    @Option(names = "--no-combiner", description = "shuffle every (itemset, 1) pair uncombined")
    boolean noCombiner;

    @Override
    int run(SssClient client, SssCluster cluster) throws Exception {
      String input = loadLines(client, in);
      long n = client.count(input);
      long min = Apriori.minSupportCount(minSupport, n);
      String output = table("frequent");
      tables.add(output + ".pass");
      Apriori.Result r = Apriori.run(client, input, output, min, maxSize, !noCombiner, ProgressListener.console());
      if (System.console() != null) {
        System.err.println();
      }
      for (Apriori.Pass p : r.passes()) {
        jobs.add(p.job());
        System.out.printf("pass %d: %s candidates, %,d frequent%n", p.k(),
            p.k() == 1 ? "all items as" : String.format("%,d", p.candidates()), p.frequent());
      }
      Path file = dump(client, output, out).file();
      summary(String.format("%,d frequent itemsets (support >= %,d of %,d transactions) written to %s",
          r.frequent().size(), min, n, file));
      return 0;
    }
  }
}
