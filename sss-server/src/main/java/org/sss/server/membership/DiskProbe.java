package org.sss.server.membership;

import java.io.IOException;
import java.nio.ByteBuffer;
import java.nio.channels.FileChannel;
import java.nio.file.Path;
import java.nio.file.StandardOpenOption;
import java.util.concurrent.TimeUnit;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Whether the node's disk answers: once a second, on a thread of its own, a synced write of a
 * few bytes to a file beside the store; {@link #stalledMillis} says how long the write under way
 * has taken.
 *
 * <h2>Why</h2>
 * A node whose disk hangs keeps its process, its connections and its event loops, and answers
 * the members' probe there. Its workers show it only when all of them hang: a client writing to
 * it runs one write at a time per connection, so one worker hangs and the others stay free. Nor
 * does the time requests run tell a hung disk from a large count or a commit waiting on a lock.
 * A small synced write measures the disk itself. One that fails (the disk answers with errors)
 * is never done, so it counts as stalled as well.
 */
final class DiskProbe implements AutoCloseable {
  private static final Logger LOG = LoggerFactory.getLogger(DiskProbe.class);
  static final long EVERY_MILLIS = 1_000;

  private final Path file;
  private final Thread thread;
  /** When the write under way began; 0 while none is. */
  private volatile long startedNanos;
  private volatile boolean closed;

  DiskProbe(Path dir, String name) {
    this.file = dir.resolve("disk-probe");
    this.thread = new Thread(this::run, name);
    thread.setDaemon(true);
    thread.start();
  }

  private void run() {
    ByteBuffer stamp = ByteBuffer.allocate(Long.BYTES);
    FileChannel channel = null;
    try {
      while (!closed) {
        startedNanos = Math.max(1, System.nanoTime());
        if (channel == null) {
          channel = FileChannel.open(file, StandardOpenOption.CREATE, StandardOpenOption.WRITE);
        }
        stamp.clear();
        stamp.putLong(0, System.currentTimeMillis());
        channel.write(stamp, 0);
        channel.force(false);
        startedNanos = 0;
        Thread.sleep(EVERY_MILLIS);
      }
    } catch (InterruptedException e) {
      // closed
    } catch (IOException e) {
      if (!closed) {
        // the write never completes: the node counts as stalled from when it began
        LOG.error("disk probe: a synced write to {} failed; the node's disk counts as not answering: {}", file,
            e.toString());
      }
    } finally {
      if (channel != null) {
        try {
          channel.close();
        } catch (IOException ignored) {
          // closing a probe's file: nothing to keep
        }
      }
    }
  }

  /** How long the write under way has taken (0 while none is). */
  long stalledMillis() {
    long started = startedNanos;
    return started == 0 ? 0 : Math.max(0, TimeUnit.NANOSECONDS.toMillis(System.nanoTime() - started));
  }

  @Override
  public void close() {
    closed = true;
    thread.interrupt();
  }
}
