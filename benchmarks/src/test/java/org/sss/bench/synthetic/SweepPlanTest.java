package org.sss.bench.synthetic;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.nio.file.Files;
import java.nio.file.Path;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.stream.Stream;
import org.junit.jupiter.api.Test;

class SweepPlanTest {
  static Map<String, String> shuffle() {
    Map<String, String> kv = new LinkedHashMap<>();
    kv.put("nodes", "2");
    kv.put("totalBytes", "1MiB");
    kv.put("initialKeyCount", "16");
    kv.put("initialValueLength", "1");
    kv.put("sweep.mapoutKeyCount", "16,64,1K");
    kv.put("mapoutUniqueKeyCount", "16");
    kv.put("reduceoutValueLength", "1");
    kv.put("combinerEnabled", "false,true");
    return kv;
  }

  static List<SweepPlan.Workload> parse(Map<String, String> kv) {
    return SweepPlan.parse(kv, "test", Path.of("."));
  }

  static String error(Map<String, String> kv) {
    return assertThrows(IllegalArgumentException.class, () -> parse(kv)).getMessage();
  }

  @Test
  void sweep_derivesPartner_keepingTotalBytes() {
    SweepPlan.Workload w = parse(shuffle()).get(0);
    assertEquals("mapoutKeyCount", w.param());
    assertEquals(6, w.points().size()); // 3 values x combiner off/on
    for (SweepPlan.Point p : w.points()) {
      assertEquals(1L << 20, p.params().intermediateBytes());
      assertEquals((long) p.x(), p.params().mapoutKeyCount());
    }
    assertEquals("1K", w.points().get(4).value());
    assertTrue(w.points().get(5).params().combinerEnabled());
    assertEquals(1024, w.points().get(5).params().mapoutValueLength());
  }

  @Test
  void repeatsAndWarmups_parse_withDefaults() {
    SweepPlan.Workload w = parse(shuffle()).get(0);
    assertEquals(1, w.repeats());
    assertEquals(1, w.warmups());
    Map<String, String> kv = shuffle();
    kv.put("repeats", "3");
    kv.put("warmups", "0");
    SweepPlan.Workload w2 = parse(kv).get(0);
    assertEquals(3, w2.repeats());
    assertEquals(0, w2.warmups());
    assertEquals(3, w2.withNodes(3).repeats());
    assertEquals(0, w2.withEngines(List.of("sss")).warmups());
    kv.put("warmups", "-1");
    assertTrue(error(kv).contains("warmups"), error(kv));
  }

  @Test
  void replication_parses_defaultsToOne_andNeedsANodePerCopy() {
    assertEquals(1, parse(shuffle()).get(0).replication());
    Map<String, String> kv = shuffle();
    kv.put("replication", "2");
    SweepPlan.Workload w = parse(kv).get(0);
    assertEquals(2, w.replication());
    assertEquals(2, w.withNodes(3).withEngines(List.of("sss")).replication(), "kept by the other shapes");
    assertEquals(1, w.withReplication(1).replication());
    kv.put("replication", "3"); // two nodes
    assertTrue(error(kv).contains("replication must be between 1 and nodes (2)"), error(kv));
    kv.put("replication", "0");
    assertTrue(error(kv).contains("replication"), error(kv));
  }

  @Test
  void unknownKey_isNamed() {
    Map<String, String> kv = shuffle();
    kv.put("mapoutKeyCont", "5");
    assertTrue(error(kv).contains("mapoutKeyCont"), error(kv));
    Map<String, String> kv2 = shuffle();
    kv2.put("sweep.nodes", "1,2");
    assertTrue(error(kv2).contains("sweep.nodes"));
  }

  @Test
  void nonDividingCounts_areRejected() {
    Map<String, String> kv = shuffle();
    kv.put("mapoutUniqueKeyCount", "48");
    String e = error(kv);
    assertTrue(e.contains("mapoutUniqueKeyCount") && e.contains("mapoutKeyCount"), e);

    Map<String, String> kv2 = shuffle();
    kv2.put("sweep.mapoutKeyCount", "16,24");
    assertTrue(error(kv2).contains("24"), error(kv2));

    Map<String, String> kv3 = shuffle();
    kv3.put("initialKeyCount", "48");
    kv3.put("sweep.mapoutKeyCount", "32");
    assertTrue(error(kv3).contains("initialKeyCount"), error(kv3));
  }

  @Test
  void inconsistentParameters_areRejected() {
    Map<String, String> kv = shuffle();
    kv.put("mapoutValueLength", "8");
    assertTrue(error(kv).contains("mapoutValueLength"), error(kv));

    Map<String, String> kv2 = shuffle();
    kv2.remove("totalBytes");
    assertTrue(error(kv2).contains("totalBytes"));

    Map<String, String> kv3 = shuffle();
    kv3.put("totalBytes", "16"); // 1-byte values cannot carry a combined count
    assertTrue(error(kv3).contains("combinerEnabled"), error(kv3));

    Map<String, String> kv4 = shuffle();
    kv4.put("partitionMethod", "random");
    assertTrue(error(kv4).contains("partitionMethod"));

    Map<String, String> kv5 = shuffle();
    kv5.put("engines", "sss,spark");
    assertTrue(error(kv5).contains("spark"));

    Map<String, String> kv6 = shuffle();
    kv6.put("totalBytes", "1GiB");
    assertTrue(error(kv6).contains("mapoutValueLength"), error(kv6));

    Map<String, String> kv7 = shuffle();
    kv7.remove("reduceoutValueLength");
    assertTrue(error(kv7).contains("missing reduceoutValueLength"));
  }

  @Test
  void workloads_shareAndOverrideKeys() {
    Map<String, String> kv = shuffle();
    kv.put("workloads", "a,b");
    kv.put("b.partitionMethod", "shifted");
    kv.put("b.sweep.mapoutKeyCount", "64");
    List<SweepPlan.Workload> ws = parse(kv);
    assertEquals(2, ws.size());
    assertEquals(6, ws.get(0).points().size());
    assertEquals(2, ws.get(1).points().size());
    assertEquals(SyntheticParams.PartitionMethod.SHIFTED, ws.get(1).points().get(0).params().partitionMethod());
    kv.put("c.nodes", "3");
    assertTrue(error(kv).contains("c.nodes"));
  }

  @Test
  void fewerPairsThanInputs_everyKthMapCallEmits() {
    SyntheticParams p = new SyntheticParams("r", 1, 1, 1024, 8, 256, 1, 16, 1,
        SyntheticParams.PartitionMethod.AVERAGE, false, 2);
    p.validate();
    long total = 0;
    for (long i = 0; i < 1024; i++) {
      total += SyntheticParams.pairsOf(i, 1024, 256);
    }
    assertEquals(256, total);
    assertEquals(3, SyntheticParams.firstPairOf(12, 1024, 256));
  }

  @Test
  void sizes_parseBinarySuffixes() {
    assertEquals(1L << 30, Sizes.parse("x", "1GiB"));
    assertEquals(64 << 10, Sizes.parse("x", "64K"));
    assertEquals(1 << 20, Sizes.parse("x", "1M"));
    assertEquals(32, Sizes.parse("x", "32"));
    assertEquals("64K", Sizes.formatCount(65536));
    assertEquals("32MiB", Sizes.format(32 << 20));
    assertThrows(IllegalArgumentException.class, () -> Sizes.parse("x", "lots"));
  }

  @Test
  void shippedParameterFiles_parse() throws Exception {
    Path dir = Path.of("params");
    assertTrue(Files.isDirectory(dir), "run from benchmarks/");
    try (Stream<Path> files = Files.list(dir)) {
      // classic-job files (RandomTextWriter, WordCount, Pi) are read by ClassicPlan, not SweepPlan
      List<Path> all = files.filter(f -> f.toString().endsWith(".properties"))
          .filter(f -> !f.getFileName().toString().startsWith("classic")).toList();
      assertTrue(all.size() >= 5);
      for (Path f : all) {
        List<SweepPlan.Workload> ws = SweepPlan.load(f);
        assertFalse(ws.isEmpty(), f.toString());
        for (SweepPlan.Workload w : ws) {
          assertFalse(w.points().isEmpty());
          // shipped figures are medians of several warm runs
          assertTrue(w.repeats() >= 3 && w.warmups() >= 1, f + ": repeats " + w.repeats() + ", warmups " + w.warmups());
        }
      }
    }
    List<SweepPlan.Workload> write = SweepPlan.load(dir.resolve("write-intensive.properties"));
    assertTrue(write.get(0).points().stream().anyMatch(p -> p.params().mapoutUniqueKeyCount() == 1 << 20));
  }
}
