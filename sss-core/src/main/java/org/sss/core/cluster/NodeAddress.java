package org.sss.core.cluster;

/** Where one node listens. */
public record NodeAddress(int id, String host, int port) {
  public NodeAddress {
    if (port <= 0 || port > 65535) {
      throw new IllegalArgumentException("node " + id + ": port out of range: " + port);
    }
    if (host == null || host.isBlank()) {
      throw new IllegalArgumentException("node " + id + ": empty host");
    }
  }

  /** Parses {@code host:port}. */
  public static NodeAddress parse(int id, String hostPort) {
    int colon = hostPort.lastIndexOf(':');
    if (colon <= 0) {
      throw new IllegalArgumentException("node." + id + ": expected host:port, got '" + hostPort + "'");
    }
    try {
      return new NodeAddress(id, hostPort.substring(0, colon).trim(),
          Integer.parseInt(hostPort.substring(colon + 1).trim()));
    } catch (NumberFormatException e) {
      throw new IllegalArgumentException("node." + id + ": bad port in '" + hostPort + "'");
    }
  }

  @Override
  public String toString() {
    return "node " + id + " (" + host + ":" + port + ")";
  }

  /** {@code host:port}, as written in cluster files. */
  public String hostPort() {
    return host + ":" + port;
  }
}
