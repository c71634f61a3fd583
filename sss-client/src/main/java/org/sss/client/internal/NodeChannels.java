package org.sss.client.internal;

import io.netty.handler.ssl.SslContext;
import java.time.Duration;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionException;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;
import org.sss.core.cluster.ClusterSpec;
import org.sss.core.proto.ErrorCode;
import org.sss.core.transport.Connection;
import org.sss.core.transport.NodeUnavailableException;
import org.sss.core.transport.Pipelines;
import org.sss.core.transport.SssException;
import org.sss.core.transport.Tls;

/**
 * One connection per node, opened on first use and reopened after it breaks. Requests to a
 * node are pipelined over its connection; the server runs them in parallel.
 */
public final class NodeChannels implements AutoCloseable {
  private final ClusterSpec spec;
  private final String peerName;
  private final Duration requestTimeout;
  private final Connection[] connections;
  private final SslContext tls;
  private volatile boolean closed;

  public NodeChannels(ClusterSpec spec, String peerName, Duration requestTimeout) {
    this.spec = spec;
    this.peerName = peerName;
    this.requestTimeout = requestTimeout;
    this.connections = new Connection[spec.nodeCount()];
    this.tls = Tls.clientContext(spec);
  }

  /** The connection to {@code node}, connecting (and authenticating) if needed. */
  public Connection get(int node) {
    if (closed) {
      throw new IllegalStateException("client is closed");
    }
    synchronized (connections) {
      Connection c = connections[node];
      if (c != null && c.isActive()) {
        return c;
      }
      c = await(Connection.open(spec.node(node), spec.secret(), peerName, spec.partitionMap().layout(), tls,
          Pipelines.DEFAULT_MAX_FRAME, requestTimeout), Duration.ofSeconds(30));
      connections[node] = c;
      return c;
    }
  }

  /**
   * The connection to {@code node} if one is open, else null: for messages that must not wait
   * for an unreachable node (aborts and cleanup after a failure).
   */
  public Connection connectedOrNull(int node) {
    synchronized (connections) {
      Connection c = connections[node];
      return c != null && c.isActive() ? c : null;
    }
  }

  /** Waits for a future, unwrapping its failure into the {@link SssException} it carries. */
  public static <T> T await(CompletableFuture<T> future, Duration timeout) {
    try {
      return future.get(timeout.toMillis(), TimeUnit.MILLISECONDS);
    } catch (ExecutionException | CompletionException e) {
      throw unwrap(e);
    } catch (TimeoutException e) {
      throw new NodeUnavailableException("no answer within " + timeout.toSeconds() + " s", e);
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
      throw new SssException(ErrorCode.INTERNAL, "interrupted", e);
    }
  }

  /** The {@link SssException} inside a future's failure, or one wrapping it. */
  public static RuntimeException unwrap(Throwable e) {
    Throwable c = e;
    while ((c instanceof ExecutionException || c instanceof CompletionException) && c.getCause() != null) {
      c = c.getCause();
    }
    if (c instanceof RuntimeException r) {
      return r;
    }
    return new SssException(ErrorCode.INTERNAL, c.toString(), c);
  }

  public ClusterSpec spec() {
    return spec;
  }

  @Override
  public void close() {
    closed = true;
    synchronized (connections) {
      for (Connection c : connections) {
        if (c != null) {
          c.close();
        }
      }
    }
  }
}
