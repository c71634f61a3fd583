package org.sss.bench.synthetic;

import java.io.BufferedWriter;
import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardOpenOption;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.Set;

/**
 * The console tables, and in the output directory results.csv (every run, warm-ups marked),
 * summary.csv (per point, engine and phase: runs, median, range), report.md and the plots.
 * Every figure in a table is the median of the point's verified timed runs; warm-ups are listed
 * apart and never enter a median, nor does a run whose answer was wrong.
 */
public final class Report {
  public static final String CSV_HEADER = "workload,param,value,engine,combiner,kind,run,phase,seconds,verified";
  public static final String SUMMARY_HEADER =
      "workload,param,value,engine,combiner,phase,warmups,runs,median,min,max,verified";
  /** Counters shown in the report, per engine. */
  static final List<String> SSS_COUNTERS = List.of("map.recordsOut", "map.recordsShuffled", "map.bytesShuffled",
      "reduce.recordsIn", "reduce.recordsOut", "map.millis", "reduce.millis", "verify.keysReadByKey");
  static final List<String> HADOOP_COUNTERS = List.of("MAP_OUTPUT_RECORDS", "COMBINE_OUTPUT_RECORDS",
      "REDUCE_INPUT_RECORDS", "REDUCE_SHUFFLE_BYTES", "SPILLED_RECORDS", "REDUCE_OUTPUT_RECORDS", "GC_TIME_MILLIS",
      "verify.keysReadByKey");

  private final Path dir;

  /** Creates the directory and results.csv (header only). */
  public Report(Path dir) throws IOException {
    this.dir = dir;
    Files.createDirectories(dir);
    Files.writeString(dir.resolve("results.csv"), CSV_HEADER + "\n", StandardCharsets.UTF_8);
  }

  /**
   * Appends a run's rows (load and job) to results.csv at once, so a partial run keeps them; a
   * run that failed gets one job row with no seconds, so that every run is there.
   */
  public void append(Record r) throws IOException {
    if (r.result() == null && r.note().startsWith("skipped")) {
      return;
    }
    var p = r.point();
    String prefix = String.join(",", p.workload(), p.param(), p.value(), r.engine(),
        Boolean.toString(p.params().combinerEnabled()), r.kind(), Integer.toString(r.run() + 1));
    String rows = r.result() == null ? prefix + ",job,,false\n" : prefix + ",load," + seconds(r.result().loadSeconds()) + "," + r.verified() + "\n"
        + prefix + ",job," + seconds(r.result().jobSeconds()) + "," + r.verified() + "\n";
    Files.writeString(dir.resolve("results.csv"), rows, StandardCharsets.UTF_8, StandardOpenOption.APPEND);
  }

  static String seconds(double s) {
    return String.format(Locale.ROOT, "%.3f", s);
  }

  public static double median(List<Double> xs) {
    return Spread.of(xs).median();
  }

  /**
   * The seconds of one phase (load or job) of some records' timed runs that verified: a run whose
   * answer was wrong may have been fast because it skipped work, so its time is in no figure.
   */
  static Spread spread(List<Record> rs, boolean load) {
    return Spread.of(rs.stream().filter(r -> r.timed() && r.verified())
        .map(r -> load ? r.result().loadSeconds() : r.result().jobSeconds()).toList());
  }

  /** Records of one workload by swept value, then by series, in run order. */
  private static Map<String, Map<String, List<Record>>> cells(SweepPlan.Workload w, List<Record> all) {
    Map<String, Map<String, List<Record>>> cells = new LinkedHashMap<>();
    for (Record r : all) {
      if (r.point().workload().equals(w.name())) {
        cells.computeIfAbsent(r.point().value(), v -> new LinkedHashMap<>())
            .computeIfAbsent(r.series(), s -> new ArrayList<>()).add(r);
      }
    }
    return cells;
  }

  /**
   * The table of one workload: a row per swept value; per engine and combiner setting the
   * median load and job seconds of the timed runs and the job's range (fastest-slowest); and
   * the ratio of Hadoop's median job time to SSS's. A cell with fewer verified timed runs than
   * {@code repeats} (a run failed, or gave a wrong answer) says how many it has, and
   * "(UNVERIFIED)" when a timed run gave a wrong answer.
   */
  public static String table(SweepPlan.Workload w, List<Record> all, boolean markdown) {
    Map<String, Map<String, List<Record>>> cells = cells(w, all);
    Set<String> series = new LinkedHashSet<>();
    cells.values().forEach(m -> series.addAll(m.keySet()));
    List<String> header = new ArrayList<>();
    header.add(w.param().isEmpty() ? "point" : w.param());
    for (String s : series) {
      header.add(s + " load s");
      header.add(s + " job s");
      if (w.repeats() > 1) {
        header.add(s + " job range");
      }
    }
    List<String[]> ratios = new ArrayList<>();
    for (String s : series) {
      if (s.startsWith("sss")) {
        String h = "hadoop" + s.substring(3);
        if (series.contains(h)) {
          ratios.add(new String[] {s, h});
          header.add(h + "/" + s + " job");
        }
      }
    }
    if (series.contains("sss") && series.contains("sss+combiner")) {
      header.add("sss/sss+combiner job");
      ratios.add(new String[] {"sss+combiner", "sss"});
    }
    List<List<String>> rows = new ArrayList<>();
    for (Map.Entry<String, Map<String, List<Record>>> row : cells.entrySet()) {
      List<String> cols = new ArrayList<>();
      cols.add(row.getKey().isEmpty() ? "-" : row.getKey());
      for (String s : series) {
        List<Record> rs = row.getValue().getOrDefault(s, List.of());
        cols.add(cell(rs, true, w.repeats()));
        cols.add(cell(rs, false, w.repeats()));
        if (w.repeats() > 1) {
          cols.add(spread(rs, false).range());
        }
      }
      for (String[] ratio : ratios) {
        double a = jobMedian(row.getValue().getOrDefault(ratio[0], List.of()));
        double b = jobMedian(row.getValue().getOrDefault(ratio[1], List.of()));
        cols.add(Double.isNaN(a) || Double.isNaN(b) ? "-" : String.format(Locale.ROOT, "%.1fx", b / a));
      }
      rows.add(cols);
    }
    return format(header, rows, markdown);
  }

  /**
   * One line that says who won: at how many points (swept value and combiner setting) SSS's
   * median job time beat Hadoop's, and the spread of Hadoop/SSS ratios. Null when no point ran
   * on both engines. Says where Hadoop ran, since its local job runner is not a cluster.
   */
  public static String verdict(List<SweepPlan.Workload> workloads, List<Record> all) {
    int points = 0;
    int wins = 0;
    List<Double> ratios = new ArrayList<>();
    boolean local = true;
    for (SweepPlan.Workload w : workloads) {
      local &= w.hadoopConf() == null;
      for (Map<String, List<Record>> row : cells(w, all).values()) {
        for (String s : row.keySet()) {
          if (!s.startsWith("sss") || !row.containsKey("hadoop" + s.substring(3))) {
            continue;
          }
          double sss = jobMedian(row.get(s));
          double hadoop = jobMedian(row.get("hadoop" + s.substring(3)));
          if (Double.isNaN(sss) || Double.isNaN(hadoop)) {
            continue;
          }
          points++;
          wins += sss < hadoop ? 1 : 0;
          ratios.add(hadoop / sss);
        }
      }
    }
    if (points == 0) {
      return null;
    }
    Spread r = Spread.of(ratios);
    return String.format(Locale.ROOT, "verdict: SSS faster than Hadoop (%s) at %d of %d points;"
        + " Hadoop/SSS median job time %.1fx (from %.1fx to %.1fx)",
        local ? "local job runner" : "its cluster", wins, points, r.median(), r.min(), r.max());
  }

  static double jobMedian(List<Record> rs) {
    return spread(rs, false).median();
  }

  private static String cell(List<Record> rs, boolean load, int repeats) {
    Spread sp = spread(rs, load);
    boolean bad = rs.stream().anyMatch(r -> r.timed() && r.result() != null && !r.verified());
    if (sp.runs() == 0) {
      String note = bad ? "UNVERIFIED" : "-";
      for (Record r : rs) {
        if (r.timed() && r.result() == null) {
          note = r.note().startsWith("skipped") ? "n/a" : bad ? "FAILED, UNVERIFIED" : "FAILED";
        }
      }
      return note;
    }
    return String.format(Locale.ROOT, "%.2f", sp.median()) + (sp.runs() < repeats ? " (n=" + sp.runs() + ")" : "")
        + (bad ? " (UNVERIFIED)" : "");
  }

  /** The warm-up runs of one workload (untimed, in no median): point, series, seconds, verified. */
  public static String warmupTable(SweepPlan.Workload w, List<Record> all, boolean markdown) {
    List<String> header = List.of(w.param().isEmpty() ? "point" : w.param(), "series", "run", "load s", "job s",
        "verified");
    List<List<String>> rows = new ArrayList<>();
    for (Record r : all) {
      if (r.point().workload().equals(w.name()) && r.warmup()) {
        rows.add(List.of(r.point().value().isEmpty() ? "-" : r.point().value(), r.series(),
            "warm-up " + (r.run() + 1), r.result() == null ? "-" : String.format(Locale.ROOT, "%.2f",
                r.result().loadSeconds()), r.result() == null ? "FAILED" : String.format(Locale.ROOT, "%.2f",
                r.result().jobSeconds()), r.result() == null ? "-" : r.verified() ? "yes" : "NO"));
      }
    }
    return rows.isEmpty() ? "" : format(header, rows, markdown);
  }

  /**
   * summary.csv's rows of one workload: per point, series and phase, the verified timed runs'
   * number, median and range, and whether every run (warm-ups too) verified.
   */
  static List<String> summaryRows(SweepPlan.Workload w, List<Record> all) {
    List<String> out = new ArrayList<>();
    for (Map<String, List<Record>> bySeries : cells(w, all).values()) {
      for (List<Record> rs : bySeries.values()) {
        Record first = rs.get(0);
        if (first.result() == null && first.note().startsWith("skipped")) {
          continue;
        }
        var p = first.point();
        long warmups = rs.stream().filter(Record::warmup).count();
        boolean verified = rs.stream().allMatch(Record::verified);
        for (boolean load : new boolean[] {true, false}) {
          Spread sp = spread(rs, load);
          out.add(String.join(",", p.workload(), p.param(), p.value(), first.engine(),
              Boolean.toString(p.params().combinerEnabled()), load ? "load" : "job", Long.toString(warmups),
              Integer.toString(sp.runs()), seconds(sp.median()), seconds(sp.min()), seconds(sp.max()),
              Boolean.toString(verified)));
        }
      }
    }
    return out;
  }

  static String format(List<String> header, List<List<String>> rows, boolean markdown) {
    int[] width = new int[header.size()];
    for (int i = 0; i < header.size(); i++) {
      width[i] = header.get(i).length();
      for (List<String> r : rows) {
        width[i] = Math.max(width[i], r.get(i).length());
      }
    }
    StringBuilder sb = new StringBuilder();
    line(sb, header, width, markdown);
    if (markdown) {
      sb.append('|');
      for (int i = 0; i < width.length; i++) {
        sb.append(i == 0 ? "---" : "---:").append('|');
      }
      sb.append('\n');
    } else {
      int total = 0;
      for (int w : width) {
        total += w + 2;
      }
      sb.append("-".repeat(total)).append('\n');
    }
    for (List<String> r : rows) {
      line(sb, r, width, markdown);
    }
    return sb.toString();
  }

  private static void line(StringBuilder sb, List<String> cols, int[] width, boolean markdown) {
    if (markdown) {
      sb.append("| ").append(String.join(" | ", cols)).append(" |\n");
      return;
    }
    for (int i = 0; i < cols.size(); i++) {
      String c = cols.get(i);
      sb.append(i == 0 ? String.format("%-" + width[i] + "s", c) : String.format("%" + width[i] + "s", c)).append("  ");
    }
    sb.append('\n');
  }

  /** The title line of a workload's table. */
  public static String title(SweepPlan.Workload w) {
    return w.name() + (w.param().isEmpty() ? "" : " (sweep " + w.param() + ", total " + Sizes.format(w.totalBytes()) + ")")
        + (w.replication() > 1 ? ", SSS keeping " + w.replication() + " copies" : "") + ", seconds: " + runs(w);
  }

  /** How many runs each figure is: "median of 3 timed runs (range: fastest-slowest), after 1 warm-up run ...". */
  public static String runs(SweepPlan.Workload w) {
    return (w.repeats() == 1 ? "1 timed run per point and engine" : "median of " + w.repeats()
        + " timed runs per point and engine (range: fastest-slowest)") + ", after " + (w.warmups() == 0
        ? "no warm-up run" : w.warmups() + " untimed warm-up run" + (w.warmups() == 1 ? "" : "s")
        + " of each series' first point");
  }

  /** The report's account of how the figures were taken (the clock, warm-ups, runs, verification). */
  static final String METHOD = "Times are wall-clock seconds seen by the client, on one clock for both engines: "
      + "*load* stores the input in each engine's natural storage (SSS: the bulk writer into a table; Hadoop: one "
      + "SequenceFile per node); *job* runs from just before the job's submission (SSS: `client.submit`; Hadoop: "
      + "`Job.submit`) to the first of a series of polls, every " + JobClock.POLL_MILLIS + " ms on both engines, that "
      + "sees the job complete (SSS: `RunningJob.isDone`, set when the coordinator has committed the output; "
      + "Hadoop: `Job.isComplete`, set by the local runner after the output committer's commitJob). "
      + "Every point runs `repeats` timed times per engine; a table gives the median of the timed runs and, for "
      + "the job, their range (fastest-slowest); `summary.csv` has both for every phase. Before a series' (engine "
      + "and combiner setting) first timed run, `warmups` untimed runs of that same point warm its code (class "
      + "loading, JIT) on both engines alike: SSS's embedded cluster and Hadoop's local runner live in the "
      + "benchmark's JVM. Warm-ups are listed apart and enter no median, nor does a run that did not verify (its "
      + "cell says UNVERIFIED and how many runs the figure is). Every run, warm-ups too, is verified "
      + "outside the timed phases: the job's counters (input records and a digest of every input pair's key and "
      + "value, values and checksum reduced, the number of reduce groups, and a digest of every group's key, "
      + "value count and checksum), every output "
      + "pair read where it is stored (in the partition or part file its key's hash names; per key, the exact "
      + "multiset of output values), and a sample of keys read by key. Without `--cluster`, SSS runs on an "
      + "embedded cluster started once per node count (untimed) and kept for later runs, as a deployed cluster is; "
      + "every run creates and drops its own tables.";

  /** Writes report.md, summary.csv and a plot per swept workload. */
  public void finish(List<SweepPlan.Workload> workloads, List<Record> records, String command, String machine)
      throws IOException {
    StringBuilder md = new StringBuilder();
    md.append("# Synthetic benchmark: SSS and Hadoop MapReduce\n\n");
    md.append("Command:\n\n```\n").append(command).append("\n```\n\n");
    md.append("Machine:\n\n```\n").append(machine.strip()).append("\n```\n\n");
    md.append(METHOD).append("\n\n");
    List<String> summary = new ArrayList<>();
    summary.add(SUMMARY_HEADER);
    for (SweepPlan.Workload w : workloads) {
      summary.addAll(summaryRows(w, records));
      md.append("## ").append(w.name()).append("\n\n");
      md.append("From `").append(w.source()).append("`; engines ").append(String.join(", ", w.engines()))
          .append("; SSS keeping ").append(w.replication()).append(w.replication() == 1 ? " copy" : " copies")
          .append(" of stored pairs; ").append(runs(w)).append(".\n\n");
      Set<String> shapes = new LinkedHashSet<>();
      for (SweepPlan.Point p : w.points()) {
        shapes.add((p.value().isEmpty() ? "" : p.param() + "=" + p.value() + ": ") + p.params().describe());
      }
      for (String s : shapes) {
        md.append("- ").append(s).append('\n');
      }
      md.append('\n').append(table(w, records, true)).append('\n');
      String warm = warmupTable(w, records, true);
      if (!warm.isEmpty()) {
        md.append("Warm-up runs (untimed, in no figure above):\n\n").append(warm).append('\n');
      }
      Path png = dir.resolve(w.name() + ".png");
      if (Plots.plot(w, records, png)) {
        md.append("![").append(w.name()).append("](").append(png.getFileName()).append(")\n\n");
      }
      List<Record> notes = records.stream().filter(r -> r.point().workload().equals(w.name())
          && (r.result() == null || !r.verified())).toList();
      Set<String> seen = new LinkedHashSet<>();
      for (Record r : notes) {
        String n = r.note() != null ? r.note() : r.result().problem();
        if (seen.add(r.engine() + ": " + n)) {
          md.append("- **").append(r.series()).append("** ").append(r.point().value().isEmpty() ? ""
              : r.point().param() + "=" + r.point().value() + ": ").append(r.warmup() ? "(warm-up) " : "")
              .append(n).append('\n');
        }
      }
      if (!seen.isEmpty()) {
        md.append('\n');
      }
      md.append("Counters (first timed run):\n\n");
      md.append(counterTable(w, records)).append('\n');
    }
    Files.writeString(dir.resolve("report.md"), md.toString(), StandardCharsets.UTF_8);
    Files.write(dir.resolve("summary.csv"), summary, StandardCharsets.UTF_8);
    Files.writeString(dir.resolve("command.txt"), command + "\n", StandardCharsets.UTF_8);
    Files.writeString(dir.resolve("machine.txt"), machine, StandardCharsets.UTF_8);
  }

  static String counterTable(SweepPlan.Workload w, List<Record> records) {
    List<String> header = List.of(w.param().isEmpty() ? "point" : w.param(), "run", "counters");
    List<List<String>> rows = new ArrayList<>();
    for (Record r : records) {
      if (!r.point().workload().equals(w.name()) || r.result() == null || r.warmup() || r.run() != 0) {
        continue;
      }
      List<String> names = r.engine().equals("sss") ? SSS_COUNTERS : HADOOP_COUNTERS;
      StringBuilder c = new StringBuilder();
      for (String n : names) {
        Long v = r.result().counters().get(n);
        if (v != null) {
          c.append(c.length() == 0 ? "" : ", ").append(n).append('=').append(String.format(Locale.ROOT, "%,d", v));
        }
      }
      rows.add(List.of(r.point().value().isEmpty() ? "-" : r.point().value(), r.series(), c.toString()));
    }
    return format(header, rows, true);
  }

  /** What the machine is: cores, memory, Java, OS. */
  public static String machine() {
    StringBuilder sb = new StringBuilder();
    sb.append("nproc: ").append(Runtime.getRuntime().availableProcessors()).append('\n');
    try {
      for (String l : Files.readAllLines(Path.of("/proc/meminfo"))) {
        if (l.startsWith("MemTotal")) {
          sb.append(l.replaceAll("\\s+", " ")).append('\n');
        }
      }
      for (String l : Files.readAllLines(Path.of("/proc/cpuinfo"))) {
        if (l.startsWith("model name")) {
          sb.append("cpu: ").append(l.substring(l.indexOf(':') + 1).trim()).append('\n');
          break;
        }
      }
    } catch (IOException | RuntimeException ignored) {
      // not Linux
    }
    sb.append("java: ").append(System.getProperty("java.vm.name")).append(' ')
        .append(System.getProperty("java.runtime.version")).append(" (").append(System.getProperty("java.vendor"))
        .append(")\n");
    sb.append("os: ").append(System.getProperty("os.name")).append(' ').append(System.getProperty("os.version"))
        .append(' ').append(System.getProperty("os.arch")).append('\n');
    sb.append("max heap: ").append(Runtime.getRuntime().maxMemory() >> 20).append(" MiB\n");
    sb.append("hadoop: ").append(hadoopVersion()).append('\n');
    return sb.toString();
  }

  private static String hadoopVersion() {
    try {
      return org.apache.hadoop.util.VersionInfo.getVersion();
    } catch (Throwable e) {
      return "unknown";
    }
  }

  /** Writes a text file next to the results. */
  public void write(String name, String text) throws IOException {
    try (BufferedWriter w = Files.newBufferedWriter(dir.resolve(name), StandardCharsets.UTF_8)) {
      w.write(text);
    }
  }
}
