package org.sss.client.cluster;

import static org.junit.jupiter.api.Assertions.assertDoesNotThrow;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import org.junit.jupiter.api.Test;

/** The limits a cluster start checks against the machine, on figures given by the test. */
class MachineLimitsTest {
  private static final long GIB = 1L << 30;

  @Test
  void embedded_largestThatFits_isAcceptedAndOneMoreIsRefused() {
    long maxFds = 20_000;
    int fit = MachineLimits.maxEmbedded(maxFds);
    // the formula by hand: 256 + n * (40 + 2 (n - 1)) descriptors
    assertEquals(256 + 90L * (40 + 2 * 89), MachineLimits.embeddedFds(90));
    assertEquals(90, fit);
    assertDoesNotThrow(() -> MachineLimits.checkEmbedded(fit, maxFds));
    IllegalArgumentException e = assertThrows(IllegalArgumentException.class,
        () -> MachineLimits.checkEmbedded(fit + 1, maxFds));
    assertTrue(e.getMessage().contains("at most 90 nodes fit"), e.getMessage());
    assertThrows(IllegalArgumentException.class, () -> MachineLimits.checkEmbedded(0, maxFds));
    assertDoesNotThrow(() -> MachineLimits.checkEmbedded(1_000_000, -1), "an unknown limit is not checked");
  }

  @Test
  void processes_refusedOnlyWhenEvenIdleTheyCannotFit_warnedWhenTheirHeapsCould() {
    long memory = 24 * GIB;
    assertEquals(null, MachineLimits.checkProcesses(3, GIB, "1g", memory));
    // heaps are ceilings: three 8 GiB servers start on 24 GiB, with a warning
    String warning = MachineLimits.checkProcesses(3, 8 * GIB, "8g", memory);
    assertTrue(warning != null && warning.contains("--heap 8g") && warning.contains("24.0 GiB"), warning);
    // 192 idle servers of 128 MiB fill 24 GiB; one more does not fit
    assertTrue(MachineLimits.checkProcesses(192, 64L << 20, "64m", memory) != null);
    IllegalArgumentException e = assertThrows(IllegalArgumentException.class,
        () -> MachineLimits.checkProcesses(193, 64L << 20, "64m", memory));
    assertTrue(e.getMessage().contains("--nodes 193") && e.getMessage().contains("at most 192 servers fit"),
        e.getMessage());
    assertThrows(IllegalArgumentException.class, () -> MachineLimits.checkProcesses(1_000_000, GIB, "1g", memory));
  }

  @Test
  void bytesOf_readsSizesAsXmxDoes() {
    assertEquals(512L << 20, MachineLimits.bytesOf("512m"));
    assertEquals(2 * GIB, MachineLimits.bytesOf("2G"));
    assertEquals(4096, MachineLimits.bytesOf("4k"));
    assertEquals(1000, MachineLimits.bytesOf("1000"));
  }
}
