package org.sss.server;

import java.nio.file.Path;
import org.slf4j.LoggerFactory;
import org.sss.core.transport.Buffers;

/**
 * Runs one node in the foreground: {@code ServerMain --config FILE}. This is what
 * {@code bin/sss server} and {@code bin/sss cluster start} run, and what a container runs.
 * Exits non-zero with one line on stderr when the node cannot start. Its log is written off the
 * logging threads ({@link LogOffTheCallersThread}). A process started without
 * {@link Buffers#JVM_OPTIONS} says so in its log (it works, with slower starts).
 */
public final class ServerMain {
  private ServerMain() {}

  public static void main(String[] args) throws Exception {
    if (args.length != 2 || !args[0].equals("--config")) {
      System.err.println("usage: sss server --config FILE");
      System.exit(2);
    }
    if (!Buffers.unzeroedChunks()) {
      LoggerFactory.getLogger(ServerMain.class).warn("Netty's buffer chunks are zeroed when made, touching every page"
          + " (slower starts): start the JVM with {}", String.join(" ", Buffers.JVM_OPTIONS));
    }
    LogOffTheCallersThread.install();
    SssServer server;
    try {
      server = SssServer.start(NodeConfig.load(Path.of(args[1])));
    } catch (Exception | Error e) { // an Error too (a native library that does not load): its log is flushed
      LogOffTheCallersThread.flush(); // what was logged on the way, before the line saying why
      System.err.println("sss server: " + (e.getMessage() != null ? e.getMessage() : e.toString()));
      if (e instanceof Error) {
        e.printStackTrace(); // its message alone may say nothing (an initializer that failed)
      }
      System.exit(1);
      return;
    }
    Runtime.getRuntime().addShutdownHook(new Thread(() -> {
      server.close();
      LogOffTheCallersThread.flush();
    }, "sss-shutdown"));
    System.out.println("READY node " + server.config().nodeId() + " port " + server.port());
    System.out.flush();
    server.awaitClose();
    LogOffTheCallersThread.flush();
  }
}
