package org.sss.server.membership;

import java.io.IOException;
import java.nio.ByteBuffer;
import java.nio.channels.FileChannel;
import java.nio.file.Path;
import java.nio.file.StandardOpenOption;
import java.util.concurrent.CountDownLatch;
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
 * A small synced write measures the disk itself. Writes that fail (the disk answers with
 * errors) count as stalled as well, until one succeeds.
 */
final class DiskProbe implements AutoCloseable {
  private static final Logger LOG = LoggerFactory.getLogger(DiskProbe.class);
  static final long EVERY_MILLIS = 1_000;

  private final Path file;
  private final CountDownLatch closing = new CountDownLatch(1);
  /** Whether a write is under way (or failed and is being tried again); then {@link #startedNanos} says since when. */
  private volatile boolean writing;
  private volatile long startedNanos;

  DiskProbe(Path dir, String name) {
    this.file = dir.resolve("disk-probe");
    Thread thread = new Thread(this::run, name);
    thread.setDaemon(true);
    thread.start();
  }

  /**
   * Writes, syncs and closes the file once a second. A write that fails is tried again each
   * second, and the stall counts from the first failure until one succeeds: a disk that answers
   * with errors does not serve, one that recovers serves again. The file is opened afresh each
   * time, so that a directory replaced meanwhile is the one measured.
   */
  private void run() {
    ByteBuffer stamp = ByteBuffer.allocate(Long.BYTES);
    boolean failing = false;
    try {
      do {
        if (!writing) {
          startedNanos = System.nanoTime(); // before the flag: a reader that sees it sees this start
          writing = true;
        }
        try (FileChannel channel = FileChannel.open(file, StandardOpenOption.CREATE, StandardOpenOption.WRITE)) {
          stamp.clear();
          stamp.putLong(0, System.currentTimeMillis());
          channel.write(stamp, 0);
          channel.force(false);
          writing = false;
          if (failing) {
            failing = false;
            LOG.warn("disk probe: synced writes to {} succeed again", file);
          }
        } catch (IOException e) {
          if (!failing) {
            failing = true;
            LOG.error("disk probe: a synced write to {} failed; the node's disk counts as not answering until one"
                + " succeeds: {}", file, e.toString());
          }
        }
      } while (!closing.await(EVERY_MILLIS, TimeUnit.MILLISECONDS));
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
    }
  }

  /** How long the write under way has taken, or since the first of the writes failing now (0 while none is). */
  long stalledMillis() {
    if (!writing) {
      return 0;
    }
    return Math.max(0, TimeUnit.NANOSECONDS.toMillis(System.nanoTime() - startedNanos));
  }

  /**
   * Stops the probe after its write under way, without waiting for it: a write to a disk that
   * hangs cannot be interrupted (closing its channel would wait for it), and the node must stop
   * all the same. The thread is a daemon.
   */
  @Override
  public void close() {
    closing.countDown();
  }
}
