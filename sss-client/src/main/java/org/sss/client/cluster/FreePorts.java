package org.sss.client.cluster;

import java.io.IOException;
import java.net.InetAddress;
import java.net.ServerSocket;
import java.util.ArrayList;
import java.util.List;

/**
 * Picks ports that are free right now on loopback, for clusters of server processes started on
 * this machine: a process cannot be handed a socket bound here, so its port is picked, released
 * and written into the cluster file before it starts (another process may take it meanwhile; the
 * start then fails naming the node). Clusters in this JVM bind their sockets first instead (see
 * {@link EmbeddedCluster}).
 */
final class FreePorts {
  private FreePorts() {}

  static List<Integer> pick(int count) throws IOException {
    List<ServerSocket> held = new ArrayList<>();
    List<Integer> ports = new ArrayList<>();
    try {
      for (int i = 0; i < count; i++) {
        ServerSocket s = new ServerSocket(0, 1, InetAddress.getLoopbackAddress());
        s.setReuseAddress(true);
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
}
