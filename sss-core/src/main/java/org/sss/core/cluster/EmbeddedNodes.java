package org.sss.core.cluster;

import java.nio.file.Path;
import java.util.List;
import java.util.function.Function;

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

  /**
   * Starts {@code n} nodes in this process on {@code host}, each on a port the kernel picks:
   * every node's socket is bound first, then {@code specOf} makes the cluster spec from the
   * addresses bound (node ids 0..n-1, in order), then the nodes start on those sockets. No port
   * is released between being picked and being listened on, so none can be taken meanwhile.
   * Node {@code i} stores its data under {@code baseDir/node-i}.
   */
  Started startOnFreePorts(int n, String host, Function<List<NodeAddress>, ClusterSpec> specOf, Path baseDir)
      throws Exception;

  /**
   * Does the one-time work of a first node's start in this JVM (loading the store's native
   * library), so that a caller can have it done on another thread while it does something else.
   */
  default void prepare() {}

  /** Nodes started by {@link #startOnFreePorts}: the spec they run with; closing stops them all. */
  record Started(ClusterSpec spec, AutoCloseable nodes) {}
}
