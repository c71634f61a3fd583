package org.sss.server;

import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import org.sss.core.cluster.ClusterSpec;
import org.sss.core.cluster.EmbeddedNodes;

/** Starts a cluster's nodes in this JVM, for tests, demos and the command line. */
public final class EmbeddedServers implements EmbeddedNodes {
  @Override
  public AutoCloseable start(ClusterSpec spec, Path baseDir) throws Exception {
    List<SssServer> servers = new ArrayList<>();
    try {
      for (int i = 0; i < spec.nodeCount(); i++) {
        servers.add(SssServer.start(NodeConfig.of(spec, i, baseDir.resolve("node-" + i))));
      }
    } catch (Exception e) {
      servers.forEach(SssServer::close);
      throw e;
    }
    return () -> servers.forEach(SssServer::close);
  }
}
