package org.sss.server;

import java.io.IOException;
import java.nio.ByteBuffer;
import java.nio.channels.FileChannel;
import java.nio.channels.FileLock;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardOpenOption;
import org.sss.core.cluster.HeldLocks;

/**
 * The proof that a node runs: an exclusive lock on {@code node.lock} in its data directory,
 * held for the life of the process and released by the kernel when the process is gone, however
 * it ended. Tools decide whether a node runs from this lock (and its answer on the wire), never
 * from a pid file and a clock: a pid outlives its process and may be reused, and a process being
 * torn down after {@code kill -9} still has a pid for a while. The file holds the holder's pid,
 * which tools check against the kernel's list of lock holders.
 *
 * <p>A tool testing the lock holds it for an instant; a node starting at that instant tries
 * again for a moment rather than refuse. A second node of this JVM on the same directory is
 * refused without opening the file: closing any descriptor of it would release the first
 * node's lock ({@link HeldLocks}).
 */
final class NodeLock implements AutoCloseable {
  static final String FILE = "node.lock";
  /** How long a start retries a lock held for an instant by a tool testing it. */
  private static final long RETRY_MILLIS = 3_000;

  private final Path file;
  private final FileChannel channel;
  private final FileLock lock;

  private NodeLock(Path file, FileChannel channel, FileLock lock) {
    this.file = file;
    this.channel = channel;
    this.lock = lock;
  }

  /** Takes the lock of {@code dataDir}, or fails naming the process that holds it. */
  static NodeLock acquire(Path dataDir, int nodeId) throws IOException {
    Files.createDirectories(dataDir);
    Path file = dataDir.resolve(FILE);
    if (!HeldLocks.add(file)) {
      throw inUse(nodeId, dataDir, "this process");
    }
    try {
      FileChannel ch = FileChannel.open(file, StandardOpenOption.CREATE, StandardOpenOption.READ,
          StandardOpenOption.WRITE);
      FileLock lock = null;
      long deadline = System.currentTimeMillis() + RETRY_MILLIS;
      try {
        while ((lock = ch.tryLock()) == null && System.currentTimeMillis() < deadline) {
          Thread.sleep(20);
        }
      } catch (InterruptedException e) {
        ch.close();
        Thread.currentThread().interrupt();
        throw new IOException("interrupted while waiting for " + file, e);
      } catch (IOException | RuntimeException e) {
        ch.close();
        throw e;
      }
      if (lock == null) {
        String holder = new String(Files.readAllBytes(file), StandardCharsets.UTF_8).trim();
        ch.close();
        throw inUse(nodeId, dataDir, holder.isEmpty() ? "another process" : "another process (pid " + holder + ")");
      }
      ch.truncate(0);
      ch.write(ByteBuffer.wrap((ProcessHandle.current().pid() + "\n").getBytes(StandardCharsets.UTF_8)), 0);
      ch.force(true);
      return new NodeLock(file, ch, lock);
    } catch (IOException | RuntimeException e) {
      HeldLocks.remove(file);
      throw e;
    }
  }

  private static IllegalStateException inUse(int nodeId, Path dataDir, String who) {
    return new IllegalStateException("node " + nodeId + ": data directory " + dataDir + " is in use by " + who
        + ": this node already runs");
  }

  @Override
  public void close() {
    try {
      lock.release();
      channel.close();
    } catch (IOException ignored) {
      // the kernel releases it with the process anyway
    } finally {
      HeldLocks.remove(file);
    }
  }
}
