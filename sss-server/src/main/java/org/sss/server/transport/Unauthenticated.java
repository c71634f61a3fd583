package org.sss.server.transport;

import java.util.concurrent.atomic.AtomicInteger;

/**
 * Bounds the connections of a node that have not authenticated yet. Each costs a socket, a
 * challenge and a timer until it authenticates or its {@link ConnectionHandler#AUTH_TIMEOUT_SECONDS}
 * run out; without a bound, anyone who can reach the port could hold thousands of them. Past
 * the bound a new connection is refused at once; authenticated connections are not counted.
 */
public final class Unauthenticated {
  /** Connections waiting to authenticate, at most: far more than a cluster's nodes and clients open at once. */
  public static final int DEFAULT_MAX = 256;

  private final int max;
  private final AtomicInteger waiting = new AtomicInteger();

  public Unauthenticated(int max) {
    this.max = max;
  }

  /** Counts a new connection; false when the bound is reached (and then it is not counted). */
  boolean admit() {
    while (true) {
      int n = waiting.get();
      if (n >= max) {
        return false;
      }
      if (waiting.compareAndSet(n, n + 1)) {
        return true;
      }
    }
  }

  /** A counted connection authenticated or closed. */
  void leave() {
    waiting.decrementAndGet();
  }

  int waiting() {
    return waiting.get();
  }

  int max() {
    return max;
  }
}
