package org.sss.bench.synthetic;

import java.io.BufferedWriter;
import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardOpenOption;
import java.util.ArrayList;
import java.util.Collections;
import java.util.LinkedHashMap;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.Set;

/** The console tables, and in the output directory results.csv, report.md and the plots. */
public final class Report {
  public static final String CSV_HEADER = "workload,param,value,engine,combiner,phase,seconds,verified";
  /** Counters shown in the report, per engine. */
  static final List<String> SSS_COUNTERS = List.of("map.recordsOut", "map.recordsShuffled", "map.bytesShuffled",
      "reduce.recordsIn", "reduce.recordsOut", "map.millis", "reduce.millis");
  static final List<String> HADOOP_COUNTERS = List.of("MAP_OUTPUT_RECORDS", "COMBINE_OUTPUT_RECORDS",
      "REDUCE_INPUT_RECORDS", "REDUCE_SHUFFLE_BYTES", "SPILLED_RECORDS", "REDUCE_OUTPUT_RECORDS", "GC_TIME_MILLIS");

  private final Path dir;

  /** Creates the directory and results.csv (header only). */
  public Report(Path dir) throws IOException {
    this.dir = dir;
    Files.createDirectories(dir);
    Files.writeString(dir.resolve("results.csv"), CSV_HEADER + "\n", StandardCharsets.UTF_8);
  }

  /** Appends a run's rows (load and job) to results.csv at once, so a partial run keeps them. */
  public void append(Record r) throws IOException {
    if (r.result() == null) {
      return;
    }
    var p = r.point();
    String prefix = String.join(",", p.workload(), p.param(), p.value(), r.engine(),
        Boolean.toString(p.params().combinerEnabled()));
    String rows = prefix + ",load," + seconds(r.result().loadSeconds()) + "," + r.verified() + "\n"
        + prefix + ",job," + seconds(r.result().jobSeconds()) + "," + r.verified() + "\n";
    Files.writeString(dir.resolve("results.csv"), rows, StandardCharsets.UTF_8, StandardOpenOption.APPEND);
  }

  static String seconds(double s) {
    return String.format(Locale.ROOT, "%.3f", s);
  }

  public static double median(List<Double> xs) {
    List<Double> s = new ArrayList<>(xs);
    Collections.sort(s);
    int n = s.size();
    return n == 0 ? Double.NaN : n % 2 == 1 ? s.get(n / 2) : (s.get(n / 2 - 1) + s.get(n / 2)) / 2;
  }

  /**
   * The table of one workload: a row per swept value, load and job seconds (median over repeats)
   * per engine and combiner setting, and the ratio of Hadoop's job time to SSS's.
   */
  public static String table(SweepPlan.Workload w, List<Record> all, boolean markdown) {
    List<Record> recs = all.stream().filter(r -> r.point().workload().equals(w.name())).toList();
    Set<String> series = new LinkedHashSet<>();
    Map<String, Map<String, List<Record>>> cells = new LinkedHashMap<>();
    for (Record r : recs) {
      series.add(r.series());
      cells.computeIfAbsent(r.point().value(), v -> new LinkedHashMap<>())
          .computeIfAbsent(r.series(), s -> new ArrayList<>()).add(r);
    }
    List<String> header = new ArrayList<>();
    header.add(w.param().isEmpty() ? "point" : w.param());
    for (String s : series) {
      header.add(s + " load s");
      header.add(s + " job s");
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
        cols.add(cell(rs, true));
        cols.add(cell(rs, false));
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

  static double jobMedian(List<Record> rs) {
    List<Double> xs = rs.stream().filter(r -> r.result() != null).map(r -> r.result().jobSeconds()).toList();
    return median(xs);
  }

  private static String cell(List<Record> rs, boolean load) {
    List<Double> xs = new ArrayList<>();
    boolean bad = false;
    String note = null;
    for (Record r : rs) {
      if (r.result() == null) {
        note = r.note().startsWith("skipped") ? "n/a" : "FAILED";
        continue;
      }
      xs.add(load ? r.result().loadSeconds() : r.result().jobSeconds());
      bad |= !r.verified();
    }
    if (xs.isEmpty()) {
      return note == null ? "-" : note;
    }
    return String.format(Locale.ROOT, "%.2f", median(xs)) + (bad ? " (UNVERIFIED)" : "");
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
        + ", seconds" + (w.repeats() > 1 ? " (median of " + w.repeats() + ")" : "");
  }

  /** Writes report.md and a plot per swept workload. */
  public void finish(List<SweepPlan.Workload> workloads, List<Record> records, String command, String machine)
      throws IOException {
    StringBuilder md = new StringBuilder();
    md.append("# Synthetic benchmark: SSS and Hadoop MapReduce\n\n");
    md.append("Command:\n\n```\n").append(command).append("\n```\n\n");
    md.append("Machine:\n\n```\n").append(machine.strip()).append("\n```\n\n");
    md.append("Times are wall-clock seconds seen by the client: *load* stores the input in each engine's natural "
        + "storage (SSS: the bulk writer into a table; Hadoop: one SequenceFile per node), *job* runs the map/reduce "
        + "job from submission to completion. Every run is verified afterwards (counters and a scan of the output), "
        + "outside the timed phases. Without `--cluster`, SSS runs on an embedded cluster started once per node count "
        + "(untimed) and kept for later runs, as a deployed cluster is; every run creates and drops its own tables.\n\n");
    for (SweepPlan.Workload w : workloads) {
      md.append("## ").append(w.name()).append("\n\n");
      md.append("From `").append(w.source()).append("`; engines ").append(String.join(", ", w.engines()))
          .append(w.repeats() > 1 ? "; median of " + w.repeats() + " repeats" : "").append(".\n\n");
      Set<String> shapes = new LinkedHashSet<>();
      for (SweepPlan.Point p : w.points()) {
        shapes.add((p.value().isEmpty() ? "" : p.param() + "=" + p.value() + ": ") + p.params().describe());
      }
      for (String s : shapes) {
        md.append("- ").append(s).append('\n');
      }
      md.append('\n').append(table(w, records, true)).append('\n');
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
          md.append("- **").append(r.engine()).append("** ").append(r.point().value().isEmpty() ? ""
              : r.point().param() + "=" + r.point().value() + ": ").append(n).append('\n');
        }
      }
      if (!seen.isEmpty()) {
        md.append('\n');
      }
      md.append("Counters (first repeat):\n\n");
      md.append(counterTable(w, records)).append('\n');
    }
    Files.writeString(dir.resolve("report.md"), md.toString(), StandardCharsets.UTF_8);
    Files.writeString(dir.resolve("command.txt"), command + "\n", StandardCharsets.UTF_8);
    Files.writeString(dir.resolve("machine.txt"), machine, StandardCharsets.UTF_8);
  }

  static String counterTable(SweepPlan.Workload w, List<Record> records) {
    List<String> header = List.of(w.param().isEmpty() ? "point" : w.param(), "run", "counters");
    List<List<String>> rows = new ArrayList<>();
    for (Record r : records) {
      if (!r.point().workload().equals(w.name()) || r.result() == null || r.repeat() != 0) {
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
