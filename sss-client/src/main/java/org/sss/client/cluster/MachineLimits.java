package org.sss.client.cluster;

import com.sun.management.OperatingSystemMXBean;
import com.sun.management.UnixOperatingSystemMXBean;
import java.lang.management.ManagementFactory;

/**
 * What one machine can hold, checked before a cluster starts on it: a request far beyond the
 * machine (say {@code --nodes 1000000}) is refused in one line naming the limit, rather than
 * running until the operating system refuses a file or a process and leaving a stack trace.
 *
 * <p>The figures per node were measured on an embedded cluster running a job (30 nodes in one
 * process: 2,663 descriptors, 323 threads): each node keeps about 40 descriptors of its own
 * (its store's files, its listener, its event loops) and two per other node once the nodes
 * shuffle to each other.
 */
public final class MachineLimits {
  /** Descriptors an embedded node keeps of its own, with room over the 30-node measurement. */
  static final int FDS_PER_NODE = 40;
  /** Descriptors the process keeps besides its nodes (class path JARs, logs, the client). */
  static final int FDS_BASE = 256;
  /**
   * Memory a server process holds however small its work: the JVM, its threads, RocksDB's
   * buffers and the membership's Raft member (measured: about 120 MiB resident, idle).
   */
  static final long PROCESS_RESIDENT_BYTES = 128L << 20;

  private MachineLimits() {}

  /** Refuses an embedded cluster whose nodes would need more file descriptors than this process may open. */
  public static void checkEmbedded(int nodes) {
    checkEmbedded(nodes, maxFileDescriptors());
  }

  static void checkEmbedded(int nodes, long maxFds) {
    if (nodes < 1) {
      throw new IllegalArgumentException("--nodes must be at least 1, not " + nodes);
    }
    long needed = embeddedFds(nodes);
    if (maxFds > 0 && needed > maxFds) {
      throw new IllegalArgumentException("--nodes " + nodes + " is more than one process here can hold: "
          + "an embedded cluster of " + nodes + " nodes needs about " + needed + " open files, and this process may open "
          + maxFds + " (ulimit -n); at most " + maxEmbedded(maxFds) + " nodes fit. Run more nodes as processes"
          + " (bin/sss cluster start) or on more machines");
    }
  }

  /** Descriptors an embedded cluster of {@code nodes} nodes holds once its nodes shuffle to each other. */
  static long embeddedFds(long nodes) {
    return FDS_BASE + nodes * (FDS_PER_NODE + 2 * (nodes - 1));
  }

  static int maxEmbedded(long maxFds) {
    int n = 1;
    while (embeddedFds(n + 1) <= maxFds) {
      n++;
    }
    return n;
  }

  /**
   * Refuses {@code nodes} server processes when even idle they would need more memory than the
   * machine has; returns a warning (or null) when their heaps together could outgrow it. A
   * heap is a ceiling the JVM fills only as it needs, so heaps larger than the memory are not
   * refused: a cluster of three 8 GiB servers runs on 24 GiB until its jobs fill the heaps.
   */
  public static String checkProcesses(int nodes, long heapBytes, String heap) {
    return checkProcesses(nodes, heapBytes, heap, physicalMemory());
  }

  static String checkProcesses(int nodes, long heapBytes, String heap, long physicalBytes) {
    if (physicalBytes <= 0) {
      return null;
    }
    if ((double) nodes * PROCESS_RESIDENT_BYTES > physicalBytes) {
      throw new IllegalArgumentException("--nodes " + nodes + " needs about " + gib((double) nodes * PROCESS_RESIDENT_BYTES)
          + " of memory even idle (about 128 MiB per server), but this machine has " + gib(physicalBytes)
          + "; at most " + physicalBytes / PROCESS_RESIDENT_BYTES + " servers fit");
    }
    double heaps = (double) nodes * (heapBytes + PROCESS_RESIDENT_BYTES);
    if (heaps > physicalBytes) {
      return "warning: " + nodes + " servers with --heap " + heap + " may grow to about " + gib(heaps)
          + ", more than this machine's " + gib(physicalBytes) + ": under a large job they would swap or be killed";
    }
    return null;
  }

  /** Bytes of a heap size such as {@code 512m} or {@code 2g} (as {@code -Xmx} reads it). */
  public static long bytesOf(String size) {
    String s = size.trim().toLowerCase();
    long unit = switch (s.charAt(s.length() - 1)) {
      case 'k' -> 1L << 10;
      case 'm' -> 1L << 20;
      case 'g' -> 1L << 30;
      default -> 1;
    };
    String digits = unit == 1 ? s : s.substring(0, s.length() - 1);
    return Long.parseLong(digits) * unit;
  }

  private static String gib(double bytes) {
    return String.format("%.1f GiB", bytes / (1L << 30));
  }

  private static long maxFileDescriptors() {
    if (ManagementFactory.getOperatingSystemMXBean() instanceof UnixOperatingSystemMXBean unix) {
      return unix.getMaxFileDescriptorCount();
    }
    return -1; // not known here: not checked
  }

  private static long physicalMemory() {
    if (ManagementFactory.getOperatingSystemMXBean() instanceof OperatingSystemMXBean os) {
      return os.getTotalMemorySize();
    }
    return -1;
  }
}
