package org.sss.bench.synthetic;

import java.util.ArrayList;
import java.util.Collections;
import java.util.List;
import java.util.Locale;

/**
 * What the timed runs of one point say: how many there were, their median, and their spread,
 * given as the range (the fastest and the slowest run). The range rather than a standard
 * deviation: with three or five runs it is what was seen, with no assumption about the shape of
 * the distribution, and one slow run shows in it instead of being averaged away.
 */
public record Spread(int runs, double median, double min, double max) {
  /** Of the given seconds (NaN figures when there are none). */
  public static Spread of(List<Double> seconds) {
    List<Double> s = new ArrayList<>(seconds);
    Collections.sort(s);
    int n = s.size();
    if (n == 0) {
      return new Spread(0, Double.NaN, Double.NaN, Double.NaN);
    }
    double median = n % 2 == 1 ? s.get(n / 2) : (s.get(n / 2 - 1) + s.get(n / 2)) / 2;
    return new Spread(n, median, s.get(0), s.get(n - 1));
  }

  /** "0.27-0.33" (2 decimals), or "-" for fewer than two runs. */
  public String range() {
    return runs < 2 ? "-" : String.format(Locale.ROOT, "%.2f-%.2f", min, max);
  }

  /** The range as a fraction of the median: (max - min) / median. */
  public double relativeRange() {
    return runs < 2 || median == 0 ? 0 : (max - min) / median;
  }
}
