package org.sss.bench.engine;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.io.ByteArrayOutputStream;
import java.io.PrintStream;
import java.io.PrintWriter;
import java.io.StringWriter;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;
import org.sss.client.cli.SssCommand;
import picocli.CommandLine;

/**
 * {@code sss bench-engine} end to end with tiny parameters, through the real command line: it
 * runs every path it reports on and writes its results; the numbers are not judged, only that
 * every row is there with the pairs asked for (the command itself fails when a shuffle lost a
 * value).
 */
class ShuffleBenchmarkTest {
  @TempDir
  Path dir;

  /** Runs {@code sss args...}; returns {exit status, what it printed on stderr}. */
  static Object[] sss(String... args) {
    ByteArrayOutputStream sysErr = new ByteArrayOutputStream();
    PrintStream saved = System.err;
    StringWriter err = new StringWriter();
    int status;
    System.setErr(new PrintStream(sysErr, true, StandardCharsets.UTF_8));
    try {
      CommandLine cl = SssCommand.commandLine();
      cl.setErr(new PrintWriter(err, true));
      status = cl.execute(args);
    } finally {
      System.setErr(saved);
    }
    return new Object[] {status, err + sysErr.toString(StandardCharsets.UTF_8)};
  }

  /** The fields of one CSV line (RFC 4180: a quoted field may hold commas and doubled quotes). */
  static List<String> fields(String line) {
    List<String> out = new java.util.ArrayList<>();
    StringBuilder f = new StringBuilder();
    boolean quoted = false;
    for (int i = 0; i < line.length(); i++) {
      char c = line.charAt(i);
      if (quoted && c == '"' && i + 1 < line.length() && line.charAt(i + 1) == '"') {
        f.append('"');
        i++;
      } else if (c == '"') {
        quoted = !quoted;
      } else if (c == ',' && !quoted) {
        out.add(f.toString());
        f.setLength(0);
      } else {
        f.append(c);
      }
    }
    out.add(f.toString());
    return out;
  }

  @Test
  void shuffleAndRawPaths_tinyRun_writesEveryRow() throws Exception {
    Path out = dir.resolve("shuffle");
    Object[] r = sss("bench-engine", "--pairs", "4800", "--value-bytes", "16", "--rows", "24",
        "--skip-processes", "--out", out.toString());
    assertEquals(0, r[0], (String) r[1]);
    List<List<String>> csv = Files.readAllLines(out.resolve("results.csv")).stream().map(ShuffleBenchmarkTest::fields)
        .toList();
    assertEquals(List.of("path", "operation", "pairs", "seconds", "pairs_per_s", "mb_per_s", "ratio_to_raw"), csv.get(0));
    assertEquals(List.of(
        List.of("raw-rocksdb", "write (put per pair)+scan", "4800"),
        List.of("raw-rocksdb", "sort+write (SST file, ingest)+scan", "4800"),
        List.of("sss-embedded-1", "map+shuffle+reduce", "4800")),
        csv.subList(1, csv.size()).stream().map(f -> f.subList(0, 3)).toList(), csv.toString());
    for (List<String> row : csv.subList(1, csv.size())) {
      assertEquals(7, row.size(), row.toString());
      assertTrue(Double.parseDouble(row.get(3)) > 0, "seconds " + row);
    }
    String md = Files.readString(out.resolve("results.md"));
    assertTrue(md.contains("Command: `bin/sss bench-engine --pairs 4800 --value-bytes 16`"), md);
    assertTrue(((String) r[1]).contains("4,800 pairs x (8 B key + 16 B value)"), (String) r[1]);
  }

  @Test
  void emptyJobOnThreeProcesses_tinyRun_reportsItsMedian() throws Exception {
    Path out = dir.resolve("empty");
    Object[] r = sss("bench-engine", "--empty-only", "--empty-runs", "3", "--out", out.toString());
    assertEquals(0, r[0], (String) r[1]);
    List<List<String>> csv = Files.readAllLines(out.resolve("results.csv")).stream().map(ShuffleBenchmarkTest::fields)
        .toList();
    assertEquals(2, csv.size(), csv.toString());
    assertEquals(List.of("sss-processes-3", "empty job (median)", "0"), csv.get(1).subList(0, 3));
    assertTrue(Double.parseDouble(csv.get(1).get(3)) > 0, csv.get(1).toString());
    String md = Files.readString(out.resolve("results.md"));
    assertTrue(md.contains("Command: `bin/sss bench-engine --empty-only --empty-runs 3`"), md);
    assertTrue(md.contains("over 3 runs"), md);
  }

  @Test
  void hotKeyRow_tinyRun_reportsPeakResidentMemoryAgainstTheHeap() throws Exception {
    Path out = dir.resolve("hot");
    Object[] r = sss("bench-engine", "--hot-key-only", "--hot-key-values", "3", "--hot-key-value-mib", "2",
        "--hot-key-heap", "256m", "--out", out.toString());
    assertEquals(0, r[0], (String) r[1]);
    String md = Files.readString(out.resolve("results.md"));
    java.util.regex.Matcher m = java.util.regex.Pattern
        .compile("\\| 3 x 2 MiB under one key \\(0\\.0 GB\\) \\| 256m \\| [0-9.]+ \\| [0-9.]+ \\| ([0-9]+) \\| ([0-9.]+) \\|")
        .matcher(md);
    assertTrue(m.find(), md);
    long peakMiB = Long.parseLong(m.group(1));
    assertTrue(peakMiB > 20 && peakMiB < 4096, "a server's resident memory, in MiB: " + peakMiB);
    assertEquals(peakMiB / 256.0, Double.parseDouble(m.group(2)), 0.06, "the ratio is resident over heap");
    assertTrue(!md.contains("| path | operation |"), "no empty shuffle table: " + md);
  }

  /** A trial run must not overwrite the published figures in benchmarks/results/. */
  @Test
  void withoutOut_writesToANewDirectoryItNames() throws Exception {
    Object[] r = sss("bench-engine", "--empty-only", "--empty-runs", "1");
    assertEquals(0, r[0], (String) r[1]);
    java.util.regex.Matcher m = java.util.regex.Pattern.compile("results in (\\S+)").matcher((String) r[1]);
    assertTrue(m.find(), (String) r[1]);
    Path written = Path.of(m.group(1));
    try {
      assertTrue(written.startsWith(Path.of(System.getProperty("java.io.tmpdir"), "sss-results")), written.toString());
      assertTrue(written.getFileName().toString().startsWith("engine-"), written.toString());
      assertTrue(Files.isRegularFile(written.resolve("results.csv")), written.toString());
    } finally {
      for (String f : List.of("results.csv", "results.md")) {
        Files.deleteIfExists(written.resolve(f));
      }
      Files.deleteIfExists(written);
    }
  }
}
