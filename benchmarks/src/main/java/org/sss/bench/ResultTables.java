package org.sss.bench;

import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.concurrent.Callable;
import java.util.function.Function;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import org.sss.client.cli.CommandExtension;
import picocli.CommandLine.Command;
import picocli.CommandLine.Option;
import picocli.CommandLine.Parameters;

/**
 * The tables of figures in the benchmark READMEs, rendered from the CSV files committed beside
 * them, so that a README cannot state a figure its results do not hold.
 *
 * <p>A README marks each table it wants rendered:
 * <pre>
 *   &lt;!-- table: NAME --&gt;
 *   (rendered; do not edit)
 *   &lt;!-- end table --&gt;
 * </pre>
 * and {@code bin/sss bench-tables} rewrites what lies between; {@code --check} only says which
 * README is out of date (a test runs it over the committed READMEs).
 */
@Command(name = "bench-tables", mixinStandardHelpOptions = true,
    description = "Renders the tables of the benchmark READMEs from the CSV files beside them.")
public final class ResultTables implements Callable<Integer> {
  private static final Pattern MARKED = Pattern.compile(
      "(<!-- table: ([a-z-]+) -->\n)(.*?)(<!-- end table -->)", Pattern.DOTALL);
  /** The READMEs with rendered tables, relative to the repository root. */
  public static final List<String> READMES = List.of("benchmarks/results/synthetic/README.md",
      "benchmarks/results/classic/README.md", "benchmarks/results/store/README.md");

  private static final Map<String, Function<Path, String>> TABLES = new LinkedHashMap<>();

  static {
    TABLES.put("synthetic-vs-hadoop", dir -> syntheticVsHadoop(Csv.read(dir.resolve("summary.csv"))));
    TABLES.put("synthetic-combiner", dir -> syntheticCombiner(Csv.read(dir.resolve("summary.csv"))));
    TABLES.put("classic-jobs", dir -> classicJobs(Csv.read(dir.resolve("results.csv"))));
    TABLES.put("store-target", dir -> storeTarget(Csv.read(dir.resolve("results.csv"))));
  }

  @Option(names = "--check", description = "change nothing; exit 1 naming each README whose tables differ")
  boolean check;

  @Parameters(arity = "0..*", paramLabel = "README",
      description = "READMEs to render (default: the benchmark READMEs, from the repository root)")
  List<Path> readmes = new ArrayList<>();

  @Override
  public Integer call() throws IOException {
    List<Path> files = readmes.isEmpty() ? READMES.stream().map(Path::of).toList() : readmes;
    int stale = 0;
    for (Path f : files) {
      String text = Files.readString(f, StandardCharsets.UTF_8);
      String rendered = render(text, f.toAbsolutePath().getParent());
      if (!rendered.equals(text)) {
        stale++;
        if (check) {
          System.err.println(f + ": tables differ from its CSV files (run bin/sss bench-tables)");
        } else {
          Files.writeString(f, rendered, StandardCharsets.UTF_8);
          System.err.println(f + ": tables rendered");
        }
      }
    }
    return check && stale > 0 ? 1 : 0;
  }

  /** {@code text} with every marked table rendered from the CSV files in {@code dir}. */
  public static String render(String text, Path dir) {
    long opened = text.split("<!-- table:", -1).length - 1;
    long read = MARKED.matcher(text).results().count();
    if (opened != read) {
      throw new IllegalArgumentException(opened + " table markers but " + read + " readable: each is '<!-- table: NAME -->'"
          + " (lower-case letters and dashes) on a line of its own, closed by '<!-- end table -->'");
    }
    Matcher m = MARKED.matcher(text);
    StringBuilder out = new StringBuilder();
    while (m.find()) {
      Function<Path, String> table = TABLES.get(m.group(2));
      if (table == null) {
        throw new IllegalArgumentException("no table named '" + m.group(2) + "'; known: " + TABLES.keySet());
      }
      m.appendReplacement(out, Matcher.quoteReplacement(m.group(1) + table.apply(dir) + m.group(4)));
    }
    m.appendTail(out);
    return out.toString();
  }

  /** Per workload (and combiner setting): Hadoop's median job time over SSS's, fastest to slowest point. */
  static String syntheticVsHadoop(Csv summary) {
    StringBuilder t = new StringBuilder(
        "| workload | combiner | points | SSS faster at | Hadoop / SSS, median job seconds |\n|---|---|---|---:|---:|\n");
    Map<String, List<String[]>> series = new LinkedHashMap<>();
    for (String[] r : summary.rows) {
      if (summary.get(r, "phase").equals("job") && summary.get(r, "engine").equals("sss") && verified(summary, r)) {
        series.computeIfAbsent(summary.get(r, "workload") + "," + summary.get(r, "combiner"), k -> new ArrayList<>())
            .add(r);
      }
    }
    for (Map.Entry<String, List<String[]>> s : series.entrySet()) {
      List<Double> ratios = new ArrayList<>();
      String param = null;
      for (String[] sss : s.getValue()) {
        String[] hadoop = summary.find(Map.of("workload", summary.get(sss, "workload"), "combiner",
            summary.get(sss, "combiner"), "value", summary.get(sss, "value"), "engine", "hadoop", "phase", "job"));
        if (hadoop != null && verified(summary, hadoop)) {
          ratios.add(summary.number(hadoop, "median") / summary.number(sss, "median"));
          param = summary.get(sss, "param");
        }
      }
      if (ratios.isEmpty()) {
        continue;
      }
      List<String[]> points = s.getValue();
      long faster = ratios.stream().filter(r -> r > 1).count();
      String[] key = s.getKey().split(",");
      t.append("| ").append(key[0]).append(" | ").append(key[1].equals("true") ? "on" : "off").append(" | ")
          .append(param).append(' ').append(summary.get(points.get(0), "value")).append(" … ")
          .append(summary.get(points.get(points.size() - 1), "value")).append(" | ").append(faster).append(" of ")
          .append(ratios.size()).append(" | ").append(range(ratios)).append(" |\n");
    }
    return t.toString();
  }

  /** Per shuffle point: each engine's median job time without its combiner over with it. */
  static String syntheticCombiner(Csv summary) {
    StringBuilder t = new StringBuilder("| mapoutKeyCount | SSS: without / with combiner | Hadoop: without / with combiner |\n"
        + "|---|---:|---:|\n");
    for (String[] r : summary.rows) {
      if (!summary.get(r, "workload").equals("shuffle-intensive") || !summary.get(r, "phase").equals("job")
          || !summary.get(r, "engine").equals("sss") || !summary.get(r, "combiner").equals("false")) {
        continue;
      }
      String value = summary.get(r, "value");
      t.append("| ").append(value);
      for (String engine : List.of("sss", "hadoop")) {
        String[] off = summary.find(Map.of("workload", "shuffle-intensive", "value", value, "engine", engine,
            "phase", "job", "combiner", "false"));
        String[] on = summary.find(Map.of("workload", "shuffle-intensive", "value", value, "engine", engine,
            "phase", "job", "combiner", "true"));
        t.append(" | ").append(off == null || on == null || !verified(summary, off) || !verified(summary, on) ? "-"
            : ratio(summary.number(off, "median") / summary.number(on, "median")));
      }
      t.append(" |\n");
    }
    return t.toString();
  }

  /** Per job and engine: medians of the timed runs' phases, the job's range, and SSS's job time against it. */
  static String classicJobs(Csv results) {
    StringBuilder t = new StringBuilder("| job | input | engine | start s | load s | job s | job range | job / SSS job "
        + "| file to file s | file to file range | file to file / SSS | verified |\n"
        + "|---|---|---|---:|---:|---:|---:|---:|---:|---:|---:|---|\n");
    Map<String, Map<String, Map<String, List<Double>>>> byJob = new LinkedHashMap<>();
    Map<String, int[]> runs = new LinkedHashMap<>();
    for (String[] r : results.rows) {
      if (!results.get(r, "kind").equals("timed")) {
        continue;
      }
      String job = results.get(r, "workload") + "|" + results.get(r, "value");
      String engine = results.get(r, "engine");
      boolean ok = verified(results, r);
      if (results.get(r, "phase").equals("job")) {
        runs.merge(job + "|" + engine, new int[] {ok ? 1 : 0, 1}, (a, b) -> new int[] {a[0] + b[0], a[1] + b[1]});
      }
      if (!ok) {
        continue; // an unverified run is in no median, range or ratio
      }
      byJob.computeIfAbsent(job, k -> new LinkedHashMap<>()).computeIfAbsent(engine, k -> new LinkedHashMap<>())
          .computeIfAbsent(results.get(r, "phase"), k -> new ArrayList<>()).add(results.number(r, "seconds"));
    }
    for (Map.Entry<String, Map<String, Map<String, List<Double>>>> job : byJob.entrySet()) {
      Map<String, List<Double>> sss = job.getValue().getOrDefault("sss", Map.of());
      for (Map.Entry<String, Map<String, List<Double>>> e : job.getValue().entrySet()) {
        String[] name = job.getKey().split("\\|");
        boolean isSss = e.getKey().equals("sss");
        t.append("| ").append(name[0]).append(" | ").append(name[1]).append(" | ").append(engineName(e.getKey()))
            .append(" | ").append(medianOrDash(e.getValue().get("start")))
            .append(" | ").append(medianOrDash(e.getValue().get("load")))
            .append(phaseCells(e.getValue().get("job"), isSss ? null : sss.get("job")))
            .append(phaseCells(e.getValue().get("file-to-file"), isSss ? null : sss.get("file-to-file")))
            .append(" | ").append(verifiedRuns(runs.get(job.getKey() + "|" + e.getKey()))).append(" |\n");
      }
    }
    return t.toString();
  }

  /** A phase's median, range and ratio to SSS's median (none for SSS's own row, or without SSS's figure). */
  private static String phaseCells(List<Double> times, List<Double> sssTimes) {
    if (times == null) {
      return " | - | - | -";
    }
    return " | " + medianOrDash(times) + " | " + String.format(Locale.ROOT, "%.2f–%.2f",
        times.stream().mapToDouble(d -> d).min().orElseThrow(), times.stream().mapToDouble(d -> d).max().orElseThrow())
        + " | " + (sssTimes == null ? "-" : ratio(median(times) / median(sssTimes)));
  }

  /** Per shape: the client through 3 processes against raw RocksDB, for puts and full scans. */
  static String storeTarget(Csv results) {
    StringBuilder t = new StringBuilder("| shape | path | put, ratio to raw | full scan, ratio to raw | ordered scan, ratio to raw |\n"
        + "|---|---|---:|---:|---:|\n");
    List<String> shapes = results.rows.stream().filter(r -> results.get(r, "path").equals("raw-rocksdb"))
        .map(r -> results.get(r, "shape")).distinct().toList(); // the text rows have no raw RocksDB to compare with
    for (String shape : shapes) {
      for (String path : List.of("client-processes-3", "client-embedded-1")) {
        t.append("| ").append(shape).append(" | ").append(path);
        for (String op : List.of("put", "scan", "scan-ordered")) {
          String[] row = results.find(Map.of("shape", shape, "path", path, "operation", op));
          String[] raw = results.find(Map.of("shape", shape, "path", "raw-rocksdb",
              "operation", op.equals("scan-ordered") ? "scan" : op));
          t.append(" | ").append(row == null || raw == null ? "-" : String.format(Locale.ROOT, "%.2f (%s vs %s MB/s)",
              results.number(row, "MB/s") / results.number(raw, "MB/s"), results.get(row, "MB/s"),
              results.get(raw, "MB/s")));
        }
        t.append(" |\n");
      }
    }
    return t.toString();
  }

  private static boolean verified(Csv csv, String[] row) {
    return Boolean.parseBoolean(csv.get(row, "verified"));
  }

  /** "yes" when every timed run was verified, else how many of them were. */
  private static String verifiedRuns(int[] okAndAll) {
    return okAndAll == null ? "-" : okAndAll[0] == okAndAll[1] ? "yes" : okAndAll[0] + " of " + okAndAll[1];
  }

  private static String engineName(String engine) {
    return switch (engine) {
      case "sss" -> "SSS";
      case "hadoop" -> "Hadoop";
      case "spark" -> "Spark";
      default -> engine;
    };
  }

  private static String medianOrDash(List<Double> values) {
    return values == null ? "-" : String.format(Locale.ROOT, "%.2f", median(values));
  }

  static double median(List<Double> values) {
    double[] v = values.stream().mapToDouble(d -> d).sorted().toArray();
    return v.length % 2 == 1 ? v[v.length / 2] : (v[v.length / 2 - 1] + v[v.length / 2]) / 2;
  }

  private static String range(List<Double> ratios) {
    double lo = ratios.stream().mapToDouble(d -> d).min().orElseThrow();
    double hi = ratios.stream().mapToDouble(d -> d).max().orElseThrow();
    return ratio(lo) + "–" + ratio(hi);
  }

  private static String ratio(double r) {
    return String.format(Locale.ROOT, r < 10 ? "%.2fx" : "%.1fx", r);
  }

  /** A CSV file with a header line and no quoted fields (the results files are written so). */
  static final class Csv {
    final List<String> header;
    final List<String[]> rows = new ArrayList<>();

    Csv(List<String> lines, String name) {
      header = Arrays.asList(lines.get(0).split(","));
      for (int i = 1; i < lines.size(); i++) {
        String line = lines.get(i);
        if (line.isBlank()) {
          continue;
        }
        String[] fields = line.split(",", -1);
        if (line.contains("\"") || fields.length != header.size()) {
          throw new IllegalArgumentException(name + " line " + (i + 1) + ": expected " + header.size()
              + " plain fields (no quotes), got: " + line);
        }
        rows.add(fields);
      }
    }

    static Csv read(Path file) {
      try {
        return new Csv(Files.readAllLines(file, StandardCharsets.UTF_8), file.toString());
      } catch (IOException e) {
        throw new IllegalStateException("cannot read " + file + ": " + e.getMessage(), e);
      }
    }

    String get(String[] row, String column) {
      int i = header.indexOf(column);
      if (i < 0) {
        throw new IllegalArgumentException("no column '" + column + "' in " + header);
      }
      return row[i];
    }

    double number(String[] row, String column) {
      return Double.parseDouble(get(row, column));
    }

    /** The first row whose columns hold the given values, or null. */
    String[] find(Map<String, String> where) {
      for (String[] r : rows) {
        if (where.entrySet().stream().allMatch(e -> get(r, e.getKey()).equals(e.getValue()))) {
          return r;
        }
      }
      return null;
    }
  }

  /** Registers {@code sss bench-tables}. */
  public static final class Extension implements CommandExtension {
    @Override
    public String name() {
      return "bench-tables";
    }

    @Override
    public Object command() {
      return new ResultTables();
    }
  }
}
