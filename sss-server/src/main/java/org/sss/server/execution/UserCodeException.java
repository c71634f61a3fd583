package org.sss.server.execution;

import java.io.PrintWriter;
import java.io.StringWriter;

/** User code threw: carries where it ran and the user's stack trace as text for the client. */
public final class UserCodeException extends RuntimeException {
  public UserCodeException(String where, Throwable cause) {
    super(where + ": " + stackTrace(cause), cause);
  }

  static String stackTrace(Throwable t) {
    StringWriter w = new StringWriter();
    t.printStackTrace(new PrintWriter(w));
    return w.toString();
  }
}
