package org.sss.bench.synthetic;

import java.awt.Color;
import java.io.IOException;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import org.knowm.xchart.BitmapEncoder;
import org.knowm.xchart.XYChart;
import org.knowm.xchart.XYChartBuilder;
import org.knowm.xchart.XYSeries;
import org.knowm.xchart.style.markers.SeriesMarkers;

/**
 * Plots like the paper's figures 4-6: log-log, x the swept parameter, y the job's seconds, one
 * line per engine and combiner setting through the medians of the timed runs, and every timed
 * run as a small dot of the line's colour, so the spread shows. Warm-ups are not plotted, nor
 * runs that did not verify.
 */
public final class Plots {
  private static final Color[] COLORS = {new Color(0x1f77b4), new Color(0xd62728), new Color(0x2ca02c),
      new Color(0xff7f0e), new Color(0x9467bd), new Color(0x8c564b)};

  private Plots() {}

  /** Writes {@code file} (PNG); returns false when there is nothing to plot. */
  public static boolean plot(SweepPlan.Workload w, List<Record> records, Path file) throws IOException {
    if (w.param().isEmpty()) {
      return false;
    }
    Map<String, Map<Double, List<Double>>> series = new LinkedHashMap<>();
    for (Record r : records) {
      if (!r.verified() || r.warmup() || !r.point().workload().equals(w.name())) {
        continue;
      }
      series.computeIfAbsent(r.series(), s -> new LinkedHashMap<>())
          .computeIfAbsent(r.point().x(), x -> new ArrayList<>()).add(Math.max(1e-3, r.result().jobSeconds()));
    }
    if (series.isEmpty()) {
      return false;
    }
    XYChart chart = new XYChartBuilder().width(800).height(560)
        .title(w.name() + " (total " + Sizes.format(w.totalBytes()) + ")")
        .xAxisTitle(w.param()).yAxisTitle(w.repeats() > 1 ? "job seconds (line: median of " + w.repeats()
            + " runs; dots: each run)" : "job seconds").build();
    chart.getStyler().setXAxisLogarithmic(true);
    chart.getStyler().setYAxisLogarithmic(true);
    chart.getStyler().setChartBackgroundColor(Color.WHITE);
    chart.getStyler().setLegendPosition(org.knowm.xchart.style.Styler.LegendPosition.InsideNW);
    chart.getStyler().setXAxisDecimalPattern("#,###");
    int i = 0;
    for (Map.Entry<String, Map<Double, List<Double>>> e : series.entrySet()) {
      Color color = COLORS[i++ % COLORS.length];
      List<Double> xs = new ArrayList<>();
      List<Double> ys = new ArrayList<>();
      List<Double> runX = new ArrayList<>();
      List<Double> runY = new ArrayList<>();
      e.getValue().entrySet().stream().sorted(Map.Entry.comparingByKey()).forEach(pt -> {
        xs.add(pt.getKey());
        ys.add(Spread.of(pt.getValue()).median());
        for (double y : pt.getValue()) {
          runX.add(pt.getKey());
          runY.add(y);
        }
      });
      XYSeries s = chart.addSeries(e.getKey(), xs, ys);
      s.setMarker(SeriesMarkers.CIRCLE);
      s.setLineColor(color);
      s.setMarkerColor(color);
      if (w.repeats() > 1) {
        XYSeries runs = chart.addSeries(e.getKey() + " runs", runX, runY);
        runs.setXYSeriesRenderStyle(XYSeries.XYSeriesRenderStyle.Scatter);
        runs.setMarker(SeriesMarkers.CIRCLE);
        runs.setMarkerColor(new Color(color.getRed(), color.getGreen(), color.getBlue(), 110));
        runs.setShowInLegend(false);
      }
    }
    chart.getStyler().setMarkerSize(6);
    BitmapEncoder.saveBitmap(chart, file.toString(), BitmapEncoder.BitmapFormat.PNG);
    return true;
  }
}
