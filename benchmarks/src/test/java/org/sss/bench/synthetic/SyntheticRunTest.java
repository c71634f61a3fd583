package org.sss.bench.synthetic;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.io.PrintWriter;
import java.io.StringWriter;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.CsvSource;
import org.sss.bench.synthetic.SyntheticParams.PartitionMethod;
import org.sss.client.cluster.SssCluster;

/** Tiny synthetic runs on both engines, each verified against the expected output. */
class SyntheticRunTest {
  @TempDir
  Path dir;

  static SyntheticParams shuffle(int nodes, PartitionMethod m, boolean combine) {
    // 24 inputs, 3072 intermediate values of 40 bytes over 12 keys, 20-byte outputs
    return new SyntheticParams("t", nodes, 2, 24, 100, 3072, 40, 12, 20, m, combine, 8);
  }

  @ParameterizedTest
  @CsvSource({"1,AVERAGE,false", "3,AVERAGE,false", "3,AVERAGE,true", "1,LOCAL,false", "3,LOCAL,false",
      "3,SHIFTED,false", "3,SHIFTED,true"})
  void sss_embedded_verifies(int nodes, PartitionMethod m, boolean combine) throws Exception {
    SyntheticParams p = shuffle(nodes, m, combine);
    p.validate();
    try (SssCluster c = SssCluster.embedded(nodes)) {
      RunResult r = new SssSyntheticRunner(c, false).run(p, Progress.none());
      assertTrue(r.verified(), r.problem());
      assertEquals(3072, r.counters().get("map.recordsOut"));
      if (combine) {
        assertTrue(r.counters().get("map.recordsShuffled") < 3072 / 4, r.counters().toString());
      } else {
        assertEquals(3072, r.counters().get("map.recordsShuffled"));
      }
      if (m == PartitionMethod.AVERAGE) {
        assertEquals(12, r.counters().get("reduce.recordsOut"));
      }
    }
  }

  @Test
  void sss_readShape_andWriteShape_verify() throws Exception {
    try (SssCluster c = SssCluster.embedded(2)) {
      SssSyntheticRunner runner = new SssSyntheticRunner(c, false);
      // read shape: fewer intermediate pairs than inputs
      RunResult read = runner.run(new SyntheticParams("r", 2, 1, 512, 2048, 64, 1, 16, 1,
          PartitionMethod.AVERAGE, false, 2), Progress.none());
      assertTrue(read.verified(), read.problem());
      // write shape: many unique keys, big outputs
      RunResult write = runner.run(new SyntheticParams("w", 2, 1, 16, 1, 8192, 1, 4096, 256,
          PartitionMethod.AVERAGE, false, 2), Progress.none());
      assertTrue(write.verified(), write.problem());
    }
  }

  @Test
  void hadoop_local_verifies_withAndWithoutCombiner() throws Exception {
    HadoopSyntheticRunner h = new HadoopSyntheticRunner(null);
    RunResult plain = h.run(shuffle(2, PartitionMethod.AVERAGE, false), Progress.none());
    assertTrue(plain.verified(), plain.problem());
    assertEquals(3072, plain.counters().get("MAP_OUTPUT_RECORDS"));
    assertEquals(12, plain.counters().get("REDUCE_OUTPUT_RECORDS"));
    RunResult combined = h.run(shuffle(2, PartitionMethod.AVERAGE, true), Progress.none());
    assertTrue(combined.verified(), combined.problem());
    assertTrue(combined.counters().get("REDUCE_INPUT_RECORDS") < 3072, combined.counters().toString());
  }

  @Test
  void verification_catchesAMissingValue() {
    SyntheticParams p = shuffle(1, PartitionMethod.AVERAGE, false);
    SyntheticData.Expected e = SyntheticData.Expected.compute(p, null, 1);
    SyntheticData.Observed o = new SyntheticData.Observed();
    o.inputRecords = e.inputRecords();
    o.inputCrc = e.inputCrc();
    o.values = e.values() - 1;
    o.valueCrc = e.valueCrc();
    o.outputPairs = e.outputPairs();
    o.outputDigest = e.outputDigest();
    String problem = o.compare(e);
    assertTrue(problem.contains("intermediate values"), problem);
  }

  @Test
  void bench_writesResults_andSkipsHadoopForLocalPlacement() throws Exception {
    Path params = dir.resolve("tiny.properties");
    Files.writeString(params, String.join("\n",
        "workloads=avg,loc",
        "nodes=2", "threadsPerNode=1", "totalBytes=64KiB", "initialKeyCount=8", "initialValueLength=4",
        "sweep.mapoutKeyCount=64,256", "mapoutUniqueKeyCount=4", "reduceoutValueLength=8",
        "loc.partitionMethod=local", ""));
    List<SweepPlan.Workload> ws = SweepPlan.load(params);
    Path out = dir.resolve("out");
    Report report = new Report(out);
    StringWriter console = new StringWriter();
    List<Record> records = new BenchCommand.Bench(null, Progress.none(), new PrintWriter(console, true))
        .run(ws, report);
    report.finish(ws, records, "test", Report.machine());
    assertTrue(records.stream().filter(r -> r.result() != null).allMatch(Record::verified));
    List<String> csv = Files.readAllLines(out.resolve("results.csv"));
    assertEquals(Report.CSV_HEADER, csv.get(0));
    // avg: 2 points x 2 engines x 2 phases; loc: 2 points x sss x 2 phases
    assertEquals(1 + 8 + 4, csv.size(), String.join("\n", csv));
    assertTrue(csv.get(1).startsWith("avg,mapoutKeyCount,64,sss,false,load,"), csv.get(1));
    String md = Files.readString(out.resolve("report.md"));
    assertTrue(md.contains("Hadoop cannot place reducers"), md);
    assertTrue(Files.size(out.resolve("avg.png")) > 1000);
    assertTrue(console.toString().contains("hadoop/sss job"), console.toString());
    assertFalse(md.contains("FAILED"));
  }
}
