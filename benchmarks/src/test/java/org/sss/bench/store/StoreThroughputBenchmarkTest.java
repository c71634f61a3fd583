package org.sss.bench.store;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;
import picocli.CommandLine;

/**
 * The store benchmark end to end at a tiny size (raw RocksDB and an embedded node): every phase
 * verifies itself, so a run that completes with its rows written measured what it claims.
 */
class StoreThroughputBenchmarkTest {
  @TempDir
  Path dir;

  @Test
  void aTinyRunWarmsUpSettlesRepeatsItsScansAndWritesEveryRow() throws Exception {
    Path out = dir.resolve("out");
    int rc = new CommandLine(new StoreThroughputBenchmark()).execute("--shape", "both", "--pairs", "3000",
        "--large-pairs", "40", "--large-value-bytes", "8192", "--warmup-bytes", "65536", "--scan-repeats", "2", "--settle-seconds", "1", "--text-bytes", "200000",
        "--skip-processes", "--work-dir", dir.resolve("work").toString(), "--out", out.toString());
    assertEquals(0, rc);
    List<String> csv = Files.readAllLines(out.resolve("results.csv"));
    // per shape: raw put + scan; embedded put, scan, scan-ordered, put-wal; text: dd write-cached, write, read-cached;
    // embedded load, dump
    assertEquals(1 + 2 * 6 + 5, csv.size(), String.join("\n", csv));
    assertTrue(csv.stream().anyMatch(l -> l.startsWith("text,dd,read-cached,")), "no cache dropped unless asked");
    assertTrue(csv.stream().anyMatch(l -> l.startsWith("text,dd,write,")), csv.toString());
    assertTrue(csv.stream().anyMatch(l -> l.startsWith("text,client-embedded-1,dump,")), csv.toString());
    assertTrue(csv.stream().anyMatch(l -> l.contains("client-embedded-1") && l.contains("scan-ordered")), csv.toString());
    String md = Files.readString(out.resolve("results.md"));
    assertTrue(md.contains("2 per path and order, each verified; the median is reported"), md);
    assertTrue(md.contains("no flush or compaction pending or running"), md);
  }
}
