package org.sss.server.execution;

/** Thrown inside a task when its stage has been aborted; not an error of the task itself. */
final class StageAborted extends RuntimeException {
  StageAborted() {
    super("stage aborted", null, false, false);
  }
}
