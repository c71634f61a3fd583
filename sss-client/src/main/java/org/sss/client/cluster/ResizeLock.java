package org.sss.client.cluster;

import java.io.IOException;
import java.nio.channels.FileChannel;
import java.nio.channels.FileLock;
import java.nio.channels.OverlappingFileLockException;
import java.nio.file.Path;
import java.nio.file.StandardOpenOption;

/**
 * Keeps two resizes of one cluster, or a resize and an {@code --undo} run from another process,
 * from acting at once: each would move the other's data. An exclusive lock on
 * {@code DIR/resize.lock}, which the kernel drops however its holder ends. The file stays: a file
 * removed by one holder while another opens it would let two hold a lock at once.
 */
final class ResizeLock implements AutoCloseable {
  static final String FILE = "resize.lock";

  private final FileChannel channel;
  private final FileLock lock;

  private ResizeLock(FileChannel channel, FileLock lock) {
    this.channel = channel;
    this.lock = lock;
  }

  /** Takes the lock of the cluster in {@code dir}, or refuses at once when another holds it. */
  static ResizeLock take(Path dir) throws IOException {
    FileChannel channel = FileChannel.open(dir.resolve(FILE), StandardOpenOption.CREATE, StandardOpenOption.WRITE);
    FileLock lock;
    try {
      lock = channel.tryLock();
    } catch (OverlappingFileLockException sameProcess) {
      lock = null;
    } catch (IOException | RuntimeException e) {
      channel.close();
      throw e;
    }
    if (lock == null) {
      channel.close();
      throw new IllegalStateException(dir + ": another resize (or --undo) of this cluster is running; let it end"
          + " (Ctrl-C on it puts the old cluster back)");
    }
    return new ResizeLock(channel, lock);
  }

  @Override
  public void close() throws IOException {
    try {
      lock.release();
    } finally {
      channel.close();
    }
  }
}
