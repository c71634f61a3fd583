package org.sss.server.transport;

import java.util.Queue;
import java.util.concurrent.ConcurrentLinkedQueue;
import java.util.concurrent.atomic.AtomicInteger;

/**
 * Bounds the requests a node holds at once, queued or running, over all its connections. Each
 * connection already stops reading past {@link ConnectionHandler#MAX_IN_FLIGHT} of its own, but
 * many connections together could still fill the worker pool's queue, and every queued request
 * holds its frame (up to the frame limit) in memory. Past the bound a connection stops reading
 * too (backpressure, not an error: TCP holds the sender), and the connections paused so are read
 * again once the node is down to half the bound.
 *
 * <p>A connection pauses as soon as it brings a request past the bound and waits here (once)
 * until the node is down to half, whatever its own requests do; the requests it had already
 * read by then (at most one socket read's worth, and one frame being gathered) still run. So a
 * node holds the frames of at most {@code max} requests plus, per connection, one read and one
 * frame.
 */
public final class QueuedRequests {
  /** Requests queued or running on a node, at most (before the per-connection overshoot). */
  public static final int DEFAULT_MAX = 1024;

  /** A connection that can be read again. */
  interface Paused {
    void resume();
  }

  private final int max;
  private final AtomicInteger held = new AtomicInteger();
  private final AtomicInteger peak = new AtomicInteger();
  private final AtomicInteger pauses = new AtomicInteger();
  private final Queue<Paused> paused = new ConcurrentLinkedQueue<>();

  public QueuedRequests(int max) {
    if (max < 2) {
      throw new IllegalArgumentException("a node must hold at least 2 requests, not " + max);
    }
    this.max = max;
  }

  /** Counts a request; false when the node is at its bound (the request is counted all the same). */
  boolean enter() {
    int n = held.incrementAndGet();
    peak.accumulateAndGet(n, Math::max);
    return n <= max;
  }

  /**
   * Registers a connection that stopped reading because {@link #enter} said false. If every
   * request finished meanwhile, nothing would resume it: it is resumed at once then.
   */
  void pause(Paused connection) {
    pauses.incrementAndGet();
    paused.add(connection);
    if (held.get() <= max / 2) {
      resumeAll();
    }
  }

  /** A counted request finished (its answer is on its way). */
  void leave() {
    if (held.decrementAndGet() <= max / 2 && !paused.isEmpty()) {
      resumeAll();
    }
  }

  private void resumeAll() {
    Paused p;
    while ((p = paused.poll()) != null) {
      p.resume();
    }
  }

  /** Requests held now. */
  public int held() {
    return held.get();
  }

  /** The most requests held at once since the node started. */
  public int peak() {
    return peak.get();
  }

  /** How many times a connection stopped reading at the bound. */
  public int pauses() {
    return pauses.get();
  }

  public int max() {
    return max;
  }
}
