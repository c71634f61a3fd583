package org.sss.client.cluster;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;

/**
 * Whether a server's heap asks the kernel for transparent huge pages, as the launcher's own JVM
 * does ({@code bin/sss}). A server's heap churns through gigabytes of short-lived objects; with
 * 4 KiB pages every first touch of a page is a fault and every TLB entry covers little. Where
 * the kernel gives huge pages on request ({@code madvise}) or always, the JVM is told to ask
 * ({@code -XX:+UseTransparentHugePages}); where it does not, the flag would only print a
 * warning, so it is left out. {@code SSS_THP=0} in the environment leaves it out too. The
 * benchmarks give a peer engine's JVM the same option, so that both run on the same pages.
 */
public final class HugePages {
  static final Path SETTING = Path.of("/sys/kernel/mm/transparent_hugepage/enabled");

  private HugePages() {}

  /** The JVM option to add, or null when huge pages are not to be asked for. */
  public static String jvmOption() {
    return "0".equals(System.getenv("SSS_THP")) || !offered(SETTING) ? null : "-XX:+UseTransparentHugePages";
  }

  /** Whether the kernel's setting (e.g. {@code always [madvise] never}) selects always or madvise. */
  static boolean offered(Path setting) {
    try {
      String s = Files.readString(setting);
      return s.contains("[always]") || s.contains("[madvise]");
    } catch (IOException | SecurityException e) {
      return false; // no such setting: not Linux, or a kernel without THP
    }
  }
}
