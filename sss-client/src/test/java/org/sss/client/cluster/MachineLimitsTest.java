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
  void processes_moreHeapThanMemory_isRefusedNamingBoth() {
    long memory = 24 * GIB;
    assertDoesNotThrow(() -> MachineLimits.checkProcesses(3, GIB, "1g", memory));
    // 21 of (1 GiB + 128 MiB) is 23.6 GiB: fits; 22 is 24.75 GiB: does not
    assertDoesNotThrow(() -> MachineLimits.checkProcesses(21, GIB, "1g", memory));
    IllegalArgumentException e = assertThrows(IllegalArgumentException.class,
        () -> MachineLimits.checkProcesses(22, GIB, "1g", memory));
    assertTrue(e.getMessage().contains("--nodes 22 with --heap 1g") && e.getMessage().contains("24.0 GiB"),
        e.getMessage());
    assertThrows(IllegalArgumentException.class, () -> MachineLimits.checkProcesses(1_000_000, 64L << 20, "64m", memory));
  }

  @Test
  void bytesOf_readsSizesAsXmxDoes() {
    assertEquals(512L << 20, MachineLimits.bytesOf("512m"));
    assertEquals(2 * GIB, MachineLimits.bytesOf("2G"));
    assertEquals(4096, MachineLimits.bytesOf("4k"));
    assertEquals(1000, MachineLimits.bytesOf("1000"));
  }
}
