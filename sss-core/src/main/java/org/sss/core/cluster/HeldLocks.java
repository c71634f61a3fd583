package org.sss.core.cluster;

import java.nio.file.Path;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;

/**
 * The file locks this JVM holds, by absolute path. A POSIX record lock belongs to the process,
 * and closing any descriptor of the file, even one opened only to test the lock, releases it:
 * code in this JVM must therefore ask here before it opens a lock file that may be its own.
 */
public final class HeldLocks {
  private static final Set<Path> HELD = ConcurrentHashMap.newKeySet();

  private HeldLocks() {}

  /** Records that this JVM holds the lock on {@code file}; false when it already did. */
  public static boolean add(Path file) {
    return HELD.add(file.toAbsolutePath().normalize());
  }

  /** Records that this JVM released the lock on {@code file}. */
  public static void remove(Path file) {
    HELD.remove(file.toAbsolutePath().normalize());
  }

  /** True when this JVM holds the lock on {@code file}. */
  public static boolean holds(Path file) {
    return HELD.contains(file.toAbsolutePath().normalize());
  }
}
