package org.sss.server;

import java.io.IOException;
import java.nio.file.Path;
import java.util.Properties;
import java.util.Set;
import java.util.TreeSet;
import org.sss.core.cluster.ClusterSpec;
import org.sss.core.cluster.StrictProperties;
import org.sss.core.transport.Pipelines;
import org.sss.server.transport.QueuedRequests;

/**
 * How one node runs. Read from a node file ({@code bin/sss server --config FILE}):
 *
 * <pre>
 *   cluster=cluster.properties   # the cluster file (relative to this file), shared by all nodes
 *   node.id=0                    # which node.N of the cluster file this is
 *   data.dir=data/node-0         # where the store lives (relative to this file)
 *   bind=0.0.0.0                 # optional; the interface to listen on (default: the cluster file's host)
 *   max.frame.bytes=67108864     # optional; larger frames close the connection
 *   max.value.bytes=33554432     # optional; larger keys or values are refused
 *   worker.threads=4             # optional; threads that run store operations
 *   max.queued.requests=1024     # optional; requests held at once over all connections (then reading pauses)
 *   tls.cert=..., tls.key=...    # optional; PEM files, turn TLS on
 *   data.group.read=true         # optional; the data directory 0750 instead of 0700 (backups, monitoring)
 * </pre>
 */
public record NodeConfig(ClusterSpec cluster, int nodeId, Path dataDir, String bindHost,
                         int maxFrameBytes, int maxValueBytes, int workerThreads,
                         Path tlsCert, Path tlsKey, boolean groupReadable, int maxQueuedRequests) {
  public static final int DEFAULT_MAX_FRAME = Pipelines.DEFAULT_MAX_FRAME;
  public static final int DEFAULT_MAX_VALUE = 32 << 20;
  /** The smallest frame limit a node accepts (bulk batches are about 1 MiB). */
  public static final int MIN_MAX_FRAME = 1 << 20;
  private static final Set<String> KNOWN = Set.of("cluster", "node.id", "data.dir", "bind",
      "max.frame.bytes", "max.value.bytes", "worker.threads", "tls.cert", "tls.key", "data.group.read", "max.queued.requests");

  public NodeConfig {
    if (nodeId < 0 || nodeId >= cluster.nodeCount()) {
      throw new IllegalArgumentException("node.id " + nodeId + " is not in the cluster (0.."
          + (cluster.nodeCount() - 1) + ")");
    }
    if (maxFrameBytes < MIN_MAX_FRAME) {
      throw new IllegalArgumentException("max.frame.bytes must be at least " + MIN_MAX_FRAME
          + " (1 MiB), not " + maxFrameBytes);
    }
    if (maxValueBytes < 1 || maxValueBytes > maxFrameBytes - (64 << 10)) {
      throw new IllegalArgumentException("max.value.bytes must be 1.." + (maxFrameBytes - (64 << 10))
          + " (a pair and its header must fit in a frame of max.frame.bytes=" + maxFrameBytes + "), not "
          + maxValueBytes);
    }
    if (workerThreads < 1) {
      throw new IllegalArgumentException("worker.threads must be at least 1, not " + workerThreads);
    }
    if (maxQueuedRequests < 2) {
      throw new IllegalArgumentException("max.queued.requests must be at least 2, not " + maxQueuedRequests);
    }
    if ((tlsCert == null) != (tlsKey == null)) {
      throw new IllegalArgumentException(tlsCert == null ? "tls.key is given without tls.cert: TLS needs both"
          : "tls.cert is given without tls.key: TLS needs both");
    }
  }

  /** A config whose data directory is its owner's alone. */
  public NodeConfig(ClusterSpec cluster, int nodeId, Path dataDir, String bindHost, int maxFrameBytes,
                    int maxValueBytes, int workerThreads, Path tlsCert, Path tlsKey) {
    this(cluster, nodeId, dataDir, bindHost, maxFrameBytes, maxValueBytes, workerThreads, tlsCert, tlsKey, false,
        QueuedRequests.DEFAULT_MAX);
  }

  /** This config holding at most {@code max} requests at once over all connections. */
  public NodeConfig withMaxQueuedRequests(int max) {
    return new NodeConfig(cluster, nodeId, dataDir, bindHost, maxFrameBytes, maxValueBytes, workerThreads, tlsCert,
        tlsKey, groupReadable, max);
  }

  /** A config with defaults for everything but the essentials. */
  public static NodeConfig of(ClusterSpec cluster, int nodeId, Path dataDir) {
    return new NodeConfig(cluster, nodeId, dataDir, null, DEFAULT_MAX_FRAME, DEFAULT_MAX_VALUE,
        defaultWorkers(), null, null);
  }

  static int defaultWorkers() {
    return Math.max(2, Runtime.getRuntime().availableProcessors());
  }

  /** Reads a node file; relative paths in it are relative to the file's directory. */
  public static NodeConfig load(Path file) throws IOException {
    Properties p = StrictProperties.load(file);
    Set<String> unknown = new TreeSet<>(p.stringPropertyNames());
    unknown.removeAll(KNOWN);
    if (!unknown.isEmpty()) {
      throw new IllegalArgumentException(file + ": unknown keys " + unknown);
    }
    Path base = file.toAbsolutePath().getParent();
    String clusterFile = require(p, "cluster", file);
    ClusterSpec cluster = ClusterSpec.load(base.resolve(clusterFile));
    try {
      return new NodeConfig(cluster,
          Integer.parseInt(require(p, "node.id", file).trim()),
          base.resolve(require(p, "data.dir", file).trim()),
          p.getProperty("bind"),
          intOr(p, "max.frame.bytes", DEFAULT_MAX_FRAME),
          intOr(p, "max.value.bytes", DEFAULT_MAX_VALUE),
          intOr(p, "worker.threads", defaultWorkers()),
          p.containsKey("tls.cert") ? base.resolve(p.getProperty("tls.cert")) : null,
          p.containsKey("tls.key") ? base.resolve(p.getProperty("tls.key")) : null,
          booleanOr(p, "data.group.read"),
          intOr(p, "max.queued.requests", QueuedRequests.DEFAULT_MAX));
    } catch (IllegalArgumentException e) {
      throw new IllegalArgumentException(file + ": " + e.getMessage(), e);
    }
  }

  private static String require(Properties p, String key, Path file) {
    String v = p.getProperty(key);
    if (v == null || v.isBlank()) {
      throw new IllegalArgumentException(file + ": missing '" + key + "'");
    }
    return v;
  }

  private static boolean booleanOr(Properties p, String key) {
    String v = p.getProperty(key, "false").trim();
    if (!v.equals("true") && !v.equals("false")) {
      throw new IllegalArgumentException(key + " must be true or false, not '" + v + "'");
    }
    return v.equals("true");
  }

  private static int intOr(Properties p, String key, int dflt) {
    String v = p.getProperty(key);
    if (v == null) {
      return dflt;
    }
    try {
      return Integer.parseInt(v.trim());
    } catch (NumberFormatException e) {
      throw new IllegalArgumentException(key + " is not a number: '" + v + "'");
    }
  }

  /** The interface to listen on. */
  public String listenHost() {
    return bindHost != null ? bindHost : cluster.node(nodeId).host();
  }

  public int port() {
    return cluster.node(nodeId).port();
  }
}
