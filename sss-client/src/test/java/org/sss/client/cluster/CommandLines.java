package org.sss.client.cluster;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;

/**
 * A process's whole command line, read from {@code /proc}: the JDK's
 * {@code ProcessHandle.Info.commandLine()} is empty for a command line as long as a server's
 * class path in a test (every JAR of the local repository by its full path).
 */
public final class CommandLines {
  private CommandLines() {}

  public static String of(ProcessHandle process) {
    try {
      byte[] raw = Files.readAllBytes(Path.of("/proc", Long.toString(process.pid()), "cmdline"));
      return new String(raw, java.nio.charset.StandardCharsets.UTF_8).replace('\0', ' ');
    } catch (IOException | RuntimeException gone) {
      return process.info().commandLine().orElse("");
    }
  }
}
