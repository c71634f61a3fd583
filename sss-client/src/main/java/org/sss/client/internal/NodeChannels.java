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
 *
 * <p>Each node is connected on its own: a node that does not answer (a host cut off, whose
 * connection only times out after 10 s) holds up no request to another. Such a node is then
 * refused at once for {@link #SILENT_RETRY_MILLIS}, so that a client asking every node (a view,
 * a table list) does not wait out the timeout again at each request.
 */
public final class NodeChannels implements AutoCloseable {
  /** How long a node that did not answer a connection is refused at once before it is tried again. */
  static final long SILENT_RETRY_MILLIS = 5_000;

  private final ClusterSpec spec;
  private final String peerName;
  private final Duration requestTimeout;
  private final Object[] locks;
  /** Per node, guarded by its lock: the open connection, the connection being opened, when it last did not answer. */
  private final Connection[] connections;
  private final CompletableFuture<?>[] opening;
  private final long[] silentSince;
  private final SslContext tls;
  private volatile boolean closed;

  public NodeChannels(ClusterSpec spec, String peerName, Duration requestTimeout) {
    this.spec = spec;
    this.peerName = peerName;
    this.requestTimeout = requestTimeout;
    int n = spec.nodeCount();
    this.locks = new Object[n];
    for (int i = 0; i < n; i++) {
      locks[i] = new Object();
    }
    this.connections = new Connection[n];
    this.opening = new CompletableFuture<?>[n];
    this.silentSince = new long[n];
    this.tls = Tls.clientContext(spec);
  }

  /** Whether the client that owns these connections closed them. */
  public boolean isClosed() {
    return closed;
  }

  /** The connection to {@code node}, connecting (and authenticating) if needed. */
  public Connection get(int node) {
    return await(connection(node), Duration.ofSeconds(30));
  }

  /**
   * The connection to {@code node} when it is open or opens, without waiting for it: several
   * nodes are then connected at once. One connection is opened at a time per node, shared by
   * every caller.
   */
  @SuppressWarnings("unchecked")
  public CompletableFuture<Connection> connection(int node) {
    if (closed) {
      throw new IllegalStateException("client is closed");
    }
    synchronized (locks[node]) {
      Connection c = connections[node];
      if (c != null && c.isActive()) {
        return CompletableFuture.completedFuture(c);
      }
      if (opening[node] != null && !opening[node].isDone()) {
        return (CompletableFuture<Connection>) opening[node];
      }
      long since = silentSince[node];
      long ago = since == 0 ? Long.MAX_VALUE : TimeUnit.NANOSECONDS.toMillis(System.nanoTime() - since);
      if (ago < SILENT_RETRY_MILLIS) {
        return CompletableFuture.failedFuture(NodeUnavailableException.silent("node " + node + " (" + spec.node(node)
            + ") did not answer a connection " + ago + " ms ago; it is tried again "
            + SILENT_RETRY_MILLIS / 1000 + " s after", null));
      }
      // callers are answered once the outcome is recorded: one that asks again then sees it
      CompletableFuture<Connection> open = Connection.open(spec.node(node), spec.secret(), peerName,
          spec.partitionMap().layout(), tls, Pipelines.DEFAULT_MAX_FRAME, requestTimeout)
          .whenComplete((opened, e) -> settle(node, opened, e));
      opening[node] = open;
      return open;
    }
  }

  private void settle(int node, Connection opened, Throwable e) {
    synchronized (locks[node]) {
      opening[node] = null; // (one that completed at once is set after this: connection() ignores a done one)
      if (e != null) {
        if (unwrap(e) instanceof NodeUnavailableException u && u.silent()) {
          silentSince[node] = System.nanoTime();
        }
        return;
      }
      silentSince[node] = 0;
      if (closed) {
        opened.close();
      } else {
        connections[node] = opened;
      }
    }
  }

  /**
   * The connection to {@code node} if one is open, else null: for messages that must not wait
   * for an unreachable node (aborts and cleanup after a failure).
   */
  public Connection connectedOrNull(int node) {
    synchronized (locks[node]) {
      Connection c = connections[node];
      return c != null && c.isActive() ? c : null;
    }
  }

  /** Whether a request to some node waits for its answer. */
  public boolean anyWaiting() {
    for (int node = 0; node < connections.length; node++) {
      Connection c = connectedOrNull(node);
      if (c != null && c.waiting()) {
        return true;
      }
    }
    return false;
  }

  /**
   * Abandons the connection to {@code node} if requests wait on it, failing them as a lost
   * connection that says {@code why} (see {@link Connection#abandon}); the next request opens a
   * new one. Returns whether it did.
   */
  public boolean abandonIfWaiting(int node, String why) {
    Connection c = connectedOrNull(node);
    if (c == null || !c.waiting()) {
      return false;
    }
    c.abandon(why);
    return true;
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
    for (int node = 0; node < connections.length; node++) {
      synchronized (locks[node]) {
        if (connections[node] != null) {
          connections[node].close();
        }
      }
    }
  }
}
