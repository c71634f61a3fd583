package org.sss.kvs;

import org.sss.core.proto.ErrorCode;

/** A storage failure or a request the store refuses, with the error code clients see. */
public final class StoreException extends RuntimeException {
  private final ErrorCode code;

  public StoreException(ErrorCode code, String message) {
    super(message);
    this.code = code;
  }

  public StoreException(ErrorCode code, String message, Throwable cause) {
    super(message, cause);
    this.code = code;
  }

  public ErrorCode code() {
    return code;
  }
}
