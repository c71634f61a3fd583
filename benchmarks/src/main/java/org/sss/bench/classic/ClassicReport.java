package org.sss.bench.classic;

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
import org.knowm.xchart.BitmapEncoder;
import org.knowm.xchart.CategoryChart;
import org.knowm.xchart.CategoryChartBuilder;
import org.sss.bench.synthetic.Report;

/**
 * The classic benchmark's results: rows appended to {@code results.csv} as runs finish (the
 * synthetic benchmark's columns: workload = the job, param/value = its size, combiner = whether
 * the job combines map output), a table per plan for the console and {@code report.md}, and a
 * bar chart of job seconds.
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

  /** Appends an outcome's rows (start, load, job: those that apply). */
  public void append(ClassicBench.Outcome o) throws IOException {
    if (dir == null || !o.ran()) {
      return;
    }
    String prefix = String.join(",", o.job(), o.param(), csv(o.value()), o.engine(),
        Boolean.toString(!o.job().equals(ClassicPlan.RANDOMTEXTWRITER)));
    StringBuilder rows = new StringBuilder();
    if (o.start() != null) {
      rows.append(prefix).append(",start,").append(sec(o.start())).append(',').append(o.verified()).append('\n');
    }
    if (o.load() != null) {
      rows.append(prefix).append(",load,").append(sec(o.load())).append(',').append(o.verified()).append('\n');
    }
    rows.append(prefix).append(",job,").append(sec(o.jobSeconds())).append(',').append(o.verified()).append('\n');
    Files.writeString(dir.resolve("results.csv"), rows.toString(), StandardCharsets.UTF_8, StandardOpenOption.APPEND);
  }

  private static String csv(String s) {
    return s.contains(",") ? "\"" + s + "\"" : s;
  }

  private static String sec(double s) {
    return String.format(Locale.ROOT, "%.3f", s);
  }

  /** The table: a row per job and engine, and the job-time ratio to SSS. */
  public static String table(List<ClassicBench.Outcome> outcomes, boolean markdown) {
    List<String> header = List.of("job", "input", "engine", "start s", "load s", "job s", "job / SSS job", "verified");
    List<List<String>> rows = new ArrayList<>();
    for (ClassicBench.Outcome o : outcomes) {
      Double sss = outcomes.stream().filter(x -> x.job().equals(o.job()) && x.engine().equals("sss") && x.ran())
          .map(ClassicBench.Outcome::jobSeconds).findFirst().orElse(null);
      String ratio = !o.ran() || sss == null || o.engine().equals("sss") ? "-"
          : String.format(Locale.ROOT, "%.1fx", o.jobSeconds() / sss);
      rows.add(List.of(o.job(), o.value(), o.engine(), cell(o.start()), cell(o.load()),
          o.ran() ? cell(o.jobSeconds()) : (o.skipped() ? "n/a" : "FAILED"), ratio,
          o.ran() ? (o.verified() ? "yes" : "NO") : "-"));
    }
    return format(header, rows, markdown);
  }

  private static String cell(Double d) {
    return d == null ? "-" : String.format(Locale.ROOT, "%.2f", d);
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
    if (!clusterStarts.isEmpty()) {
      md.append("- SSS's embedded cluster is started afresh for each job's SSS run and stopped after it (not in any "
          + "row), so that it never runs beside another engine: started in");
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
    md.append("Notes:\n\n");
    for (ClassicBench.Outcome o : outcomes) {
      if (!o.note().isEmpty()) {
        md.append("- **").append(o.job()).append(' ').append(o.engine()).append("**: ").append(o.note()).append('\n');
      }
    }
    md.append('\n');
    return md.toString();
  }

  /** A bar chart: a group per job, a bar per engine, job seconds. */
  static boolean chart(ClassicPlan plan, List<ClassicBench.Outcome> outcomes, Path file) throws IOException {
    Set<String> jobs = new LinkedHashSet<>();
    Map<String, Map<String, Double>> byEngine = new LinkedHashMap<>();
    for (ClassicBench.Outcome o : outcomes) {
      if (o.ran()) {
        jobs.add(o.job());
        byEngine.computeIfAbsent(o.engine(), e -> new LinkedHashMap<>()).put(o.job(), o.jobSeconds());
      }
    }
    if (jobs.isEmpty()) {
      return false;
    }
    CategoryChart chart = new CategoryChartBuilder().width(800).height(500)
        .title("classic jobs, " + plan.threads() + " threads per engine").xAxisTitle("job").yAxisTitle("job seconds")
        .build();
    chart.getStyler().setChartBackgroundColor(java.awt.Color.WHITE);
    chart.getStyler().setLegendPosition(org.knowm.xchart.style.Styler.LegendPosition.InsideNE);
    chart.getStyler().setLabelsVisible(true);
    chart.getStyler().setLabelsFontColorAutomaticEnabled(false);
    chart.getStyler().setLabelsFontColor(java.awt.Color.BLACK);
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
    md.append("Wall-clock seconds seen by the client. *start*: Spark's context (its JVM start not counted); "
        + "*load*: SSS storing the WordCount input file in a table (Hadoop and Spark read the file as it is); "
        + "*job*: from submission to the written output (Pi: the whole estimate, input and output included, "
        + "for both engines). RandomTextWriter writes a different random text on each engine (Hadoop's mapper "
        + "seeds itself from the clock); WordCount then runs on one common text in every engine and the "
        + "outputs are compared line by line after sorting by UTF-8 bytes (Hadoop's key order); Pi's estimates "
        + "are compared. Verification runs outside the timed phases.\n\n");
    for (String s : sections) {
      md.append(s);
    }
    Files.writeString(dir.resolve(name), md.toString(), StandardCharsets.UTF_8);
    Files.writeString(dir.resolve("command.txt"), command + "\n", StandardCharsets.UTF_8);
    Files.writeString(dir.resolve("machine.txt"), machine, StandardCharsets.UTF_8);
  }
}
