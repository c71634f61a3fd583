package org.sss.bench.synthetic;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.sss.bench.synthetic.SyntheticParams.PartitionMethod;
import org.sss.client.cluster.SssCluster;

/**
 * Real small jobs on both engines (an embedded SSS cluster of two nodes, Hadoop's local runner)
 * made to give a wrong answer on purpose ({@link Fault}), each of which the verification must
 * refuse, naming what differs; the same job without a fault must verify.
 *
 * <p>The shape is the shuffle-intensive one at its smallest: 16 keys of 4,096 one-byte values
 * each, one-byte outputs, so that an output value is the low byte of its key's value count,
 * the weakness the per-key digest and group count are there for.
 */
class FaultInjectionTest {
  static final SyntheticParams P = new SyntheticParams("faults", 2, 1, 16, 8, 65536, 1, 16, 1,
      PartitionMethod.AVERAGE, false, 2);

  static SssCluster cluster;

  @BeforeAll
  static void start() throws Exception {
    P.validate();
    cluster = SssCluster.embedded(2);
  }

  @AfterAll
  static void stop() {
    if (cluster != null) {
      cluster.close();
    }
  }

  static RunResult sss(Fault f) throws Exception {
    return new SssSyntheticRunner(cluster, false, f).run(P, Progress.none());
  }

  static RunResult hadoop(Fault f) throws Exception {
    return new HadoopSyntheticRunner(null, f).run(P, Progress.none());
  }

  static void assertCaught(RunResult r, String... parts) {
    assertFalse(r.verified(), "a wrong answer verified");
    for (String part : parts) {
      assertTrue(r.problem().contains(part), "'" + part + "' not in: " + r.problem());
    }
  }

  @Test
  void sss_cleanRun_verifies_andReadsKeysByKey() throws Exception {
    RunResult r = sss(Fault.NONE);
    assertTrue(r.verified(), r.problem());
    assertEquals("", r.problem());
    assertEquals(16, r.counters().get("reduce.keys"));
    assertEquals(16, r.counters().get("verify.keysReadByKey"));
  }

  @Test
  void sss_missingValue_isCaught_namingTheKey() throws Exception {
    assertCaught(sss(Fault.MISSING_VALUE), "intermediate values reduced: expected 65536, got 65535",
        "reduce digest", Observed.OUTPUT + ": 1 (key 0: output value not the expected)",
        Observed.BY_KEY + ": 1 (key 0: value not the expected)");
  }

  /**
   * Key 0's 4,096 values reduced as 256 + 3,840: every value arrives once, the value and checksum
   * totals hold, and the one-byte output of either part (0x00) is the whole group's, so neither
   * the scan nor a read by key can see it. The group count and the digest do.
   */
  @Test
  void sss_splitGroup_isCaught_byGroupCountAndDigest() throws Exception {
    RunResult r = sss(Fault.SPLIT_GROUP);
    assertCaught(r, "reduce groups (reduce calls): expected 16, got 17", "reduce digest");
    assertFalse(r.problem().contains("intermediate"), r.problem());
    assertFalse(r.problem().contains(Observed.OUTPUT), r.problem());
  }

  @Test
  void sss_pairInTheWrongPartition_isCaught_byPlacementAndByKey() throws Exception {
    RunResult r = sss(Fault.WRONG_PARTITION);
    assertCaught(r, Observed.PLACEMENT + ": 1 (key 0 in partition", Observed.BY_KEY + ": 1 (key 0: nothing found)");
    // the pair itself is right: only where it is stored is wrong
    assertFalse(r.problem().contains(Observed.OUTPUT), r.problem());
    assertFalse(r.problem().contains("reduce"), r.problem());
  }

  /**
   * Input keys 0 and 1 each mapped with the other's value (a reader that pairs keys with the wrong
   * values): every value is read once, so a sum of the values' checksums holds, and the map output,
   * which depends on the key only, is right. Only a digest of each input pair, key and value
   * together, sees it.
   */
  @Test
  void swappedInputValues_areCaught_onBothEngines() throws Exception {
    assertCaught(sss(Fault.SWAPPED_INPUT), "input checksum");
    RunResult h = hadoop(Fault.SWAPPED_INPUT);
    assertCaught(h, "input checksum");
    assertFalse(h.problem().contains("reduce"), h.problem());
    assertFalse(h.problem().contains(Observed.OUTPUT), h.problem());
  }

  @Test
  void hadoop_cleanRun_verifies_andEveryFaultIsCaught() throws Exception {
    RunResult clean = hadoop(Fault.NONE);
    assertTrue(clean.verified(), clean.problem());
    assertEquals(16, clean.counters().get("verify.keysReadByKey"));

    assertCaught(hadoop(Fault.MISSING_VALUE), "intermediate values reduced: expected 65536, got 65535",
        "reduce digest", Observed.OUTPUT + ": 1 (key 0: output value not the expected)",
        Observed.BY_KEY + ": 1 (key 0: value not the expected)");
    // Hadoop keeps both parts' outputs: key 0 has two pairs
    assertCaught(hadoop(Fault.SPLIT_GROUP), "reduce groups (reduce calls): expected 16, got 17", "reduce digest",
        "output pairs: expected 16, got 17", Observed.OUTPUT + ": 1 (key 0: 2 output values, expected 1)",
        Observed.BY_KEY + ": 1 (key 0: 2 values found, expected 1)");
    RunResult misplaced = hadoop(Fault.WRONG_PARTITION);
    assertCaught(misplaced, Observed.PLACEMENT + ": 1 (key 0 in part-r-0000", Observed.BY_KEY
        + ": 1 (key 0: nothing found)");
    assertFalse(misplaced.problem().contains(Observed.OUTPUT), misplaced.problem());
  }
}
