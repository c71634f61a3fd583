package org.sss.server;

import java.io.IOException;
import java.nio.ByteBuffer;
import java.nio.channels.FileChannel;
import java.nio.channels.FileLock;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardOpenOption;

/**
 * The proof that a node runs: an exclusive lock on {@code node.lock} in its data directory,
 * held for the life of the process and released by the kernel when the process is gone, however
 * it ended. Tools decide whether a node runs from this lock (and its answer on the wire), never
 * from a pid file and a clock: a pid outlives its process and may be reused, and a process being
 * torn down after {@code kill -9} still has a pid for a while. The file holds the holder's pid,
 * for messages only.
 */
final class NodeLock implements AutoCloseable {
  static final String FILE = "node.lock";

  private final FileChannel channel;
  private final FileLock lock;

  private NodeLock(FileChannel channel, FileLock lock) {
    this.channel = channel;
    this.lock = lock;
  }

  /** Takes the lock of {@code dataDir}, or fails naming the process that holds it. */
  static NodeLock acquire(Path dataDir, int nodeId) throws IOException {
    Files.createDirectories(dataDir);
    Path file = dataDir.resolve(FILE);
    FileChannel ch = FileChannel.open(file, StandardOpenOption.CREATE, StandardOpenOption.READ,
        StandardOpenOption.WRITE);
    FileLock lock;
    try {
      lock = ch.tryLock();
    } catch (java.nio.channels.OverlappingFileLockException e) {
      lock = null; // held by this very process: a node of it already runs on this directory
    } catch (IOException | RuntimeException e) {
      ch.close();
      throw e;
    }
    if (lock == null) {
      String holder = new String(Files.readAllBytes(file), StandardCharsets.UTF_8).trim();
      ch.close();
      throw new IllegalStateException("node " + nodeId + ": data directory " + dataDir
          + " is in use by another process" + (holder.isEmpty() ? "" : " (pid " + holder + ")")
          + ": this node already runs");
    }
    ch.truncate(0);
    ch.write(ByteBuffer.wrap((ProcessHandle.current().pid() + "\n").getBytes(StandardCharsets.UTF_8)), 0);
    ch.force(true);
    return new NodeLock(ch, lock);
  }

  @Override
  public void close() {
    try {
      lock.release();
      channel.close();
    } catch (IOException ignored) {
      // the kernel releases it with the process anyway
    }
  }
}
