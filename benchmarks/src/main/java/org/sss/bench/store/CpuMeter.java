package org.sss.bench.store;

import java.io.IOException;
import java.lang.management.ManagementFactory;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;

/**
 * CPU time used by this JVM plus some other processes (the server nodes), so that a phase can
 * be judged by the work it took as well as by its wall time: on a shared machine the wall time
 * depends on the neighbours, the CPU time much less.
 */
final class CpuMeter {
  /** Linux clock ticks per second in /proc/PID/stat (USER_HZ, 100 on every common build). */
  private static final double TICKS_PER_SECOND = 100.0;

  private final List<Long> otherPids;

  CpuMeter(List<Long> otherPids) {
    this.otherPids = otherPids;
  }

  /** Seconds of CPU used so far (user + system) by this JVM and the other processes. */
  double seconds() {
    double s = 0;
    if (ManagementFactory.getOperatingSystemMXBean() instanceof com.sun.management.OperatingSystemMXBean os) {
      s += os.getProcessCpuTime() / 1e9;
    }
    for (long pid : otherPids) {
      s += processSeconds(pid);
    }
    return s;
  }

  private static double processSeconds(long pid) {
    try {
      String stat = Files.readString(Path.of("/proc/" + pid + "/stat"));
      // fields after the command name in parentheses: state is field 3, utime 14, stime 15
      String[] f = stat.substring(stat.lastIndexOf(')') + 2).split(" ");
      return (Long.parseLong(f[11]) + Long.parseLong(f[12])) / TICKS_PER_SECOND;
    } catch (IOException | RuntimeException e) {
      return 0; // not Linux, or the process is gone
    }
  }

  /** The 1-minute load average of the machine. */
  static double loadAverage() {
    return ManagementFactory.getOperatingSystemMXBean().getSystemLoadAverage();
  }
}
