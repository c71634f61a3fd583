package org.sss.bench.synthetic;

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
 * line per engine and combiner setting.
 */
public final class Plots {
  private Plots() {}

  /** Writes {@code file} (PNG); returns false when there is nothing to plot. */
  public static boolean plot(SweepPlan.Workload w, List<Record> records, Path file) throws IOException {
    if (w.param().isEmpty()) {
      return false;
    }
    Map<String, Map<Double, List<Double>>> series = new LinkedHashMap<>();
    for (Record r : records) {
      if (r.result() == null || !r.point().workload().equals(w.name())) {
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
        .xAxisTitle(w.param()).yAxisTitle("job seconds").build();
    chart.getStyler().setXAxisLogarithmic(true);
    chart.getStyler().setYAxisLogarithmic(true);
    chart.getStyler().setChartBackgroundColor(java.awt.Color.WHITE);
    chart.getStyler().setLegendPosition(org.knowm.xchart.style.Styler.LegendPosition.InsideNW);
    chart.getStyler().setXAxisDecimalPattern("#,###");
    for (Map.Entry<String, Map<Double, List<Double>>> e : series.entrySet()) {
      List<Double> xs = new ArrayList<>();
      List<Double> ys = new ArrayList<>();
      e.getValue().entrySet().stream().sorted(Map.Entry.comparingByKey()).forEach(pt -> {
        xs.add(pt.getKey());
        ys.add(Report.median(pt.getValue()));
      });
      XYSeries s = chart.addSeries(e.getKey(), xs, ys);
      s.setMarker(SeriesMarkers.CIRCLE);
    }
    BitmapEncoder.saveBitmap(chart, file.toString(), BitmapEncoder.BitmapFormat.PNG);
    return true;
  }
}
