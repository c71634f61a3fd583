package org.sss.core.transport;

import org.sss.core.proto.ErrorCode;

/** A node could not be reached, or its connection broke while requests were in flight. */
public final class NodeUnavailableException extends SssException {
  public NodeUnavailableException(String message, Throwable cause) {
    super(ErrorCode.INTERNAL, message, cause);
  }
}
