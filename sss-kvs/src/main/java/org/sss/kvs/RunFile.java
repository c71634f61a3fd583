package org.sss.kvs;

import java.io.IOException;
import java.nio.ByteBuffer;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
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
  /**
   * At most 128 KiB of writes buffered per file (RocksDB's default grows to 1 MiB): a table
   * written as ordered streams keeps up to {@link OrderedStreams#MAX_OPEN_FILES} files open at
   * once, and each writer of an output of several copies up to {@link PartitionFiles#MAX_OPEN_FILES}.
   */
  private final EnvOptions env;
  private final Options opts;
  /** Null for a file written elsewhere ({@link #written}). */
  private final SstFileWriter writer;
  /** Whether the table's gathered writes ({@link SortedRuns}) are stored before the run, so that the run is newer. */
  private final boolean sealFirst;
  private long pairs;
  /** Whether {@link #finishWriting} wrote the file to its end. */
  private boolean finished;
  private boolean closed;
  /** Reused by {@link #put(byte[], int, int, int, int)}; allocated on its first call. */
  private ByteBuffer keyBuffer;
  private ByteBuffer valueBuffer;

  RunFile(StoreTable table, boolean sealFirst) {
    this.table = table;
    this.env = new EnvOptions().setWritableFileMaxBufferSize(128 << 10);
    this.opts = new Options().setTableFormatConfig(NodeStore.tableFormat().setNoBlockCache(true)) // it only writes
        .setCompressionType(NodeStore.compressionOf(table.options()));
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

  /** A finished file of {@code pairs} pairs already in the table's ingest directory (received whole). */
  private RunFile(StoreTable table, Path file, long pairs) {
    this.table = table;
    this.file = file;
    this.pairs = pairs;
    this.env = null;
    this.opts = null;
    this.writer = null;
    this.sealFirst = false;
    this.finished = true;
  }

  /** The finished file {@code file} of {@code pairs} pairs, in {@code table}'s ingest directory; deleted when closed unless ingested. */
  static RunFile written(StoreTable table, Path file, long pairs) {
    return new RunFile(table, file, pairs);
  }

  /** Where the file is: read only once it is finished, and before it is ingested or closed. */
  Path path() {
    return file;
  }

  /** Adds a pair; its key must be greater than every key added before. */
  public void put(byte[] key, byte[] value) {
    if (closed || finished) {
      throw new IllegalStateException("run file already finished, ingested or closed");
    }
    try {
      writer.put(key, value);
      pairs++;
    } catch (RocksDBException e) {
      throw table.storageError("writing a sorted run", e);
    }
  }

  /** Adds a pair read in place from {@code source}; its key must be greater than every key added before. */
  void put(byte[] source, int keyAt, int keyLength, int valueAt, int valueLength) {
    if (closed || finished) {
      throw new IllegalStateException("run file already finished, ingested or closed");
    }
    keyBuffer = fill(keyBuffer, source, keyAt, keyLength, 64);
    valueBuffer = fill(valueBuffer, source, valueAt, valueLength, 4 << 10);
    try {
      writer.put(keyBuffer, valueBuffer);
      pairs++;
    } catch (RocksDBException e) {
      throw table.storageError("writing a sorted run", e);
    }
  }

  /** Adds a pair whose key is {@code key[0, keyLength)}; its key must be greater than every key added before. */
  void put(byte[] key, int keyLength, byte[] value) {
    if (closed || finished) {
      throw new IllegalStateException("run file already finished, ingested or closed");
    }
    keyBuffer = fill(keyBuffer, key, 0, keyLength, 64);
    valueBuffer = fill(valueBuffer, value, 0, value.length, 4 << 10);
    try {
      writer.put(keyBuffer, valueBuffer);
      pairs++;
    } catch (RocksDBException e) {
      throw table.storageError("writing a sorted run", e);
    }
  }

  /** {@code buffer} (or a larger one) holding {@code length} bytes of {@code from} at {@code at}, ready to read. */
  static ByteBuffer fill(ByteBuffer buffer, byte[] from, int at, int length, int least) {
    ByteBuffer b = buffer != null && buffer.capacity() >= length ? buffer
        : ByteBuffer.allocateDirect(Math.max(length, Math.max(least, buffer == null ? 0 : buffer.capacity() * 2)));
    b.clear();
    b.put(from, at, length).flip();
    return b;
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
      finishWriting();
      if (sealFirst) {
        table.sealRuns(); // before the lifecycle lock: the lock order is runs, then lifecycle
      }
      awaitLevelZero(table);
      ingestFiles(table, List.of(file.toString()), true);
    } finally {
      close();
    }
  }

  /**
   * One ingest of {@code paths} (files that share no key) under the table's lifecycle lock;
   * with {@code mayMerge}, a bulk table holding more than {@link #MAX_RUNS} runs merges them.
   */
  private static void ingestFiles(StoreTable table, List<String> paths, boolean mayMerge) {
    Lock lock = table.use();
    try (IngestExternalFileOptions ingest = new IngestExternalFileOptions().setMoveFiles(true)) {
      table.db().ingestExternalFile(table.handle(), paths, ingest);
      if (mayMerge && table.isBulk() && table.levelZeroFiles() > MAX_RUNS) {
        mergeRuns(table);
      }
    } catch (RocksDBException e) {
      throw table.storageError("ingesting sorted files", e);
    } finally {
      lock.unlock();
    }
  }

  /**
   * Writes the file to its end (index and footer) and closes it, freeing its write buffer; it
   * takes no more pairs. Nothing when no pair was added or when already done.
   */
  void finishWriting() {
    if (closed) {
      throw new IllegalStateException("run file already ingested or closed");
    }
    if (pairs > 0 && !finished) {
      try {
        writer.finish();
      } catch (RocksDBException e) {
        throw table.storageError("writing a sorted run", e);
      }
      finished = true;
    }
    keyBuffer = null; // direct buffers, freed with the object: not held while the file waits
    valueBuffer = null;
  }

  /**
   * Makes the pairs of {@code files}, which share no key, part of the table in one ingest: each
   * goes to the lowest level it fits in (the bottom one, in a table that holds nothing of its
   * range), newer than every write applied before. The files are gone afterwards, ingested or
   * not.
   */
  static void ingestTogether(StoreTable table, List<RunFile> files) {
    try {
      List<String> paths = new ArrayList<>(files.size());
      for (RunFile f : files) {
        f.finishWriting();
        if (f.pairs > 0) {
          paths.add(f.file.toString());
        }
      }
      if (!paths.isEmpty()) {
        ingestFiles(table, paths, false);
      }
    } finally {
      for (RunFile f : files) {
        f.close();
      }
    }
  }

  /** Forgets the file unless it was ingested. */
  @Override
  public void close() {
    if (!closed) {
      closed = true;
      if (writer != null) {
        writer.close();
        opts.close();
        env.close();
      }
      deleteQuietly(file);
    }
  }

  /**
   * Waits, at most {@link #BACKLOG_WAIT_NANOS}, until level 0 is under {@link #INGEST_BACKLOG}
   * files, in a table with auto-compaction (a dropped table stops the wait).
   */
  static void awaitLevelZero(StoreTable table) {
    if (table.options().getDisableAutoCompaction()) {
      return;
    }
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
  private static void mergeRuns(StoreTable table) throws RocksDBException {
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
