package org.sss.core.transport;

import org.sss.core.proto.ErrorCode;

/**
 * A node could not be reached, or its connection broke while requests were in flight, or it
 * answered that it does not serve now ({@link ErrorCode#NOT_SERVING}: another copy may): in
 * each case a reader tries another copy.
 */
public final class NodeUnavailableException extends SssException {
  public NodeUnavailableException(String message, Throwable cause) {
    super(ErrorCode.INTERNAL, message, cause);
  }

  public NodeUnavailableException(ErrorCode code, String message) {
    super(code, message, null);
  }

  /** True when the node refused the request before acting on it (it does not serve now). */
  public boolean refused() {
    return code() == ErrorCode.NOT_SERVING;
  }
}
