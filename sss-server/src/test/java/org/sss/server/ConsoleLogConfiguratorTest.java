package org.sss.server;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import ch.qos.logback.classic.Level;
import ch.qos.logback.classic.Logger;
import ch.qos.logback.classic.LoggerContext;
import ch.qos.logback.classic.spi.Configurator;
import ch.qos.logback.classic.util.LogbackMDCAdapter;
import java.io.ByteArrayOutputStream;
import java.io.PrintStream;
import java.nio.charset.StandardCharsets;
import org.junit.jupiter.api.Test;

/** The log set in code: the levels and the line the XML file used to set, and a file on the class path still winning. */
class ConsoleLogConfiguratorTest {
  @Test
  void consoleLog_atTheGivenLevel_nettyAtWarn_ratisAtError_oneLinePerEventOnStderr() {
    PrintStream saved = System.err;
    ByteArrayOutputStream err = new ByteArrayOutputStream();
    LoggerContext context = new LoggerContext();
    context.setMDCAdapter(new LogbackMDCAdapter()); // as logback's own initialization gives its context
    System.setErr(new PrintStream(err, true, StandardCharsets.UTF_8));
    try {
      ConsoleLogConfigurator.configureConsole(context, "DEBUG"); // the appender takes System.err as it starts
      Logger root = context.getLogger(Logger.ROOT_LOGGER_NAME);
      assertEquals(Level.DEBUG, root.getLevel());
      assertEquals(Level.WARN, context.getLogger("io.netty").getLevel());
      assertEquals(Level.ERROR, context.getLogger("org.apache.ratis").getLevel());
      context.getLogger("org.sss.server.Something").debug("hello {}", 42);
      context.getLogger("org.apache.ratis.server.Heartbeat").warn("missed");
      context.getLogger("io.netty.Channel").info("chatter");
    } finally {
      System.setErr(saved);
      context.stop();
    }
    String logged = err.toString(StandardCharsets.UTF_8);
    assertFalse(logged.isEmpty(), () -> "nothing logged; logback said: " + context.getStatusManager().getCopyOfStatusList());
    assertTrue(logged.matches("\\d\\d:\\d\\d:\\d\\d\\.\\d{3} DEBUG \\[[^]]+] Something - hello 42\\R"), logged);
    assertFalse(logged.contains("missed") || logged.contains("chatter"), logged);
  }

  @Test
  void anUnknownLevel_isInfo() {
    LoggerContext context = new LoggerContext();
    ConsoleLogConfigurator.configureConsole(context, "loud");
    assertEquals(Level.INFO, context.getLogger(Logger.ROOT_LOGGER_NAME).getLevel());
    context.stop();
  }

  @Test
  void aFileOnTheClassPath_isReadInstead() {
    // the tests' logback-test.xml is on the class path
    assertEquals(Configurator.ExecutionStatus.INVOKE_NEXT_IF_ANY, new ConsoleLogConfigurator().configure(new LoggerContext()));
  }

  @Test
  void aConfigurationFileThatIsNotThere_isNotHandedOn() throws Exception {
    ClassLoader loader = getClass().getClassLoader();
    assertFalse(ConsoleLogConfigurator.fileNamed(null, loader));
    assertFalse(ConsoleLogConfigurator.fileNamed("/no/such/logback.xml", loader));
    assertFalse(ConsoleLogConfigurator.fileNamed("file:/no/such/logback.xml", loader));
    assertTrue(ConsoleLogConfigurator.fileNamed("logback-test.xml", loader), "a resource on the class path");
    java.nio.file.Path f = java.nio.file.Files.createTempFile("logback", ".xml");
    try {
      assertTrue(ConsoleLogConfigurator.fileNamed(f.toString(), loader));
      assertTrue(ConsoleLogConfigurator.fileNamed("file:" + f, loader));
    } finally {
      java.nio.file.Files.delete(f);
    }
  }
}
