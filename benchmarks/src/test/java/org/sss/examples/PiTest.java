package org.sss.examples;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.math.BigDecimal;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.ExtendWith;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.CsvSource;
import org.sss.client.SssClient;
import org.sss.client.job.ProgressListener;

@ExtendWith(SharedClusters.class)
class PiTest {
  @ParameterizedTest
  @CsvSource({"1,false,5,4000", "1,true,3,10000", "3,false,10,3000", "3,true,7,5000", "5,true,16,2000", "5,false,1,20000"})
  void pi_countsLikeOneSequentialPass(int nodes, boolean combine, int maps, long samples) {
    // the reference: every point 1 .. maps*samples of the sequence in one loop
    long inside = 0;
    for (long i = 1; i <= maps * samples; i++) {
      double x = referenceHalton(i, 2) - 0.5;
      double y = referenceHalton(i, 3) - 0.5;
      if (x * x + y * y <= 0.25) {
        inside++;
      }
    }
    try (SssClient client = SharedClusters.get(nodes).client()) {
      String in = SharedClusters.table("pi-in");
      String out = SharedClusters.table("pi-out");
      Pi.Result r = Pi.run(client, in, out, maps, samples, combine, ProgressListener.none());
      assertEquals(inside, r.inside());
      assertEquals(maps * samples - inside, r.outside());
      assertEquals(maps, r.job().stages().get(0).recordsIn());
      double estimate = r.estimate().doubleValue();
      assertTrue(Math.abs(estimate - Math.PI) < 2e-3, "estimate " + estimate);
      assertEquals(Pi.estimate(inside, maps * samples), r.estimate());
      client.dropTable(in, true);
      client.dropTable(out, true);
    }
  }

  /** The Halton coordinate from the digits of the index written out in the base and mirrored. */
  private static double referenceHalton(long index, int base) {
    String digits = Long.toString(index, base);
    double x = 0;
    double weight = 1.0 / base;
    for (int i = digits.length() - 1; i >= 0; i--) {
      x += Character.digit(digits.charAt(i), base) * weight;
      weight /= base;
    }
    return x;
  }

  @Test
  void incrementalWalk_matchesTheRadicalInverse() {
    for (long offset : new long[] {0, 1, 12345, 1_000_000_007L}) {
      Pi.HaltonWalk x = new Pi.HaltonWalk(2, 63, offset);
      Pi.HaltonWalk y = new Pi.HaltonWalk(3, 40, offset);
      long inside = 0;
      for (long i = offset + 1; i <= offset + 20_000; i++) {
        // the walk accumulates rounding (as Hadoop's does): ~1e-12 after a billion points
        assertEquals(Pi.halton(i, 2), x.next(), 1e-9);
        assertEquals(Pi.halton(i, 3), y.next(), 1e-9);
        double dx = Pi.halton(i, 2) - 0.5;
        double dy = Pi.halton(i, 3) - 0.5;
        inside += dx * dx + dy * dy <= 0.25 ? 1 : 0;
      }
      assertEquals(inside, Pi.count(offset, 20_000)[0], 1, "a point on the circle may fall either way");
    }
  }

  @Test
  void halton_firstPoints() {
    assertEquals(0.5, Pi.halton(1, 2));
    assertEquals(0.25, Pi.halton(2, 2));
    assertEquals(0.75, Pi.halton(3, 2));
    assertEquals(0.125, Pi.halton(4, 2));
    assertEquals(1.0 / 3, Pi.halton(1, 3), 1e-15);
    assertEquals(2.0 / 3, Pi.halton(2, 3), 1e-15);
    assertEquals(1.0 / 9, Pi.halton(3, 3), 1e-15);
    assertEquals(4.0 / 9, Pi.halton(4, 3), 1e-15);
  }

  @Test
  void estimate_isHadoopsFormula() {
    assertEquals(new BigDecimal("3.14000000000000000000"), Pi.estimate(785, 1000));
  }

  @Test
  void badArguments_areRefused() throws Exception {
    try (SssClient client = SharedClusters.get(1).client()) {
      assertThrows(IllegalArgumentException.class, () -> Pi.writeInput(client, SharedClusters.table("x"), 0, 10));
    }
  }
}
