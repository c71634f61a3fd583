package org.sss.bench.classic;

import java.awt.Color;
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
import java.util.function.Function;
import org.knowm.xchart.BitmapEncoder;
import org.knowm.xchart.CategoryChart;
import org.knowm.xchart.CategoryChartBuilder;
import org.sss.bench.synthetic.JobClock;
import org.sss.bench.synthetic.Report;
import org.sss.bench.synthetic.Spread;

/**
 * The classic benchmark's results: rows appended to {@code results.csv} as runs finish (the
 * synthetic benchmark's columns: workload = the job, param/value = its size, combiner = whether
 * the job combines map output, kind = warmup or timed), a table per plan for the console and
 * {@code report.md} (per job and engine the median of the timed runs and the job's range;
 * warm-ups listed apart), and a bar chart of median job seconds.
 */
public final class ClassicReport {
  private final Path dir;
  private List<Double> clusterStarts = List.of();
  private String wordCountInput = "";
  private String wordCountSummary = "";

  /** @param dir the output directory, or null for no files; @param header write results.csv's header first */
  public ClassicReport(Path dir, boolean header) throws IOException {
    this.dir = dir;
    if (dir != null) {
      Files.createDirectories(dir);
      if (header || !Files.exists(dir.resolve("results.csv"))) {
        Files.writeString(dir.resolve("results.csv"), Report.CSV_HEADER + "\n", StandardCharsets.UTF_8);
      }
    }
  }

  void setClusterStarts(List<Double> s) {
    this.clusterStarts = List.copyOf(s);
  }

  void setWordCountInput(String s) {
    this.wordCountInput = s;
  }

  void setWordCountSummary(String s) {
    this.wordCountSummary = s;
  }

  /**
   * Appends an outcome's rows (start, load, job, file-to-file: those that apply); a run that failed gets one
   * job row with no seconds, so that every run is there.
   */
  public void append(ClassicBench.Outcome o) throws IOException {
    if (dir == null || o.skipped()) {
      return;
    }
    String prefix = String.join(",", o.job(), o.param(), csv(o.value()), o.engine(),
        Boolean.toString(!o.job().equals(ClassicPlan.RANDOMTEXTWRITER)), o.kind(), Integer.toString(o.run() + 1));
    StringBuilder rows = new StringBuilder();
    if (o.start() != null) {
      rows.append(prefix).append(",start,").append(sec(o.start())).append(',').append(o.verified()).append('\n');
    }
    if (o.load() != null) {
      rows.append(prefix).append(",load,").append(sec(o.load())).append(',').append(o.verified()).append('\n');
    }
    rows.append(prefix).append(",job,").append(o.ran() ? sec(o.jobSeconds()) : "").append(',')
        .append(o.ran() && o.verified()).append('\n');
    if (o.fileToFile() != null) {
      rows.append(prefix).append(",file-to-file,").append(sec(o.fileToFile())).append(',').append(o.verified())
          .append('\n');
    }
    Files.writeString(dir.resolve("results.csv"), rows.toString(), StandardCharsets.UTF_8, StandardOpenOption.APPEND);
  }

  private static String csv(String s) {
    return s.contains(",") ? "\"" + s + "\"" : s;
  }

  private static String sec(double s) {
    return String.format(Locale.ROOT, "%.3f", s);
  }

  /** Outcomes by job, then engine, in order. */
  private static Map<String, Map<String, List<ClassicBench.Outcome>>> groups(List<ClassicBench.Outcome> outcomes) {
    Map<String, Map<String, List<ClassicBench.Outcome>>> out = new LinkedHashMap<>();
    for (ClassicBench.Outcome o : outcomes) {
      out.computeIfAbsent(o.job(), j -> new LinkedHashMap<>()).computeIfAbsent(o.engine(), e -> new ArrayList<>())
          .add(o);
    }
    return out;
  }

  /**
   * The seconds of one phase of the timed runs that verified: a run whose answer was wrong may
   * have been fast because it skipped work, so its time is in no figure.
   */
  static Spread spread(List<ClassicBench.Outcome> os, Function<ClassicBench.Outcome, Double> phase) {
    return Spread.of(os.stream().filter(o -> o.timed() && o.ran() && o.verified() && phase.apply(o) != null)
        .map(phase).toList());
  }

  /**
   * The table: a row per job and engine with the median of its verified timed runs per phase,
   * the job's range (fastest-slowest) and the number of runs those figures are, the ratio of
   * median job times to SSS's, and whether every run (warm-ups too) verified.
   */
  public static String table(List<ClassicBench.Outcome> outcomes, boolean markdown) {
    List<String> header = List.of("job", "input", "engine", "start s", "load s", "job s", "job range", "runs",
        "job / SSS job", "file to file s", "file to file / SSS", "verified");
    List<List<String>> rows = new ArrayList<>();
    for (Map<String, List<ClassicBench.Outcome>> byEngine : groups(outcomes).values()) {
      List<ClassicBench.Outcome> sssRuns = byEngine.getOrDefault("sss", List.of());
      double sss = spread(sssRuns, ClassicBench.Outcome::jobSeconds).median();
      double sssFiles = spread(sssRuns, ClassicBench.Outcome::fileToFile).median();
      for (Map.Entry<String, List<ClassicBench.Outcome>> e : byEngine.entrySet()) {
        List<ClassicBench.Outcome> os = e.getValue();
        ClassicBench.Outcome first = os.get(0);
        Spread job = spread(os, ClassicBench.Outcome::jobSeconds);
        boolean ran = os.stream().anyMatch(ClassicBench.Outcome::ran);
        boolean failed = os.stream().anyMatch(o -> !o.ran() && !o.skipped());
        String ratio = job.runs() == 0 || Double.isNaN(sss) || e.getKey().equals("sss") ? "-"
            : String.format(Locale.ROOT, "%.1fx", job.median() / sss);
        Spread files = spread(os, ClassicBench.Outcome::fileToFile);
        String filesRatio = files.runs() == 0 || Double.isNaN(sssFiles) || e.getKey().equals("sss") ? "-"
            : String.format(Locale.ROOT, "%.1fx", files.median() / sssFiles);
        boolean unverified = os.stream().anyMatch(o -> o.timed() && o.ran() && !o.verified());
        long warm = os.stream().filter(o -> o.warmup() && o.ran()).count();
        rows.add(List.of(first.job(), first.value(), e.getKey(), cell(spread(os, ClassicBench.Outcome::start)),
            cell(spread(os, ClassicBench.Outcome::load)), job.runs() > 0 ? cell(job) + (failed ? " (FAILED runs)" : "")
                + (unverified ? " (UNVERIFIED runs)" : "") : first.skipped() ? "n/a" : unverified ? "UNVERIFIED"
                : "FAILED", job.range(), ran ? job.runs() + (warm > 0 ? " + " + warm + " warm-up" : "") : "-", ratio,
            cell(files), filesRatio, ran ? (os.stream().allMatch(o -> !o.ran() || o.verified()) ? "yes" : "NO") : "-"));
      }
    }
    return format(header, rows, markdown);
  }

  private static String cell(Spread s) {
    return s.runs() == 0 ? "-" : String.format(Locale.ROOT, "%.2f", s.median());
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
    if (markdown) {
      sb.append("| ").append(String.join(" | ", header)).append(" |\n|");
      for (int i = 0; i < header.size(); i++) {
        sb.append(i < 3 ? "---" : "---:").append('|');
      }
      sb.append('\n');
      for (List<String> r : rows) {
        sb.append("| ").append(String.join(" | ", r)).append(" |\n");
      }
      return sb.toString();
    }
    List<List<String>> all = new ArrayList<>();
    all.add(header);
    all.addAll(rows);
    int total = 0;
    for (int w : width) {
      total += w + 2;
    }
    for (int k = 0; k < all.size(); k++) {
      List<String> r = all.get(k);
      for (int i = 0; i < r.size(); i++) {
        sb.append(i < 3 ? String.format("%-" + width[i] + "s", r.get(i)) : String.format("%" + width[i] + "s", r.get(i)))
            .append("  ");
      }
      sb.append('\n');
      if (k == 0) {
        sb.append("-".repeat(total)).append('\n');
      }
    }
    return sb.toString();
  }

  /** Writes the plan's section of the report and its chart; returns the Markdown. */
  public String section(ClassicPlan plan, List<ClassicBench.Outcome> outcomes) throws IOException {
    StringBuilder md = new StringBuilder();
    md.append("## ").append(plan.name()).append("\n\n");
    md.append("From `").append(plan.source()).append("`: jobs ").append(String.join(", ", plan.jobs()))
        .append("; engines ").append(String.join(", ", plan.engines())).append(".\n\n");
    md.append("- ").append(plan.describe()).append('\n');
    md.append("- ").append(plan.describeRuns()).append('\n');
    if (!clusterStarts.isEmpty()) {
      md.append("- SSS's embedded cluster is started afresh before each job's first SSS run and stopped after its last "
          + "(not in any row), so that it never runs beside another engine: started in");
      for (Double d : clusterStarts) {
        md.append(String.format(Locale.ROOT, " %.2f s", d));
      }
      md.append('\n');
    }
    if (!wordCountInput.isEmpty()) {
      md.append("- WordCount input (the same file for every engine): ").append(wordCountInput).append('\n');
    }
    if (!wordCountSummary.isEmpty()) {
      md.append("- WordCount output: ").append(wordCountSummary).append('\n');
    }
    md.append('\n').append(table(outcomes, true)).append('\n');
    if (dir != null && chart(plan, outcomes, dir.resolve(plan.name() + ".png"))) {
      md.append("![").append(plan.name()).append("](").append(plan.name()).append(".png)\n\n");
    }
    String warm = warmupTable(outcomes, true);
    if (!warm.isEmpty()) {
      md.append("Warm-up runs (untimed, in no figure above):\n\n").append(warm).append('\n');
    }
    md.append("Notes (each distinct note once per job and engine; the runs it applies to in brackets):\n\n");
    for (Map<String, List<ClassicBench.Outcome>> byEngine : groups(outcomes).values()) {
      for (List<ClassicBench.Outcome> os : byEngine.values()) {
        Map<String, List<String>> notes = new LinkedHashMap<>();
        for (ClassicBench.Outcome o : os) {
          if (!o.note().isEmpty()) {
            notes.computeIfAbsent(o.note(), n -> new ArrayList<>()).add(runName(o));
          }
        }
        for (Map.Entry<String, List<String>> n : notes.entrySet()) {
          ClassicBench.Outcome o = os.get(0);
          md.append("- **").append(o.job()).append(' ').append(o.engine()).append("** (")
              .append(String.join(", ", n.getValue())).append("): ").append(n.getKey()).append('\n');
        }
      }
    }
    md.append('\n');
    return md.toString();
  }

  private static String runName(ClassicBench.Outcome o) {
    return o.warmup() ? "warm-up " + (o.run() + 1) : "run " + (o.run() + 1);
  }

  /** The warm-up runs (untimed, in no median): job, engine, seconds, verified. */
  static String warmupTable(List<ClassicBench.Outcome> outcomes, boolean markdown) {
    List<String> header = List.of("job", "input", "engine", "start s", "load s", "job s", "file to file s", "run",
        "verified");
    List<List<String>> rows = new ArrayList<>();
    for (ClassicBench.Outcome o : outcomes) {
      if (o.warmup()) {
        rows.add(List.of(o.job(), o.value(), o.engine(), cell(o.start()), cell(o.load()),
            o.ran() ? cell(o.jobSeconds()) : "FAILED", cell(o.fileToFile()), runName(o), o.ran() ? (o.verified() ? "yes" : "NO") : "-"));
      }
    }
    return rows.isEmpty() ? "" : format(header, rows, markdown);
  }

  private static String cell(Double d) {
    return d == null ? "-" : String.format(Locale.ROOT, "%.2f", d);
  }

  /** A bar chart: a group per job, a bar per engine, the median of the timed runs' job seconds. */
  static boolean chart(ClassicPlan plan, List<ClassicBench.Outcome> outcomes, Path file) throws IOException {
    Set<String> jobs = new LinkedHashSet<>();
    Map<String, Map<String, Double>> byEngine = new LinkedHashMap<>();
    for (Map.Entry<String, Map<String, List<ClassicBench.Outcome>>> j : groups(outcomes).entrySet()) {
      for (Map.Entry<String, List<ClassicBench.Outcome>> e : j.getValue().entrySet()) {
        Spread s = spread(e.getValue(), ClassicBench.Outcome::jobSeconds);
        if (s.runs() > 0) {
          jobs.add(j.getKey());
          byEngine.computeIfAbsent(e.getKey(), x -> new LinkedHashMap<>()).put(j.getKey(), s.median());
        }
      }
    }
    if (jobs.isEmpty()) {
      return false;
    }
    CategoryChart chart = new CategoryChartBuilder().width(800).height(500)
        .title("classic jobs, " + plan.threads() + " threads per engine").xAxisTitle("job")
        .yAxisTitle(plan.repeats() > 1 ? "job seconds (median of " + plan.repeats() + " runs)" : "job seconds")
        .build();
    chart.getStyler().setChartBackgroundColor(Color.WHITE);
    chart.getStyler().setLegendPosition(org.knowm.xchart.style.Styler.LegendPosition.InsideNE);
    chart.getStyler().setLabelsVisible(true);
    chart.getStyler().setLabelsFontColorAutomaticEnabled(false);
    chart.getStyler().setLabelsFontColor(Color.BLACK);
    chart.getStyler().setLabelsPosition(1.0);
    chart.getStyler().setDecimalPattern("#0.0");
    List<String> xs = new ArrayList<>(jobs);
    for (Map.Entry<String, Map<String, Double>> e : byEngine.entrySet()) {
      List<Double> ys = new ArrayList<>();
      for (String j : xs) {
        ys.add(e.getValue().getOrDefault(j, 0.0));
      }
      chart.addSeries(e.getKey(), xs, ys);
    }
    BitmapEncoder.saveBitmap(chart, file.toString(), BitmapEncoder.BitmapFormat.PNG);
    return true;
  }

  /** Writes report.md (or {@code name}) with the given sections. */
  public void finish(String name, String command, String machine, List<String> sections) throws IOException {
    if (dir == null) {
      return;
    }
    StringBuilder md = new StringBuilder();
    md.append("# Classic jobs: SSS, Hadoop MapReduce and Spark\n\n");
    md.append("Command:\n\n```\n").append(command).append("\n```\n\n");
    md.append("Machine:\n\n```\n").append(machine.strip()).append("\n```\n\n");
    md.append("Wall-clock seconds seen by the client. *start*: Spark's context (its JVM start not counted; once per "
        + "JVM, and all of a job's Spark runs share one); *load*: SSS storing the WordCount input file in a table "
        + "(Hadoop and Spark read the file as it is); *job*: from submission to the written output (Pi: the whole "
        + "estimate, input and output included, for both engines); *file to file*: WordCount from its input file to "
        + "its output in a file, the way a user with a file meets each engine (Hadoop and Spark: their job itself; "
        + "SSS: its job over the file's splits, the path `bin/sss example wordcount IN OUT` takes, and the output "
        + "dumped to a file, compared with the stored run's). A job's end is seen the same way on SSS and "
        + "Hadoop: SSS's jobs by the benchmark's " + JobClock.POLL_MILLIS + " ms poll of the job's completion (Pi: "
        + "the example's own wait), Hadoop's by the same poll or by Hadoop's own `waitForCompletion` set to poll every "
        + JobClock.POLL_MILLIS + " ms (its default is 1 s); Spark's action returns when its output is written. "
        + "Each job runs `warmups` untimed times on each engine before its `repeats` timed runs, in the same JVM "
        + "(Spark: one JVM and context for all its runs); tables give the median of the timed runs and the job's "
        + "range (fastest-slowest). RandomTextWriter writes a different random text on each engine and run "
        + "(Hadoop's mapper seeds itself from the clock); WordCount then runs on one common text (the last Hadoop "
        + "run's) in every engine and every run's output is compared line by line after sorting by UTF-8 bytes "
        + "(Hadoop's key order); Pi's estimates are compared. Every run is verified, warm-ups too, outside the "
        + "timed phases.\n\n");
    for (String s : sections) {
      md.append(s);
    }
    Files.writeString(dir.resolve(name), md.toString(), StandardCharsets.UTF_8);
    Files.writeString(dir.resolve("command.txt"), command + "\n", StandardCharsets.UTF_8);
    Files.writeString(dir.resolve("machine.txt"), machine, StandardCharsets.UTF_8);
  }
}
