package org.sss.bench;

import java.nio.file.Path;
import java.time.LocalDateTime;
import java.time.format.DateTimeFormatter;

/**
 * Where a benchmark writes its results when {@code --out} is not given: a new directory under
 * the system's temporary directory, never the committed {@code benchmarks/results/}. A run made
 * to try something must not overwrite the published figures; publishing is an explicit
 * {@code --out benchmarks/results/...}.
 */
public final class ResultsDir {
  private static final DateTimeFormatter STAMP = DateTimeFormatter.ofPattern("yyyyMMdd-HHmmss");

  private ResultsDir() {}

  /** {@code out} when given, else {@code $TMPDIR/sss-results/<name>-<date>-<time>}. */
  public static Path orFresh(Path out, String name) {
    if (out != null) {
      return out;
    }
    return Path.of(System.getProperty("java.io.tmpdir"), "sss-results",
        name + "-" + LocalDateTime.now().format(STAMP));
  }
}
