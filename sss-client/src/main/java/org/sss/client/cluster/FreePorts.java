package org.sss.client.cluster;

import java.io.IOException;
import java.net.InetAddress;
import java.net.ServerSocket;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.ThreadLocalRandom;

/**
 * Picks ports that are free right now on loopback, for clusters of server processes started on
 * this machine: a process cannot be handed a socket bound here, so its port is picked, released
 * and written into the cluster file before it starts (another process may take it meanwhile; the
 * start then fails naming the node). Clusters in this JVM bind their nodes' sockets first
 * instead, and take only their membership (Raft) ports from here (see {@link EmbeddedCluster}).
 *
 * <p>Ports are drawn at random from below the kernel's ephemeral range
 * ({@code net.ipv4.ip_local_port_range}) and below 30000, not asked of the kernel with port 0: the kernel hands
 * ephemeral ports to every outgoing connection too, so one picked there could be taken by any
 * client on the machine (this one's own connections included) between the pick and the node's
 * start. Drawn at random, two clusters started at once rarely pick the same port.
 */
final class FreePorts {
  /** How many ports the draw may choose from. */
  private static final int SPAN = 10_000;
  /** The highest port drawn: Kubernetes gives its node ports 30000-32767. */
  private static final int HIGHEST = 29_999;

  private FreePorts() {}

  /**
   * The system property giving this process a slot (a number from 1): processes that start
   * clusters side by side (the build's test JVMs, one slot each) then draw from eighths of the
   * range of their own, so that neither takes a port the other picked and has not bound yet, or
   * holds for a node it restarts. Slots past eight share eighths again; a value that is not a
   * number is ignored.
   */
  static final String SLOT_PROPERTY = "sss.local.ports.slot";
  private static final int SLOTS = 8;

  static List<Integer> pick(int count) throws IOException {
    int high = Math.min(ephemeralLow() - 1, HIGHEST);
    int low = Math.max(1024, high - SPAN);
    int slot = slot();
    int width = (high - low + 1) / SLOTS;
    if (slot > 0 && width - 1 > 2 * count) { // (a range too small to share is drawn from whole)
      low += ((slot - 1) % SLOTS) * width;
      high = low + width - 1;
    }
    List<ServerSocket> held = new ArrayList<>();
    List<Integer> ports = new ArrayList<>();
    try {
      for (int tries = 0; ports.size() < count && tries < 50 * count && high - low > count; tries++) {
        int port = ThreadLocalRandom.current().nextInt(low, high + 1);
        if (!ports.contains(port)) {
          try {
            held.add(new ServerSocket(port, 1, InetAddress.getLoopbackAddress()));
            ports.add(port);
          } catch (IOException taken) {
            // held by something else: draw again
          }
        }
      }
      while (ports.size() < count) { // no room below the ephemeral range: the kernel's choice
        ServerSocket s = new ServerSocket(0, 1, InetAddress.getLoopbackAddress());
        held.add(s);
        ports.add(s.getLocalPort());
      }
    } finally {
      for (ServerSocket s : held) {
        s.close();
      }
    }
    return ports;
  }

  /** This process's slot ({@link #SLOT_PROPERTY}), or 0 for none. */
  private static int slot() {
    try {
      return Math.max(0, Integer.parseInt(System.getProperty(SLOT_PROPERTY, "0").strip()));
    } catch (NumberFormatException e) {
      return 0; // such as an unexpanded ${surefire.forkNumber} where the tests run without forks
    }
  }

  /** The first port of the kernel's ephemeral range (Linux's default when it cannot be read). */
  private static int ephemeralLow() {
    try {
      // read line by line: Files.readString of this file returned its first byte alone (JDK 17)
      String range = Files.readAllLines(Path.of("/proc/sys/net/ipv4/ip_local_port_range")).get(0).trim();
      return Integer.parseInt(range.split("\\s+")[0]);
    } catch (IOException | RuntimeException e) {
      return 32768;
    }
  }
}
