package org.sss.core.transport;

/**
 * The largest frame a connection accepts now: small until the peer has authenticated, the
 * configured limit afterwards. Before authentication a peer may only send a Hello (a few hundred
 * bytes); letting it announce a 64 MiB frame would make the node reserve and hold buffers for
 * someone who does not know the secret.
 */
public final class FrameLimit {
  /** Before authentication: a Hello is a few hundred bytes. */
  public static final int BEFORE_AUTHENTICATION = 64 << 10;

  private final int full;
  private volatile int current;

  private FrameLimit(int current, int full) {
    this.current = current;
    this.full = full;
  }

  /** A limit that starts at {@link #BEFORE_AUTHENTICATION} until {@link #lift()}. */
  public static FrameLimit untilAuthenticated(int full) {
    return new FrameLimit(Math.min(BEFORE_AUTHENTICATION, full), full);
  }

  /** A limit that is {@code full} from the start (the client's side: the server proves itself). */
  public static FrameLimit fixed(int full) {
    return new FrameLimit(full, full);
  }

  public int current() {
    return current;
  }

  public int full() {
    return full;
  }

  /** The peer authenticated: frames up to the full limit from now on. */
  public void lift() {
    current = full;
  }
}
