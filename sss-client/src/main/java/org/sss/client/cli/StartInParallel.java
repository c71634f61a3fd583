package org.sss.client.cli;

import java.lang.management.ManagementFactory;
import java.util.ServiceLoader;
import org.slf4j.LoggerFactory;
import org.sss.core.cluster.EmbeddedNodes;
import org.sss.core.proto.Sss;
import org.sss.core.transport.Auth;
import org.sss.core.transport.ClientTransport;

/**
 * The one-time initialization a command's first request needs, done on a second thread while
 * the main one reads the command line. In a fresh JVM these are each tens of milliseconds of
 * class loading and interpreted code: the logging library's configuration, the protocol's
 * descriptors, the HMAC of the connections' handshake, the client's event loops and, for an
 * embedded cluster, the platform's management beans (the machine's limits) and the store's
 * native library. A machine has a second core for them; a
 * one-shot command otherwise does them in turn on its main thread.
 */
final class StartInParallel {
  /** What failed here, if anything: the same step fails again where it is needed, maybe without its cause. */
  private static volatile Throwable failure;

  private StartInParallel() {}

  /** The error this thread's work ended with, or null. */
  static Throwable failure() {
    return failure;
  }

  /**
   * Starts the work, the embedded nodes' part too when {@code embedded}; join the thread before
   * the JVM exits (one still in native code holds the exit up).
   */
  static Thread begin(boolean embedded) {
    Thread t = new Thread(() -> initialize(embedded), "sss-start");
    t.setDaemon(true);
    t.start();
    return t;
  }

  private static void initialize(boolean embedded) {
    try {
      LoggerFactory.getILoggerFactory();
      Sss.getDescriptor();
      Auth.mac("", new byte[Auth.NONCE_BYTES], new byte[Auth.NONCE_BYTES]);
      ClientTransport.prepare();
      if (embedded) {
        ManagementFactory.getOperatingSystemMXBean(); // the machine's limits, checked before an embedded start
        ServiceLoader.load(EmbeddedNodes.class).findFirst().ifPresent(EmbeddedNodes::prepare);
      }
    } catch (RuntimeException | LinkageError e) {
      // whatever failed here fails again where it is needed, and the command says so; kept
      // for its message, since a class whose initialization failed is named later without it
      failure = e;
    }
  }
}
