package org.sss.core.cluster;

import java.nio.file.Path;

/**
 * Starts the nodes of a cluster inside this JVM. Implemented by the server module and found
 * with {@link java.util.ServiceLoader}, so that clients can start embedded clusters without
 * linking the server (or RocksDB) at compile time.
 */
public interface EmbeddedNodes {
  /**
   * Starts every node of {@code spec} in this process, node {@code i} storing its data under
   * {@code baseDir/node-i}. Returns when all listen; closing the handle stops them all.
   */
  AutoCloseable start(ClusterSpec spec, Path baseDir) throws Exception;
}
