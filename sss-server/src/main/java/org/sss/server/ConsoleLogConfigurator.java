package org.sss.server;

import ch.qos.logback.classic.Level;
import ch.qos.logback.classic.Logger;
import ch.qos.logback.classic.LoggerContext;
import ch.qos.logback.classic.encoder.PatternLayoutEncoder;
import ch.qos.logback.classic.spi.Configurator;
import ch.qos.logback.classic.spi.ILoggingEvent;
import ch.qos.logback.core.ConsoleAppender;
import ch.qos.logback.core.spi.ContextAwareBase;

/**
 * The log of servers and of the command line: one line per event on stderr, at the level of
 * {@code -Dsss.log.level} (default INFO; the launcher passes WARN), Netty at WARN, Ratis at ERROR
 * (it warns at every failed heartbeat to a dead member; the membership logs its own decisions).
 *
 * <p>Set in code, found by logback through {@link java.util.ServiceLoader}, rather than read from
 * an XML file: parsing the file loads some 600 classes of logback's XML configuration and the
 * JDK's SAX parser, about 0.1 s of each command's start. A file still wins when there is one to
 * read: {@code -Dlogback.configurationFile}, or a {@code logback-test.xml} or {@code logback.xml}
 * on the class path (the tests', a user's).
 */
public final class ConsoleLogConfigurator extends ContextAwareBase implements Configurator {
  static final String PATTERN = "%d{HH:mm:ss.SSS} %-5level [%thread] %logger{0} - %msg%n";

  @Override
  public ExecutionStatus configure(LoggerContext context) {
    ClassLoader loader = ConsoleLogConfigurator.class.getClassLoader();
    if (fileNamed(System.getProperty("logback.configurationFile"), loader)
        || loader.getResource("logback-test.xml") != null || loader.getResource("logback.xml") != null) {
      return ExecutionStatus.INVOKE_NEXT_IF_ANY;
    }
    configureConsole(context, System.getProperty("sss.log.level", "INFO"));
    return ExecutionStatus.DO_NOT_INVOKE_NEXT_IF_ANY;
  }

  /**
   * Whether {@code name} (logback's {@code logback.configurationFile}: a URL, a resource on the
   * class path or a file) names something to read. One that names nothing is not given to
   * logback, whose fallback would log everything at DEBUG on stdout.
   */
  static boolean fileNamed(String name, ClassLoader loader) {
    if (name == null || name.isBlank()) {
      return false;
    }
    if (name.matches("^[a-zA-Z][a-zA-Z0-9+.-]*:.+") && !name.startsWith("file:")) {
      return true; // a URL of another kind: logback reads it
    }
    String path = name.startsWith("file:") ? name.substring("file:".length()) : name;
    return new java.io.File(path).isFile() || loader.getResource(name) != null;
  }

  /** Logs to stderr at {@code level} (a logback level name; INFO when it is none). */
  static void configureConsole(LoggerContext context, String level) {
    PatternLayoutEncoder encoder = new PatternLayoutEncoder();
    encoder.setContext(context);
    encoder.setPattern(PATTERN);
    encoder.start();
    ConsoleAppender<ILoggingEvent> stderr = new ConsoleAppender<>();
    stderr.setContext(context);
    stderr.setName("STDERR");
    stderr.setTarget("System.err");
    stderr.setEncoder(encoder);
    stderr.start();
    Logger root = context.getLogger(Logger.ROOT_LOGGER_NAME);
    root.setLevel(Level.toLevel(level, Level.INFO));
    root.addAppender(stderr);
    context.getLogger("io.netty").setLevel(Level.WARN);
    context.getLogger("org.apache.ratis").setLevel(Level.ERROR);
  }
}
