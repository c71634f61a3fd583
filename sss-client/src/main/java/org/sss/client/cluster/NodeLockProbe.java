package org.sss.client.cluster;

import java.io.IOException;
import java.nio.channels.FileChannel;
import java.nio.channels.FileLock;
import java.nio.channels.OverlappingFileLockException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.NoSuchFileException;
import java.nio.file.Path;
import java.nio.file.StandardOpenOption;
import java.util.OptionalLong;
import org.sss.core.cluster.HeldLocks;

/**
 * Reads a node's lock from outside: a running node holds an exclusive lock on
 * {@code data/node.lock} for as long as its process lives (the kernel releases it when the
 * process is gone, however it ended). Whether a node runs, and which process it is, is decided
 * from that lock, never from a pid file: a pid outlives its process and may be reused.
 */
final class NodeLockProbe {
  private final Path lockFile;

  NodeLockProbe(Path nodeDataDir) {
    this.lockFile = nodeDataDir.resolve("node.lock");
  }

  /** True while some process holds the node's lock (it runs, starts, or is being torn down). */
  boolean held() {
    if (HeldLocks.holds(lockFile)) {
      return true; // this JVM's own node: opening the file to test it would release its lock
    }
    try (FileChannel ch = FileChannel.open(lockFile, StandardOpenOption.WRITE)) {
      FileLock lock = ch.tryLock();
      if (lock == null) {
        return true;
      }
      lock.release();
      return false;
    } catch (OverlappingFileLockException e) {
      return true; // this very process holds it
    } catch (NoSuchFileException e) {
      return false; // the node never started here
    } catch (IOException e) {
      throw new IllegalStateException("cannot read the lock " + lockFile + ": " + e.getMessage(), e);
    }
  }

  /**
   * The process that holds the lock, as the kernel reports it ({@code /proc/locks}, matched by
   * the file's device and inode), and only if it is the pid the node wrote into the file and it
   * runs {@code org.sss.server.ServerMain}: a process found this way is the node, so signalling
   * it is safe. Empty when any of that cannot be established.
   */
  OptionalLong holder() {
    try {
      long inode = ((Number) Files.getAttribute(lockFile, "unix:ino")).longValue();
      long dev = ((Number) Files.getAttribute(lockFile, "unix:dev")).longValue();
      String id = String.format("%02x:%02x:%d", major(dev), minor(dev), inode);
      String written = Files.readString(lockFile).trim();
      for (String line : Files.readAllLines(Path.of("/proc/locks"))) {
        String[] f = line.trim().split("\\s+");
        // "1: POSIX  ADVISORY  WRITE 4242 fd:01:1054707 0 EOF" (waiters have "->" after the id)
        if (f.length >= 6 && f[1].equals("POSIX") && f[5].equalsIgnoreCase(id) && f[4].equals(written)) {
          long pid = Long.parseLong(f[4]);
          if (runsServer(pid)) {
            return OptionalLong.of(pid);
          }
        }
      }
      return OptionalLong.empty();
    } catch (IOException | UnsupportedOperationException | IllegalArgumentException e) {
      return OptionalLong.empty();
    }
  }

  /** The major number of a Linux {@code dev_t}, as /proc/locks prints it. */
  private static long major(long dev) {
    return ((dev >>> 8) & 0xfff) | ((dev >>> 32) & ~0xfffL);
  }

  /** The minor number of a Linux {@code dev_t}. */
  private static long minor(long dev) {
    return (dev & 0xff) | ((dev >>> 12) & ~0xffL);
  }

  private static boolean runsServer(long pid) {
    try {
      byte[] cmdline = Files.readAllBytes(Path.of("/proc", Long.toString(pid), "cmdline"));
      return new String(cmdline, StandardCharsets.UTF_8).contains("org.sss.server.ServerMain");
    } catch (IOException e) {
      return false;
    }
  }
}
