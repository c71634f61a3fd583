package org.sss.bench.synthetic;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;
import org.sss.bench.synthetic.SyntheticParams.PartitionMethod;

/** What the tables and summary.csv make of runs that failed or gave a wrong answer. */
class ReportTest {
  static final SyntheticParams P = new SyntheticParams("w", 2, 1, 16, 8, 65536, 1, 16, 1,
      PartitionMethod.AVERAGE, false, 2);
  static final SweepPlan.Point POINT = new SweepPlan.Point("w", "mapoutKeyCount", "64K", 65536, P);
  static final SweepPlan.Workload W = new SweepPlan.Workload("w", Path.of("w.properties"), "mapoutKeyCount",
      1 << 20, List.of(POINT), 3, 1, List.of("sss"), null, 1);

  static Record run(boolean warmup, int i, double seconds, boolean verified) {
    return new Record(POINT, "sss", warmup, i, new RunResult(0.5, seconds, verified, verified ? "" : "reduce digest",
        Map.of()), verified ? "" : "reduce digest");
  }

  /**
   * A run whose answer is wrong may be fast because it skipped work: its time is in no median,
   * range or ratio; the cell says how many runs the figure is, and that one did not verify.
   */
  @Test
  void anUnverifiedRun_isInNoFigure_andTheCellSaysSo() {
    List<Record> rs = new ArrayList<>(List.of(run(true, 0, 5.0, true), run(false, 0, 1.0, true),
        run(false, 1, 1.2, true), run(false, 2, 0.01, false)));
    String table = Report.table(W, rs, false);
    assertTrue(table.contains("1.10 (n=2) (UNVERIFIED)"), table);
    assertTrue(table.contains("1.00-1.20"), table);
    List<String> summary = Report.summaryRows(W, rs);
    assertEquals("w,mapoutKeyCount,64K,sss,false,job,1,2,1.100,1.000,1.200,false", summary.get(1));
  }

  /** results.csv has every run: one that failed has a job row without seconds. */
  @Test
  void resultsCsv_hasFailedRunsToo(@TempDir Path dir) throws Exception {
    Report report = new Report(dir);
    report.append(run(true, 0, 5.0, true));
    report.append(new Record(POINT, "sss", false, 0, null, "failed: node 1 lost"));
    report.append(run(false, 1, 0.01, false));
    report.append(new Record(POINT, "hadoop", false, 0, null, "skipped: Hadoop cannot place reducers"));
    assertEquals(List.of(Report.CSV_HEADER,
        "w,mapoutKeyCount,64K,sss,false,warmup,1,load,0.500,true",
        "w,mapoutKeyCount,64K,sss,false,warmup,1,job,5.000,true",
        "w,mapoutKeyCount,64K,sss,false,timed,1,job,,false",
        "w,mapoutKeyCount,64K,sss,false,timed,2,load,0.500,false",
        "w,mapoutKeyCount,64K,sss,false,timed,2,job,0.010,false"), Files.readAllLines(dir.resolve("results.csv")));
  }

  @Test
  void noVerifiedRun_isNoFigure() {
    List<Record> rs = List.of(run(false, 0, 0.01, false), run(false, 1, 0.02, false), run(false, 2, 0.03, false));
    String table = Report.table(W, rs, false);
    assertTrue(table.contains("UNVERIFIED"), table);
    assertTrue(!table.contains("0.02"), table);
  }

  static Record engineRun(SweepPlan.Point point, String engine, int i, double seconds) {
    return new Record(point, engine, false, i, new RunResult(0.1, seconds, true, "", Map.of()), "");
  }

  /** The verdict counts points where SSS's median beat Hadoop's, and gives the ratios' spread. */
  @Test
  void verdict_countsThePointsSssWon() {
    SweepPlan.Point a = POINT;
    SweepPlan.Point b = new SweepPlan.Point("w", "mapoutKeyCount", "1K", 1024, P);
    SweepPlan.Workload w = new SweepPlan.Workload("w", Path.of("w.properties"), "mapoutKeyCount", 1 << 20,
        List.of(a, b), 3, 1, List.of("sss", "hadoop"), null, 1);
    List<Record> rs = new ArrayList<>();
    for (int i = 0; i < 3; i++) {
      rs.add(engineRun(a, "sss", i, 1.0));
      rs.add(engineRun(a, "hadoop", i, 4.0));   // SSS wins, 4x
      rs.add(engineRun(b, "sss", i, 2.0));
      rs.add(engineRun(b, "hadoop", i, 1.0));   // Hadoop wins, 0.5x
    }
    assertEquals("verdict: SSS faster than Hadoop (local job runner) at 1 of 2 points;"
        + " Hadoop/SSS median job time 2.3x (from 0.5x to 4.0x)", Report.verdict(List.of(w), rs));
    assertEquals(null, Report.verdict(List.of(W), List.of(run(false, 0, 1.0, true))), "no point ran on both");
  }
}
