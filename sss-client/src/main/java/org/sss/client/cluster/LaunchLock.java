package org.sss.client.cluster;

import java.io.IOException;
import java.nio.channels.FileChannel;
import java.nio.channels.FileLock;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardOpenOption;
import java.time.Duration;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.locks.ReentrantLock;

/**
 * Makes starting and stopping one node take turns, across processes ({@code data/launch.lock},
 * a file lock) and threads of this JVM. Between a start's launch of a server and the moment the
 * server takes its node lock, the node is invisible to a stop, which would report it "not
 * running" while it comes up; two starts at once would both launch it. Holding this lock for
 * the whole of a start, and for a stop, closes both gaps.
 */
final class LaunchLock implements AutoCloseable {
  private static final Map<Path, ReentrantLock> IN_THIS_JVM = new ConcurrentHashMap<>();

  private final ReentrantLock threads;
  private final FileChannel channel;
  private final FileLock lock;

  private LaunchLock(ReentrantLock threads, FileChannel channel, FileLock lock) {
    this.threads = threads;
    this.channel = channel;
    this.lock = lock;
  }

  /** Waits up to {@code timeout} for the node of {@code dataDir} to be neither started nor stopped by anyone else. */
  static LaunchLock acquire(Path dataDir, Duration timeout) throws IOException {
    Path file = dataDir.resolve("launch.lock").toAbsolutePath().normalize();
    ReentrantLock threads = IN_THIS_JVM.computeIfAbsent(file, f -> new ReentrantLock());
    long deadline = System.nanoTime() + timeout.toNanos();
    try {
      if (!threads.tryLock(timeout.toMillis(), TimeUnit.MILLISECONDS)) {
        throw new IOException("another start or stop of the node in " + dataDir + " did not end within "
            + timeout.toSeconds() + " s");
      }
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
      throw new IOException("interrupted", e);
    }
    FileChannel ch = null;
    try {
      Files.createDirectories(dataDir);
      ch = FileChannel.open(file, StandardOpenOption.CREATE, StandardOpenOption.WRITE);
      FileLock lock;
      while ((lock = ch.tryLock()) == null) {
        if (System.nanoTime() > deadline) {
          throw new IOException("another process starting or stopping the node in " + dataDir + " did not finish within "
              + timeout.toSeconds() + " s");
        }
        NodeControl.sleep(50);
      }
      return new LaunchLock(threads, ch, lock);
    } catch (IOException | RuntimeException e) {
      if (ch != null) {
        ch.close();
      }
      threads.unlock();
      throw e;
    }
  }

  @Override
  public void close() {
    try {
      lock.release();
      channel.close();
    } catch (IOException ignored) {
      // released with the process anyway
    } finally {
      threads.unlock();
    }
  }
}
