package org.sss.bench.edges;

import java.awt.Color;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import org.knowm.xchart.BitmapEncoder;
import org.knowm.xchart.CategoryChart;
import org.knowm.xchart.CategoryChartBuilder;

/**
 * The picture of {@code benchmarks/results/edges/run.sh}'s {@code results.csv}: each measured
 * thing's median rate in MB/s of the same 1 GiB file, WordCount's three engines beside the loads
 * and the disk's own {@code dd} rates, so that how far each path is from the disk shows at a
 * glance. The rates span three orders of magnitude (Hadoop's WordCount to a cached read), so the
 * axis is logarithmic.
 *
 * <p>Usage: {@code EdgesPlot RESULTS.csv OUT.png}.
 */
public final class EdgesPlot {
  private EdgesPlot() {}

  public static void main(String[] args) throws IOException {
    if (args.length != 2) {
      System.err.println("usage: EdgesPlot RESULTS.csv OUT.png");
      System.exit(2);
    }
    write(medianRates(Files.readAllLines(Path.of(args[0]))), Path.of(args[1]));
  }

  /**
   * The median MB/s of each {@code what} of the CSV's lines ({@code what,run,seconds,MB/s} after a
   * header), in the order each first appears.
   */
  static Map<String, Double> medianRates(List<String> csv) {
    Map<String, List<Double>> rates = new LinkedHashMap<>();
    for (String line : csv.subList(1, csv.size())) {
      if (line.isBlank()) {
        continue;
      }
      String[] f = line.split(",");
      if (f.length != 4) {
        throw new IllegalArgumentException("not what,run,seconds,MB/s: '" + line + "'");
      }
      rates.computeIfAbsent(f[0], x -> new ArrayList<>()).add(Double.parseDouble(f[3]));
    }
    Map<String, Double> medians = new LinkedHashMap<>();
    rates.forEach((what, rs) -> medians.put(what, median(rs)));
    return medians;
  }

  private static double median(List<Double> values) {
    List<Double> sorted = new ArrayList<>(values);
    sorted.sort(null);
    int n = sorted.size();
    return n % 2 == 1 ? sorted.get(n / 2) : (sorted.get(n / 2 - 1) + sorted.get(n / 2)) / 2;
  }

  static void write(Map<String, Double> medians, Path png) throws IOException {
    CategoryChart chart = new CategoryChartBuilder().width(1000).height(600)
        .title("1 GiB RandomTextWriter text, whole processes (median of the runs)")
        .xAxisTitle("").yAxisTitle("MB/s of the file (log scale)").build();
    chart.getStyler().setChartBackgroundColor(Color.WHITE);
    chart.getStyler().setLegendVisible(false);
    chart.getStyler().setYAxisLogarithmic(true);
    // bars start at the axis's foot: the power of ten below the smallest rate (a log axis has no 0)
    double least = medians.values().stream().mapToDouble(Double::doubleValue).min().orElse(1);
    chart.getStyler().setYAxisMin(Math.pow(10, Math.floor(Math.log10(Math.max(least, 1e-3)))));
    chart.getStyler().setXAxisLabelRotation(20);
    chart.getStyler().setLabelsVisible(true);
    chart.getStyler().setLabelsFontColorAutomaticEnabled(false);
    chart.getStyler().setLabelsFontColor(Color.BLACK);
    chart.getStyler().setDecimalPattern("#0");
    chart.addSeries("MB/s", new ArrayList<>(medians.keySet()), new ArrayList<>(medians.values()));
    String file = png.toString();
    BitmapEncoder.saveBitmap(chart, file.endsWith(".png") ? file.substring(0, file.length() - 4) : file,
        BitmapEncoder.BitmapFormat.PNG);
  }
}
