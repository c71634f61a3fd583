package org.sss.bench.engine;

import java.io.IOException;
import java.lang.management.ManagementFactory;
import java.nio.file.Files;
import java.nio.file.Path;

/** A one-paragraph description of the machine a benchmark ran on. */
public final class Machine {
  private Machine() {}

  public static String describe() {
    String cpu = "unknown CPU";
    try {
      cpu = Files.readAllLines(Path.of("/proc/cpuinfo")).stream().filter(l -> l.startsWith("model name"))
          .findFirst().map(l -> l.substring(l.indexOf(':') + 1).trim()).orElse(cpu);
    } catch (IOException ignored) {
      // not Linux
    }
    long memGiB = ((com.sun.management.OperatingSystemMXBean) ManagementFactory
        .getOperatingSystemMXBean()).getTotalMemorySize() >> 30;
    return String.format("Machine: %d cores (%s), %d GiB RAM, Java %s (%s), %s.",
        Runtime.getRuntime().availableProcessors(), cpu, memGiB, System.getProperty("java.version"),
        System.getProperty("java.vm.name"), System.getProperty("os.name") + " " + System.getProperty("os.version"));
  }
}
