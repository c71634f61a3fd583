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
}
