package org.sss.kvs;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.locks.Lock;
import org.rocksdb.CompactRangeOptions;
import org.rocksdb.EnvOptions;
import org.rocksdb.IngestExternalFileOptions;
import org.rocksdb.Options;
import org.rocksdb.RocksDBException;
import org.rocksdb.SstFileWriter;
import org.sss.core.proto.ErrorCode;

/**
 * Pairs in ascending stored-key order without duplicates, written into an SST file of their
 * own, then ingested into the table whole: no memtable, no WAL, no flush. The file stays apart
 * from the table until {@link #ingest}; see {@link StoreTable#newRunFile}.
 *
 * <p>Ingesting bypasses what keeps a table's level 0 in check (RocksDB's write slowdown, and a
 * bulk table's compaction, which is off), so the ingest does that itself: it waits for
 * compaction ({@link #INGEST_BACKLOG}) or merges a bulk table's runs ({@link #MAX_RUNS}).
 */
public final class RunFile implements AutoCloseable {
  /**
   * Level-0 files at which an ingest into a table with auto-compaction waits for compaction.
   * An ingest, unlike a memtable write, is not slowed by RocksDB as level 0 grows, but past 20
   * files RocksDB slows, and past 36 stops, every write of the node, and reads probe each file:
   * so runs (a job's output, a node catching up) wait here instead, below those triggers.
   */
  static final int INGEST_BACKLOG = 16;
  private static final long BACKLOG_WAIT_NANOS = TimeUnit.MINUTES.toNanos(5);

  /**
   * Sorted runs a bulk table keeps side by side before it merges them. A scan holds a block and
   * a read-ahead buffer of every run at once, so past this many runs they are merged into one
   * sorted level (read through one file at a time), as Hadoop merges spills past its sort
   * factor: a reduce's native memory stays bounded however much data its table holds.
   */
  static final int MAX_RUNS = 128;

  private final StoreTable table;
  private final Path file;
  private final EnvOptions env = new EnvOptions();
  private final Options opts;
  private final SstFileWriter writer;
  /** Whether the table's gathered writes ({@link SortedRuns}) are stored before the run, so that the run is newer. */
  private final boolean sealFirst;
  private long pairs;
  private boolean closed;

  RunFile(StoreTable table, boolean sealFirst) {
    this.table = table;
    this.opts = new Options().setCompressionType(NodeStore.compressionOf(table.options()));
    this.sealFirst = sealFirst;
    SstFileWriter w = null;
    try {
      Files.createDirectories(table.ingestDir());
      file = Files.createTempFile(table.ingestDir(), table.name() + "-", ".sst");
      w = new SstFileWriter(env, opts);
      w.open(file.toString());
    } catch (IOException | RocksDBException | RuntimeException e) {
      if (w != null) {
        w.close();
      }
      opts.close();
      env.close();
      throw new StoreException(ErrorCode.STORAGE_ERROR, "cannot open an ingest file for table '" + table.name() + "': "
          + e.getMessage(), e);
    }
    writer = w;
  }

  /** Adds a pair; its key must be greater than every key added before. */
  public void put(byte[] key, byte[] value) {
    if (closed) {
      throw new IllegalStateException("run file already ingested or closed");
    }
    try {
      writer.put(key, value);
      pairs++;
    } catch (RocksDBException e) {
      throw table.storageError("writing a sorted run", e);
    }
  }

  /** Pairs added so far. */
  public long pairs() {
    return pairs;
  }

  /** Writes a whole run into the file, counting its pairs as added. */
  void write(SortedRun run) throws RocksDBException {
    pairs += run.writeTo(writer);
  }

  /**
   * Finishes the file and makes its pairs part of the table, newer than every write applied
   * before; nothing when no pair was added. The file is gone afterwards, ingested or not.
   */
  public void ingest() {
    if (closed) {
      throw new IllegalStateException("run file already ingested or closed");
    }
    try {
      if (pairs == 0) {
        return;
      }
      try {
        writer.finish();
      } catch (RocksDBException e) {
        throw table.storageError("writing a sorted run", e);
      }
      if (sealFirst) {
        table.sealRuns(); // before the lifecycle lock: the lock order is runs, then lifecycle
      }
      if (!table.options().getDisableAutoCompaction()) {
        awaitCompaction();
      }
      Lock lock = table.use();
      try (IngestExternalFileOptions ingest = new IngestExternalFileOptions().setMoveFiles(true)) {
        table.db().ingestExternalFile(table.handle(), List.of(file.toString()), ingest);
        if (table.runs() != null && table.options().getDisableAutoCompaction() && table.levelZeroFiles() > MAX_RUNS) {
          mergeRuns();
        }
      } catch (RocksDBException e) {
        throw table.storageError("ingesting a sorted run", e);
      } finally {
        lock.unlock();
      }
    } finally {
      close();
    }
  }

  /** Forgets the file unless it was ingested. */
  @Override
  public void close() {
    if (!closed) {
      closed = true;
      if (writer != null) {
        writer.close();
      }
      opts.close();
      env.close();
      deleteQuietly(file);
    }
  }

  /** Waits, at most {@link #BACKLOG_WAIT_NANOS}, until level 0 is under {@link #INGEST_BACKLOG} files. */
  private void awaitCompaction() {
    long deadline = System.nanoTime() + BACKLOG_WAIT_NANOS;
    while (System.nanoTime() < deadline) {
      long files;
      Lock lock = table.use();
      try {
        files = table.levelZeroFiles();
      } catch (RocksDBException e) {
        throw table.storageError("reading level 0", e);
      } finally {
        lock.unlock();
      }
      if (files < INGEST_BACKLOG) {
        return;
      }
      try {
        Thread.sleep(20);
      } catch (InterruptedException e) {
        Thread.currentThread().interrupt();
        throw new StoreException(ErrorCode.INTERNAL, "interrupted waiting for compaction of table '" + table.name() + "'", e);
      }
    }
  }

  /** Merges every run of this bulk table into the bottom level (its automatic compaction is off). */
  private void mergeRuns() throws RocksDBException {
    try (CompactRangeOptions all = new CompactRangeOptions()
        .setBottommostLevelCompaction(CompactRangeOptions.BottommostLevelCompaction.kForceOptimized)) {
      table.db().compactRange(table.handle(), null, null, all);
    }
  }

  private static void deleteQuietly(Path file) {
    try {
      Files.deleteIfExists(file);
    } catch (IOException ignored) {
      // a leftover temp file is harmless; the ingest directory is cleared at open
    }
  }
}
