package org.sss.client.cluster;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.net.InetAddress;
import java.net.ServerSocket;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.HashSet;
import java.util.List;
import org.junit.jupiter.api.Test;

class FreePortsTest {
  @Test
  void portsAreDistinct_bindable_andBelowTheEphemeralRange() throws Exception {
    int ephemeralLow = Integer.parseInt(
        Files.readAllLines(Path.of("/proc/sys/net/ipv4/ip_local_port_range")).get(0).trim().split("\\s+")[0]);
    List<Integer> ports = FreePorts.pick(40);
    assertEquals(40, new HashSet<>(ports).size(), "distinct: " + ports);
    for (int port : ports) {
      // below the ephemeral range, unless it leaves too little room (then the kernel's choice)
      assertTrue(ephemeralLow < 1024 + 1000 || port >= 1024 && port < ephemeralLow, port + " is below " + ephemeralLow);
      try (ServerSocket s = new ServerSocket(port, 1, InetAddress.getLoopbackAddress())) {
        assertEquals(port, s.getLocalPort());
      }
    }
  }

  /** Each slot draws from an eighth of its own; slots past eight wrap; a value that is no number changes nothing. */
  @Test
  void aSlot_drawsFromItsOwnEighth() throws Exception {
    int ephemeralLow = Integer.parseInt(
        Files.readAllLines(Path.of("/proc/sys/net/ipv4/ip_local_port_range")).get(0).trim().split("\\s+")[0]);
    int high = Math.min(ephemeralLow - 1, 29_999);
    int low = Math.max(1024, high - 10_000);
    int width = (high - low + 1) / 8;
    org.junit.jupiter.api.Assumptions.assumeTrue(width > 41, "an ephemeral range that leaves room for eighths");
    String before = System.getProperty(FreePorts.SLOT_PROPERTY);
    try {
      for (String slot : List.of("3", "11")) { // 11 wraps to the third eighth
        System.setProperty(FreePorts.SLOT_PROPERTY, slot);
        for (int port : FreePorts.pick(20)) {
          assertTrue(port >= low + 2 * width && port < low + 3 * width, "slot " + slot + ": " + port);
        }
      }
      System.setProperty(FreePorts.SLOT_PROPERTY, "${surefire.forkNumber}");
      List<Integer> whole = FreePorts.pick(20);
      for (int port : whole) {
        assertTrue(port >= low && port <= high, "no slot: " + port);
      }
      assertTrue(whole.stream().map(port -> (port - low) / width).distinct().count() > 1,
          "drawn from the whole range, not one eighth: " + whole);
    } finally {
      if (before == null) {
        System.clearProperty(FreePorts.SLOT_PROPERTY);
      } else {
        System.setProperty(FreePorts.SLOT_PROPERTY, before);
      }
    }
  }
}
