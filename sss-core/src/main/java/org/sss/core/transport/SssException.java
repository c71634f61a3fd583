package org.sss.core.transport;

import org.sss.core.proto.ErrorCode;

/** An error a server reported, or a failure to reach one; the message names the node. */
public class SssException extends RuntimeException {
  private final ErrorCode code;

  public SssException(ErrorCode code, String message) {
    super(message);
    this.code = code;
  }

  public SssException(ErrorCode code, String message, Throwable cause) {
    super(message, cause);
    this.code = code;
  }

  /** What kind of error; {@link ErrorCode#INTERNAL} for transport failures. */
  public ErrorCode code() {
    return code;
  }
}
