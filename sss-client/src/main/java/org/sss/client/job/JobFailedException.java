package org.sss.client.job;

import org.sss.core.proto.ErrorCode;
import org.sss.core.transport.SssException;

/**
 * A job failed: user code threw (the message holds the user's stack trace), a node was lost
 * (the message names it), or the job was cancelled ({@link ErrorCode#JOB_ABORTED}).
 * Intermediate tables have been dropped by the time this is thrown.
 */
public final class JobFailedException extends SssException {
  public JobFailedException(ErrorCode code, String message, Throwable cause) {
    super(code, message, cause);
  }
}
