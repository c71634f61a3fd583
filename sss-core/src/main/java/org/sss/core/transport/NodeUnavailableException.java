package org.sss.core.transport;

import org.sss.core.proto.ErrorCode;

/**
 * A node could not be reached, or its connection broke while requests were in flight, or it
 * answered that it does not serve now ({@link ErrorCode#NOT_SERVING}: another copy may): in
 * each case a reader tries another copy.
 */
public final class NodeUnavailableException extends SssException {
  private final boolean silent;

  public NodeUnavailableException(String message, Throwable cause) {
    this(ErrorCode.INTERNAL, message, cause, false);
  }

  public NodeUnavailableException(ErrorCode code, String message) {
    this(code, message, null, false);
  }

  private NodeUnavailableException(ErrorCode code, String message, Throwable cause, boolean silent) {
    super(code, message, cause);
    this.silent = silent;
  }

  /**
   * A node that did not answer at all: a connection that timed out, a handshake never
   * completed. Unlike a refused connection (a host up without the server), which fails at once,
   * each try of a silent node costs a timeout, so callers remember it for a while.
   */
  public static NodeUnavailableException silent(String message, Throwable cause) {
    return new NodeUnavailableException(ErrorCode.INTERNAL, message, cause, true);
  }

  /** True for a node that did not answer at all (see {@link #silent(String, Throwable)}). */
  public boolean silent() {
    return silent;
  }

  /** True when the node refused the request before acting on it (it does not serve now). */
  public boolean refused() {
    return code() == ErrorCode.NOT_SERVING;
  }
}
