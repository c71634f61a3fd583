package org.sss.bench.synthetic;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNotEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.util.List;
import java.util.concurrent.atomic.AtomicLong;
import org.junit.jupiter.api.Test;
import org.sss.bench.synthetic.SyntheticParams.PartitionMethod;

/** The verification's arithmetic without an engine: what a correct output looks like, and wrong ones. */
class VerificationTest {
  /** 16 keys of 4,096 one-byte values, one-byte outputs. */
  static final SyntheticParams P = new SyntheticParams("v", 1, 1, 16, 8, 65536, 1, 16, 1,
      PartitionMethod.AVERAGE, false, 2);

  /** The counters of a correct run, and no output yet. */
  static Observed correctCounters(Expected e) {
    Observed o = new Observed(e.keys());
    o.inputRecords = e.inputRecords();
    o.inputCrc = e.inputCrc();
    o.values = e.values();
    o.valueCrc = e.valueCrc();
    o.reduceKeys = e.groups();
    o.reduceDigest = e.reduceDigest();
    return o;
  }

  /** What a correct run reports, built from the expected values themselves. */
  static Observed correct(Expected e) {
    Observed o = correctCounters(e);
    for (int k = 0; k < e.keys(); k++) {
      for (byte[] v : e.valuesOf(k)) {
        o.addOutput(k, v, 0, v.length, e.outputLength());
      }
    }
    return o;
  }

  @Test
  void correctOutput_verifies() {
    Expected e = Expected.compute(P, null, 1);
    assertEquals(16, e.groups());
    assertEquals("", correct(e).compare(e));
  }

  @Test
  void localPlacement_expectsOneOutputPerKeyAndNode() {
    SyntheticParams p = new SyntheticParams("v", 2, 1, 16, 8, 65536, 1, 16, 1, PartitionMethod.LOCAL, false, 2);
    Expected e = Expected.compute(p, i -> i % 2, 2);
    assertEquals(32, e.groups());
    for (int k = 0; k < 16; k++) {
      assertEquals(2, e.outputsOf(k));
    }
    assertEquals("", correct(e).compare(e));
  }

  /**
   * 256 values moved from key 1 to key 2: the value and checksum totals hold, and one-byte
   * outputs (the low byte of each count) do not change; only the digest of the groups tells.
   */
  @Test
  void valuesMovedBetweenKeys_changeOnlyTheDigest_whichIsChecked() {
    Expected e = Expected.compute(P, null, 1);
    Observed o = correct(e);
    long[] count = {4096, 4096};
    long moved = 256;
    // any checksum sums will do: the digest sees count and checksum together
    o.reduceDigest = o.reduceDigest - SyntheticData.groupDigest(1, count[0], 11) - SyntheticData.groupDigest(2,
        count[1], 22) + SyntheticData.groupDigest(1, count[0] - moved, 11) + SyntheticData.groupDigest(2,
        count[1] + moved, 22);
    String problem = o.compare(e);
    assertTrue(problem.startsWith("reduce digest"), problem);
  }

  @Test
  void splitGroup_digestDiffersFromTheWhole() {
    long whole = SyntheticData.groupDigest(0, 4096, 123456789L);
    long split = SyntheticData.groupDigest(0, 256, 1000L) + SyntheticData.groupDigest(0, 3840, 123456789L - 1000L);
    assertNotEquals(whole, split);
  }

  @Test
  void outputs_areComparedKeyByKey_andNamed() {
    Expected e = Expected.compute(P, null, 1);
    Observed o = correct(e);
    byte[] v = e.valuesOf(5).get(0);
    o.addOutput(5, v, 0, v.length, 1); // a second output for key 5
    o.addOutput(99, v, 0, v.length, 1); // a key that does not exist
    String problem = o.compare(e);
    assertTrue(problem.contains("output pairs: expected 16, got 18"), problem);
    assertTrue(problem.contains(Observed.OUTPUT + ": 1 (key 5: 2 output values, expected 1)"), problem);
    assertTrue(problem.contains(Observed.UNKNOWN_KEYS + ": 1 (key 99)"), problem);
  }

  /**
   * Wrong outputs a skeptic would try, one at a time on a shape whose outputs carry (count,
   * checksum sum, key): a truncated value, a value with the right count but another checksum sum,
   * and a value of key 3 written under key 4 in place of key 4's own.
   */
  @Test
  void truncated_wrongChecksum_andMislabelledOutputs_areEachCaught() {
    SyntheticParams p = new SyntheticParams("v", 1, 1, 16, 8, 65536, 1, 16, 24, PartitionMethod.AVERAGE, false, 2);
    Expected e = Expected.compute(p, null, 1);

    Observed truncated = correctCounters(e);
    Observed wrongSum = correctCounters(e);
    Observed mislabelled = correctCounters(e);
    for (int k = 0; k < e.keys(); k++) {
      byte[] v = e.valuesOf(k).get(0);
      truncated.addOutput(k, v, 0, k == 2 ? v.length - 1 : v.length, e.outputLength());
      byte[] w = v.clone();
      if (k == 2) {
        SyntheticData.fillOutput(w, 2, 4096, 12345); // the right count, another checksum sum
      }
      wrongSum.addOutput(k, w, 0, w.length, e.outputLength());
      byte[] m = k == 4 ? e.valuesOf(3).get(0) : v;
      mislabelled.addOutput(k, m, 0, m.length, e.outputLength());
    }
    String t = truncated.compare(e);
    assertTrue(t.contains("output values of the wrong length: expected 0, got 1")
        && t.contains(Observed.OUTPUT + ": 1 (key 2: output value not the expected)"), t);
    String w = wrongSum.compare(e);
    assertEquals(Observed.OUTPUT + ": 1 (key 2: output value not the expected)", w);
    String m = mislabelled.compare(e);
    assertEquals(Observed.OUTPUT + ": 1 (key 4: output value not the expected)", m);
  }

  @Test
  void findings_keepTheFirstFewInstances() {
    Findings f = new Findings();
    for (int k = 0; k < 8; k++) {
      f.add("keys whose output differs", "key " + k);
    }
    assertEquals("keys whose output differs: 8 (first: key 0, key 1, key 2, key 3, key 4)", f.toString());
  }

  @Test
  void readsByKey_compareMultisetsExactly() {
    Observed o = new Observed(4);
    o.byKey(1, List.of(new byte[] {1}, new byte[] {2}), List.of(new byte[] {2}, new byte[] {1}));
    assertEquals(0, o.count(Observed.BY_KEY));
    o.byKey(2, List.of(new byte[] {1}), List.of());
    o.byKey(3, List.of(new byte[] {1}), List.of(new byte[] {7}));
    assertEquals(2, o.count(Observed.BY_KEY));
  }

  @Test
  void keySample_spreadsEvenly_withFirstAndLast_withinItsBudget() {
    assertArrayEquals(new long[] {0, 1, 2, 3}, KeySample.of(4, 1));
    long[] s = KeySample.of(1 << 20, 1);
    assertEquals(KeySample.MAX_KEYS, s.length);
    assertEquals(0, s[0]);
    assertEquals((1 << 20) - 1, s[s.length - 1]);
    long[] big = KeySample.of(64, 16 << 20); // 16 MiB values: 64 MiB of reads
    assertArrayEquals(new long[] {0, 21, 42, 63}, big);
    assertArrayEquals(new long[] {0}, KeySample.of(1, 1));
  }

  @Test
  void spread_isMedianAndRange() {
    Spread s = Spread.of(List.of(0.30, 0.27, 0.33));
    assertEquals(3, s.runs());
    assertEquals(0.30, s.median(), 1e-12);
    assertEquals("0.27-0.33", s.range());
    assertEquals(0.285, Spread.of(List.of(0.30, 0.27)).median(), 1e-12);
    assertEquals("-", Spread.of(List.of(1.0)).range());
    assertTrue(Double.isNaN(Spread.of(List.of()).median()));
  }

  @Test
  void jobClock_seesCompletion_withinAFewMilliseconds() throws Exception {
    // the median of seven: a test JVM beside this one may delay any single wake-up by tens of ms
    List<Double> lates = new java.util.ArrayList<>();
    for (int i = 0; i < 7; i++) {
      AtomicLong doneAt = new AtomicLong();
      long t0 = System.nanoTime();
      Thread t = new Thread(() -> {
        try {
          Thread.sleep(50);
        } catch (InterruptedException ignored) {
          return;
        }
        doneAt.set(System.nanoTime());
      });
      t.start();
      double s = JobClock.waitFor(t0, () -> doneAt.get() != 0, () -> { });
      assertTrue(s >= 0.050, "seconds " + s);
      double late = s - (doneAt.get() - t0) / 1e9;
      assertTrue(late >= 0, "seen " + late + " s after the end");
      lates.add(late);
    }
    lates.sort(null);
    // a 100 ms sleep between polls would be 0-100 ms late; a 2 ms poll, a few ms at most
    assertTrue(lates.get(3) < 0.020, "seen late by " + lates + " s");
  }
}
