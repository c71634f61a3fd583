package org.sss.bench.classic;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;
import org.sss.bench.synthetic.Progress;

/** The classic benchmark's parameter files, and a tiny run on SSS and Hadoop (Spark needs its own build). */
class ClassicBenchTest {
  @TempDir
  Path dir;

  @Test
  void shippedFiles_areClassic_andParse() throws Exception {
    for (String f : List.of("classic", "classic-quick")) {
      Path p = Path.of("params", f + ".properties");
      assertTrue(ClassicPlan.isClassic(p), f);
      ClassicPlan plan = ClassicPlan.load(p);
      assertEquals(ClassicPlan.JOBS, plan.jobs());
      assertEquals(List.of("sss", "hadoop", "spark"), plan.engines());
      assertEquals(2, plan.threads());
      assertTrue(plan.repeats() >= 3 && plan.warmups() >= 1, f);
    }
    assertEquals(1L << 30, ClassicPlan.load(Path.of("params", "classic.properties")).textBytes());
    assertFalse(ClassicPlan.isClassic(Path.of("params", "quick.properties")));
  }

  @Test
  void parse_rejectsUnknownKeys_jobs_andEngines() {
    var e = assertThrows(IllegalArgumentException.class,
        () -> ClassicPlan.parse(Map.of("workload", "classic", "textBytes", "1M"), "x", null));
    assertTrue(e.getMessage().contains("textBytes"), e.getMessage());
    assertThrows(IllegalArgumentException.class,
        () -> ClassicPlan.parse(Map.of("workloads", "wordcount,sort"), "x", null));
    assertThrows(IllegalArgumentException.class,
        () -> ClassicPlan.parse(Map.of("workload", "classic", "engines", "sss,flink"), "x", null));
    ClassicPlan p = ClassicPlan.parse(Map.of("workloads", "pi", "pi.maps", "3", "nodes", "2", "threadsPerNode", "1"),
        "x", null);
    assertEquals(List.of("pi"), p.jobs());
    assertEquals(3, p.piMaps());
    assertEquals(2, p.threads());
  }

  @Test
  void runs_andWarmups_parse_withDefaults() {
    ClassicPlan p = ClassicPlan.parse(Map.of("workload", "classic"), "x", null);
    assertEquals(1, p.warmups());
    assertEquals(1, p.repeats());
    ClassicPlan q = ClassicPlan.parse(Map.of("workload", "classic", "warmups", "0", "repeats", "5"), "x", null);
    assertEquals(0, q.warmups());
    assertEquals(5, q.repeats());
    assertEquals(5, q.withEngines(List.of("sss")).repeats());
    assertThrows(IllegalArgumentException.class,
        () -> ClassicPlan.parse(Map.of("workload", "classic", "repeats", "0"), "x", null));
  }

  /** A timed run whose output was wrong is in no median, range, run count or ratio; the row says so. */
  @Test
  void table_leavesUnverifiedRunsOutOfItsFigures() {
    List<ClassicBench.Outcome> out = List.of(
        new ClassicBench.Outcome("pi", "maps x samples", "3 x 1000", "sss", false, 0, null, null, 1.0, true, ""),
        new ClassicBench.Outcome("pi", "maps x samples", "3 x 1000", "sss", false, 1, null, null, 1.0, true, ""),
        new ClassicBench.Outcome("pi", "maps x samples", "3 x 1000", "hadoop", false, 0, null, null, 2.0, true, ""),
        new ClassicBench.Outcome("pi", "maps x samples", "3 x 1000", "hadoop", false, 1, null, null, 0.01, false,
            "estimate differs"));
    String table = ClassicReport.table(out, false);
    String hadoop = table.lines().filter(l -> l.contains("hadoop")).findFirst().orElseThrow();
    assertTrue(hadoop.contains("2.00 (UNVERIFIED runs)") && hadoop.contains("2.0x") && hadoop.contains(" NO"), table);
    assertFalse(hadoop.contains("0.01"), table);
  }

  @Test
  void tinyRun_onSssAndHadoop_warmsUp_repeats_andVerifiesEveryRun() throws Exception {
    ClassicPlan plan = ClassicPlan.parse(Map.of("workload", "classic", "engines", "sss,hadoop", "nodes", "2",
        "threadsPerNode", "1", "classic.textBytes", "256K", "pi.maps", "3", "pi.samples", "1000",
        "classic.workDir", dir.toString(), "warmups", "1", "repeats", "2"), "tiny", null);
    ClassicReport report = new ClassicReport(dir.resolve("out"), true);
    List<ClassicBench.Outcome> out = new ClassicBench(null, Progress.none(), null).run(plan, report);
    // 3 jobs x 2 engines x (1 warm-up + 2 timed)
    assertEquals(18, out.size(), out.toString());
    for (ClassicBench.Outcome o : out) {
      assertTrue(o.ran() && o.verified(), o.toString());
    }
    for (String job : ClassicPlan.JOBS) {
      for (String engine : List.of("sss", "hadoop")) {
        List<ClassicBench.Outcome> mine = out.stream().filter(o -> o.job().equals(job) && o.engine().equals(engine))
            .toList();
        assertEquals(List.of(true, false, false), mine.stream().map(ClassicBench.Outcome::warmup).toList(),
            job + " " + engine + ": a warm-up first, then the timed runs");
        assertEquals(List.of(0, 0, 1), mine.stream().map(ClassicBench.Outcome::run).toList());
        // WordCount from file to file on every engine (SSS: over the file's splits, its output dumped)
        assertEquals(job.equals(ClassicPlan.WORDCOUNT), mine.stream().allMatch(o -> o.fileToFile() != null),
            job + " " + engine + ": " + mine);
      }
    }
    List<String> csv = Files.readAllLines(dir.resolve("out/results.csv"));
    assertEquals(org.sss.bench.synthetic.Report.CSV_HEADER, csv.get(0));
    String all = String.join("\n", csv);
    assertTrue(all.contains("wordcount,input,") && all.contains(",sss,true,timed,2,load,")
        && all.contains(",hadoop,true,warmup,1,job,") && all.contains("pi,maps x samples,3 x 1000,hadoop,true,timed,2,job,")
        && all.contains(",sss,true,timed,2,file-to-file,") && all.contains(",hadoop,true,timed,1,file-to-file,"),
        all);
    String table = ClassicReport.table(out, false);
    assertTrue(table.contains("job range") && table.contains("2 + 1 warm-up") && table.contains("file to file / SSS"),
        table);
    String md = report.section(plan, out);
    assertTrue(md.contains("| wordcount |"), md);
    assertTrue(md.contains("median of 2 timed runs") && md.contains("Warm-up runs (untimed"), md);
    assertTrue(Files.exists(dir.resolve("out/tiny.png")));
  }
}
