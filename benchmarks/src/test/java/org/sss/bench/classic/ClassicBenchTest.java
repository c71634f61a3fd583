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
  void tinyRun_onSssAndHadoop_verifies() throws Exception {
    ClassicPlan plan = ClassicPlan.parse(Map.of("workload", "classic", "engines", "sss,hadoop", "nodes", "2",
        "threadsPerNode", "1", "classic.textBytes", "256K", "pi.maps", "3", "pi.samples", "1000",
        "classic.workDir", dir.toString()), "tiny", null);
    ClassicReport report = new ClassicReport(dir.resolve("out"), true);
    List<ClassicBench.Outcome> out = new ClassicBench(null, Progress.none(), null).run(plan, report);
    assertEquals(6, out.size(), out.toString());
    for (ClassicBench.Outcome o : out) {
      assertTrue(o.ran() && o.verified(), o.toString());
    }
    String csv = Files.readString(dir.resolve("out/results.csv"));
    assertTrue(csv.contains("wordcount,input,") && csv.contains(",sss,true,load,") && csv.contains(",hadoop,true,job,"),
        csv);
    String md = report.section(plan, out);
    assertTrue(md.contains("| wordcount |"), md);
    assertTrue(Files.exists(dir.resolve("out/tiny.png")));
  }
}
