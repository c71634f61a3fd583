package org.sss.kvs;

import java.io.IOException;
import java.nio.ByteBuffer;
import java.nio.channels.FileChannel;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardOpenOption;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.Collections;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.ConcurrentLinkedQueue;
import java.util.concurrent.Executor;
import java.util.concurrent.RejectedExecutionException;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.AtomicLong;
import java.util.concurrent.locks.Lock;
import java.util.concurrent.locks.ReentrantReadWriteLock;
import java.util.function.Supplier;
import org.rocksdb.ColumnFamilyHandle;
import org.rocksdb.Options;
import org.rocksdb.ReadOptions;
import org.rocksdb.RocksDB;
import org.rocksdb.RocksDBException;
import org.rocksdb.Snapshot;
import org.rocksdb.SstFileReader;
import org.rocksdb.SstFileReaderIterator;
import org.rocksdb.TableProperties;
import org.rocksdb.WriteBatch;
import org.rocksdb.WriteOptions;
import org.sss.core.cluster.JobTables;
import org.sss.core.keys.PairTypes;
import org.sss.core.proto.DataType;
import org.sss.core.proto.ErrorCode;
import org.sss.core.proto.TableInfo;
import org.sss.core.proto.TableOptions;

/**
 * One table on one node: a RocksDB column family and the options it was created with.
 *
 * <h2>Lifetime</h2>
 * A table may be dropped while cursors over it are open (a client scanning while another
 * drops). Dropping removes the column family at once, so new operations fail with
 * {@link ErrorCode#NO_SUCH_TABLE}; the native handle is released only when the last open
 * cursor closes, because RocksJava frees it immediately and a cursor still using it would
 * crash the process.
 *
 * <p>Every other operation (and every call on a {@link TableBatch}) holds the table's lifecycle lock,
 * shared, while it uses the handle, and a drop takes it exclusively: a drop waits for the calls
 * under way, and a call that starts after it fails with {@link ErrorCode#NO_SUCH_TABLE}.
 * Without that a batch could reach RocksDB after its column family was dropped, which RocksDB
 * treats as a fatal error that stops every later write on the node, or use a freed handle.
 */
public final class StoreTable {
  private final RocksDB db;
  /** The table's name; changes once, when a job commits the table under its final name. */
  private volatile String name;
  /** The column family's name: the table's own, or a spare's it was created from. */
  private final String family;
  private final TableOptions options;
  private final ColumnFamilyHandle handle;
  /** The table's own: with the WAL unless the table was created without one. */
  private final WriteOptions writeOptions;
  /**
   * Without the WAL, for a job's tables until the job commits them: a job's table is dropped
   * when its node stops before the commit, and the commit flushes it ({@link NodeStore#commit}),
   * so a log of its writes would keep nothing.
   */
  private final WriteOptions unlogged = new WriteOptions().setDisableWAL(true);
  private final Path ingestDir;
  private final UnsealedMarks marks;
  /**
   * Whether this table's mark says it holds bulk writers' pairs not stored yet; guarded by
   * {@code marking}, as is queuing a bulk writer's block: a mark is cleared only with no batch
   * entered, the queue and the runs empty, and a batch entering after that marks the table again
   * ({@link #enterBulk}, {@link UnsealedMarks}).
   */
  private final Object marking = new Object();
  private volatile boolean marked;
  /**
   * Set while the mark must stay whatever is stored: it was found when the store opened (the
   * node killed then lost pairs, until the node is decided out to catch up), or a store failed
   * and may have thrown gathered pairs away. Only {@link #lostPairsSettled} lets it go; guarded
   * by {@code marking}.
   */
  private boolean markHeld;
  /** Bulk batches between {@link #enterBulk} and their end: the mark stays while any is on its way; guarded by {@code marking}. */
  private int bulkEntered;

  /** A bulk batch on its way into the table ({@link #enterBulk}); closing it ends its hold on the mark. */
  public interface BulkEntry extends AutoCloseable {
    @Override
    void close();
  }
  /** 1 for the table itself plus 1 per open cursor; at 0 the native handle is freed. */
  private final AtomicInteger references = new AtomicInteger(1);
  /**
   * Values of at least this size are kept in blob files, not in SST blocks; a bulk table
   * stores such values of a sorted run through its memtable (whose flush writes the blob
   * file), since {@code SstFileWriter} cannot write blob files. A scan then holds, per sorted
   * run it merges, one block of pairs smaller than this plus its read-ahead, whatever the values.
   */
  public static final int LARGE_VALUE_BYTES = 1 << 20;
  /**
   * Read-ahead one scan may hold over all the files it merges: a file's share is this divided
   * by the files (and ranges) merged, between {@link #MIN_READ_AHEAD} and {@link #MAX_READ_AHEAD}.
   */
  static final long READ_AHEAD_BUDGET = 64L << 20;
  static final long MAX_READ_AHEAD = 2L << 20;
  static final long MIN_READ_AHEAD = 16L << 10;

  /** Shared by operations using the handle, exclusive for dropping; see the class comment. */
  private final ReentrantReadWriteLock lifecycle = new ReentrantReadWriteLock();
  private volatile boolean dropped;
  /**
   * Gathers the writes of a bulk table (no WAL, no compaction) into sorted runs, those of a
   * job's table until the job commits it ({@link #gathers}), and those of bulk writers into any
   * table until they seal them ({@link #writeBulk}).
   */
  private final SortedRuns runs;
  /** A bulk writer's blocks, taken and counted, in the order they came, not yet in the runs ({@link #writeBulk}). */
  private final ConcurrentLinkedQueue<BulkBlock> bulkInbox = new ConcurrentLinkedQueue<>();
  /** Stores of the runs that failed, each perhaps throwing gathered pairs away (see {@link #storing}). */
  private volatile long storeFailures;

  private record BulkBlock(byte[] block, int length, int count, long session) {}

  /** Pairs gathered from each bulk writer's session and not sealed yet ({@link #countBulk}). */
  private final Map<Long, BulkSession> bulkSessions = new ConcurrentHashMap<>();
  /** Sessions kept before idle ones are forgotten (a writer that failed never ends its session). */
  private static final int BULK_SESSIONS_KEPT = 64;
  private static final long BULK_SESSION_IDLE_NANOS = TimeUnit.HOURS.toNanos(1);

  private static final class BulkSession {
    final AtomicLong pairs = new AtomicLong();
    volatile long touchedNanos = System.nanoTime();
  }

  StoreTable(RocksDB db, String name, String family, TableOptions options, ColumnFamilyHandle handle, Path ingestDir,
      UnsealedMarks marks, boolean marked) {
    this.db = db;
    this.name = name;
    this.family = family;
    this.options = options;
    this.handle = handle;
    this.writeOptions = new WriteOptions().setDisableWAL(options.getDisableWal());
    this.ingestDir = ingestDir;
    this.marks = marks;
    this.marked = marked;
    this.markHeld = marked;
    // a job's output and a bulk writer's pairs (tables that are not bulk) are written as ordered
    // streams where they can be
    this.runs = new SortedRuns(this, !isBulk(options));
  }

  /**
   * Stores what the table gathered (runs, streams' files, bulk writers' queued blocks) before
   * anything else uses it; also called by a writer that must not store it later, under what it
   * holds. Called before taking the lifecycle lock: a run is stored under the lock, so the lock
   * order is always runs, then lifecycle.
   */
  public void sealRuns() {
    // every read and write of every table comes here: no lock when nothing is gathered. The queue
    // first: a block taken from it has made the runs not empty before (drainInbox)
    if (bulkInbox.isEmpty() && runs.isEmpty()) {
      clearMarkIfStored(); // a batch that marked the table and was then refused left nothing to store
      return;
    }
    storing(() -> {
      runs.seal();
      return null;
    });
  }

  /**
   * Runs an operation of the runs that may store them. One that fails may have thrown gathered
   * pairs away (a run, a stream's files): then every bulk session's count is forgotten, so that
   * the next seal of each finds the loss and its writer sends them again.
   */
  private <T> T storing(Supplier<T> op) {
    synchronized (runs) { // a seal that checks its count under this lock sees the loss
      try {
        drainInbox(); // a bulk writer's queued blocks are older than whatever comes next
        T result = op.get();
        clearMarkIfStored();
        return result;
      } catch (RuntimeException | Error e) {
        bulkSessions.clear();
        storeFailures++;
        holdMark(); // what it threw away may be held by other copies only
        throw e;
      }
    }
  }

  public String name() {
    return name;
  }

  private static boolean isBulk(TableOptions options) {
    return options.getDisableWal() && options.getDisableAutoCompaction();
  }

  /** A bulk table: no WAL, no compaction (the data between a job's stages). */
  boolean isBulk() {
    return isBulk(options);
  }

  /**
   * Whether packed writes are gathered into sorted runs: always for a bulk table; for a job's
   * output only until the commit, which stores its runs (a flush) before it takes its name. A
   * job's stages write it once, in large batches, and nobody reads it before the commit: so its
   * pairs skip the memtable as the data between stages does; once committed, it is written as
   * its options say.
   */
  private boolean gathers() {
    return isBulk(options) || JobTables.isJobTable(name);
  }

  /**
   * Whether the table keeps each writer's pairs apart while they come in key order (a job's
   * output; {@link OrderedStreams}): a writer then begins a new stream per task, whose keys are
   * its own range.
   */
  public boolean keepsStreams() {
    return runs.keepsStreams();
  }

  /** How a write is logged now: a job's table is not, until it is committed under its name. */
  WriteOptions writeOptions() {
    return JobTables.isJobTable(name) ? unlogged : writeOptions;
  }

  /** The table's new name after a commit (the catalog already says so). */
  void renameTo(String newName) {
    this.name = newName;
  }

  public TableOptions options() {
    return options;
  }

  /**
   * {@link #checkWritable(PairTypes)} for the types a request declares, as their numbers on the
   * wire ({@code getKeyTypeValue()}), which may be numbers this node does not know.
   */
  public void checkWritable(int keyType, int valueType) {
    checkKnown(keyType, valueType, "a batch for table '" + name + "'", "nothing was written");
    checkWritable(PairTypes.of(DataType.forNumber(keyType), DataType.forNumber(valueType)));
  }

  /**
   * Refuses type numbers this node does not know (a newer peer's, or a number no client sends)
   * as a bad request: they are nobody's table types, and {@link PairTypes} holds known types only.
   */
  public static void checkKnown(int keyType, int valueType, String what, String outcome) {
    String unknown = DataType.forNumber(keyType) == null ? "key type " + keyType
        : DataType.forNumber(valueType) == null ? "value type " + valueType : null;
    if (unknown != null) {
      throw new StoreException(ErrorCode.BAD_REQUEST, what + " declares " + unknown
          + ", which this node does not know (long, double, string, bytes or opaque); " + outcome);
    }
  }

  /**
   * Refuses a batch written with other types than the table's, before any of it is written: a
   * string table holding long keys could no longer be read as strings (see {@link PairTypes}).
   */
  public void checkWritable(PairTypes batch) {
    if (!batch.writableTo(options)) {
      throw new StoreException(ErrorCode.TYPE_MISMATCH, "table '" + name + "' holds key=" + PairTypes.name(options.getKeyType())
          + " value=" + PairTypes.name(options.getValueType()) + " but this batch was written as " + batch + "; nothing was written");
    }
  }

  boolean isDropped() {
    return dropped;
  }

  private void checkLive() {
    if (dropped) {
      throw new StoreException(ErrorCode.NO_SUCH_TABLE, "table '" + name + "' was dropped");
    }
  }

  /** Takes the lifecycle lock (shared) on a live table; the caller unlocks it. */
  Lock use() {
    Lock lock = lifecycle.readLock();
    lock.lock();
    if (dropped) {
      lock.unlock();
      checkLive();
    }
    return lock;
  }

  StoreException storageError(String what, RocksDBException e) {
    return new StoreException(ErrorCode.STORAGE_ERROR, what + " on table '" + name + "' failed: "
        + e.getMessage(), e);
  }

  /** A batch of writes applied atomically by {@link TableBatch#commit()}. */
  public TableBatch newBatch() {
    checkLive();
    return new TableBatch(this);
  }

  /** A batch of packed pairs written in one call (see {@link PackedBatch}). */
  public PackedBatch newPackedBatch(int capacity) {
    return newPackedBatch(capacity, OrderedStreams.NONE);
  }

  /**
   * A batch of packed pairs of writer {@code stream} ({@link PackedBatch#stream}): a job's
   * output keeps each writer's pairs apart, in files of their own while they come in key order
   * ({@link OrderedStreams}).
   */
  public PackedBatch newPackedBatch(int capacity, long stream) {
    checkLive();
    return new PackedBatch(this, capacity, stream);
  }

  /**
   * Takes a bulk writer's block of {@code count} packed pairs of session {@code session}: they
   * are gathered and stored as SST files as a job's output is ({@link OrderedStreams},
   * {@link SortedRuns}), whatever the table, not through the memtable and the WAL. They are
   * read as soon as this returns (a read stores them first), and durable once
   * {@link #sealBulk} has returned: a node that stops stores them, one killed loses them, and
   * its writer learns so from the seal.
   *
   * <p>Only queued and counted here, which never waits: its caller holds the membership's view
   * (a write is applied under the view it was checked against), which must not wait for the
   * runs' lock while a seal or a scan holds it. {@link #drainBulk} moves them into the runs,
   * after the caller let go of the view; anything else that uses the runs does so first. The
   * caller entered the batch first ({@link #enterBulk}), which marked the table.
   */
  public long writeBulk(byte[] block, int length, int count, long session) {
    checkLive();
    long failuresBefore = storeFailures;
    synchronized (marking) {
      checkLive(); // again: a drop clears the mark under this lock, and must not find a block queued after
      countBulk(session, count); // counted first: a store that fails later forgets the count (storing)
      bulkInbox.add(new BulkBlock(block, length, count, session));
    }
    return failuresBefore;
  }

  /**
   * Begins a bulk batch: marks the table as holding unsealed pairs ({@link UnsealedMarks}) if it
   * is not yet, before the batch is taken. Called before the caller takes the membership's view,
   * since making the mark touches the disk (a disk that hangs must not hold up view changes);
   * the mark then stays at least until the entry is closed, after {@link #writeBulk}.
   */
  public BulkEntry enterBulk() {
    synchronized (marking) {
      checkLive();
      if (!marked && marksUnsealed()) {
        try {
          marks.mark(family);
        } catch (java.io.UncheckedIOException e) {
          throw new StoreException(ErrorCode.STORAGE_ERROR, "marking table '" + name + "' as holding unsealed pairs"
              + " failed: " + e.getCause().getMessage(), e);
        }
        marked = true;
      }
      bulkEntered++;
    }
    return new BulkEntry() {
      private boolean closed;

      @Override
      public void close() {
        synchronized (marking) {
          if (!closed) {
            closed = true;
            bulkEntered--;
          }
        }
      }
    };
  }

  /**
   * Whether unsealed pairs are marked: only where another copy could serve them while this one
   * lost them (a replicated table that outlives a job; a job's tables go with a node's crash).
   */
  private boolean marksUnsealed() {
    return options.getReplication() > 1 && !JobTables.isJobTable(name);
  }

  /** After a store: with nothing queued or gathered left, nothing is unsealed. */
  private void clearMarkIfStored() {
    if (!marked) {
      return; // read without the lock: set by enterBulk, whose batch holds it (bulkEntered) until its block is queued
    }
    synchronized (runs) { // held already after a store: no block leaves the queue for the runs meanwhile
      synchronized (marking) {
        if (marked && !markHeld && bulkEntered == 0 && bulkInbox.isEmpty() && runs.isEmpty()) {
          marks.clear(family);
          marked = false;
        }
      }
    }
  }

  /** Keeps the mark (made now if need be) until {@link #lostPairsSettled}: pairs may have been lost here. */
  private void holdMark() {
    synchronized (marking) {
      if (marksUnsealed() && !dropped) {
        try {
          if (!marked) { // no disk under this lock when it can be helped: a writer under the view may wait for it
            marks.mark(family);
          }
          marked = true;
          markHeld = true;
        } catch (java.io.UncheckedIOException e) {
          // the store itself failed: the next open is told by the missing closed-flushed mark only
        }
      }
    }
  }

  /**
   * The node's possible loss of unsealed pairs here is decided on (it was decided out and
   * catches up, or it holds the only copy in sync): the mark may go once nothing is gathered.
   */
  void lostPairsSettled() {
    synchronized (marking) {
      markHeld = false;
    }
    clearMarkIfStored();
  }

  /**
   * Moves the bulk writers' queued blocks into the runs, and stores a run that filled. Throws
   * when a store failed since {@code failuresBefore} ({@link #writeBulk}'s answer): the block
   * queued then may have been thrown away with what another thread was storing, and its batch
   * must not be acknowledged.
   */
  public void drainBulk(long failuresBefore) {
    storing(() -> {
      runs.storeIfFull();
      return null;
    });
    if (storeFailures != failuresBefore) {
      throw new StoreException(ErrorCode.STORAGE_ERROR, "a store of table '" + name + "' failed while this batch was"
          + " on its way, and may have thrown it away");
    }
  }

  /** Under the runs' lock. */
  private void drainInbox() {
    if (bulkInbox.isEmpty()) {
      return;
    }
    runs.takingQueued(); // before the first poll: see sealRuns
    for (BulkBlock b = bulkInbox.poll(); b != null; b = bulkInbox.poll()) {
      if (!dropped) {
        runs.add(b.block(), b.length(), b.count(), b.session(), false);
      }
    }
  }

  /** Counts {@code pairs} gathered from bulk session {@code session} (see {@link #sealBulk}). */
  private void countBulk(long session, long pairs) {
    BulkSession s = bulkSessions.computeIfAbsent(session, k -> new BulkSession());
    s.pairs.addAndGet(pairs);
    s.touchedNanos = System.nanoTime();
    if (bulkSessions.size() > BULK_SESSIONS_KEPT) {
      long now = System.nanoTime();
      bulkSessions.values().removeIf(idle -> now - idle.touchedNanos > BULK_SESSION_IDLE_NANOS);
    }
  }

  /**
   * Stores the pairs bulk writers sent so far as SST files, ingested (RocksDB syncs each ingested
   * file, its directory and the manifest that lists it), once it has checked that this node holds
   * the {@code pairs} that session {@code session} gathered since its last seal: the pairs are
   * durable when this returns. Returns false, storing nothing, when it holds another number (it
   * lost what it had gathered: a restart, a failed store, the table made again); the writer must
   * then send them again. With {@code last} the session is forgotten. Values of
   * {@link #LARGE_VALUE_BYTES} or more went through the memtable: with the table's WAL, or, in a
   * table without one, flushed here.
   */
  public boolean sealBulk(long session, long pairs, boolean last) {
    synchronized (runs) { // the runs' lock, first: a store that fails forgets the counts under it
      BulkSession s = bulkSessions.get(session);
      if ((s == null ? 0 : s.pairs.get()) != pairs) {
        return false;
      }
      if (options.getDisableWal()) {
        flush();
      } else {
        sealRuns();
      }
      if (s != null) {
        s.pairs.addAndGet(-pairs); // a writer's batches wait for its seal: none came in between
      }
      if (last) {
        bulkSessions.remove(session);
        runs.forgetStream(session);
      }
      return true;
    }
  }

  /** The pairs session {@code session} gathered and no seal stored yet (for the seal's message). */
  public long bulkPairs(long session) {
    BulkSession s = bulkSessions.get(session);
    return s == null ? 0 : s.pairs.get();
  }

  /**
   * Applies the {@code count} packed pairs in {@code block[0, length)} atomically; returns
   * whether the table kept the array (a gathering table does: the caller must not touch it
   * again). Refused once the table is dropped: a serialized batch names the table's column
   * family, and one naming a dropped family is a fatal error to RocksDB that stops every later
   * write on the node.
   */
  boolean writePacked(byte[] block, int length, int count, long stream) {
    if (gathers()) {
      checkLive();
      return storing(() -> runs.add(block, length, count, stream, true));
    }
    sealRuns(); // what was gathered (a job's output before its commit, a bulk writer's pairs) lands first
    Lock lock = use();
    // RocksJava copies the batch into native memory: nothing refers to the array afterwards
    try (WriteBatch batch = new WriteBatch(WriteBatchRep.of(block, length, count, handle.getID()))) {
      db.write(writeOptions(), batch);
    } catch (RocksDBException e) {
      throw storageError("write", e);
    } finally {
      lock.unlock();
    }
    return false;
  }

  /**
   * Takes a file of stream {@code stream}'s pairs of one partition that this node's writer built
   * ({@link PartitionFiles.BuiltFile#keep}); deleted if refused.
   */
  void takeBuiltFile(long stream, OrderedStreams.Written file) {
    try {
      checkLive();
    } catch (StoreException e) {
      file.file().close();
      throw e;
    }
    StoreException refused = storing(() -> runs.takeBuiltFile(stream, file));
    if (refused != null) {
      throw refused;
    }
  }

  /**
   * Takes a file of stream {@code stream}'s pairs of one partition that another node's writer
   * built ({@link PartitionFiles}), received whole in {@code body}: written into the ingest
   * directory, checked to hold {@code pairs} pairs from {@code first} to {@code last}, no
   * deletion and no block that fails its checksum, and ingested with the stream's files when the table is sealed. A file refused is
   * deleted, and nothing of it is in the table.
   */
  public void receiveBuiltFile(long stream, ByteBuffer body, long pairs, byte[] first, byte[] last, long pairBytes) {
    checkLive();
    Path file;
    try {
      Files.createDirectories(ingestDir);
      file = Files.createTempFile(ingestDir, name + "-in-", ".sst");
    } catch (IOException e) {
      throw new StoreException(ErrorCode.STORAGE_ERROR, "cannot write a received file of table '" + name + "': "
          + e.getMessage(), e);
    }
    RunFile run = RunFile.written(this, file, pairs);
    try {
      try (FileChannel ch = FileChannel.open(file, StandardOpenOption.WRITE)) {
        while (body.hasRemaining()) {
          ch.write(body);
        }
      }
      checkBuiltFile(file, pairs, first, last);
    } catch (IOException | RuntimeException e) {
      run.close();
      if (e instanceof StoreException se) {
        throw se;
      }
      throw new StoreException(ErrorCode.STORAGE_ERROR, "cannot write a received file of table '" + name + "': "
          + e.getMessage(), e);
    }
    takeBuiltFile(stream, new OrderedStreams.Written(run, first.clone(), last.clone(), pairBytes));
  }

  /** Refuses a received file that is not what its sender announced (read from its index and properties, not scanned). */
  private void checkBuiltFile(Path file, long pairs, byte[] first, byte[] last) {
    String refused = "a received file of table '" + name + "' ";
    try (Options o = new Options(); SstFileReader reader = new SstFileReader(o)) {
      reader.open(file.toString());
      reader.verifyChecksum(); // the file was just written: its blocks are read from the page cache
      TableProperties props = reader.getTableProperties();
      if (props.getNumEntries() != pairs || props.getNumDeletions() != 0 || props.getNumMergeOperands() != 0) {
        throw new StoreException(ErrorCode.BAD_REQUEST, refused + "holds " + props.getNumEntries() + " entries ("
            + props.getNumDeletions() + " deletions) where " + pairs + " pairs were announced; nothing was written");
      }
      try (ReadOptions read = new ReadOptions().setFillCache(false); SstFileReaderIterator it = reader.newIterator(read)) {
        it.seekToFirst();
        boolean firstOk = it.isValid() && Arrays.equals(it.key(), first);
        it.seekToLast();
        if (!firstOk || !it.isValid() || !Arrays.equals(it.key(), last)) {
          throw new StoreException(ErrorCode.BAD_REQUEST, refused + "does not begin and end with the keys announced;"
              + " nothing was written");
        }
      }
    } catch (RocksDBException e) {
      throw new StoreException(ErrorCode.BAD_REQUEST, refused + "cannot be read as an SST file: " + e.getMessage()
          + "; nothing was written", e);
    }
  }

  /** Reads one stored key; null when absent. */
  public byte[] get(byte[] key) {
    sealRuns();
    Lock lock = use();
    try {
      return db.get(handle, key);
    } catch (RocksDBException e) {
      throw storageError("get", e);
    } finally {
      lock.unlock();
    }
  }

  /** Reads many stored keys; the list holds null for absent keys, in request order. */
  public List<byte[]> multiGet(List<byte[]> keys) {
    if (keys.isEmpty()) {
      checkLive();
      return new ArrayList<>(); // RocksJava asserts a non-empty key list
    }
    sealRuns();
    return readMany(null, keys);
  }

  /** One multi-get of non-empty {@code keys} under the lifecycle lock; {@code read} null for the latest values. */
  List<byte[]> readMany(ReadOptions read, List<byte[]> keys) {
    Lock lock = use();
    try {
      List<ColumnFamilyHandle> handles = Collections.nCopies(keys.size(), handle);
      return read == null ? db.multiGetAsList(handles, keys) : db.multiGetAsList(read, handles, keys);
    } catch (RocksDBException e) {
      throw storageError("multi-get", e);
    } finally {
      lock.unlock();
    }
  }

  /**
   * The table as it is now, to be read by key later: for a writer that must know what keys held
   * before a change of its own (a node catching up, around an ingest). Holds a RocksDB snapshot
   * until closed.
   */
  public PointInTime pointInTime() {
    sealRuns(); // gathered writes belong to now
    Lock lock = use();
    try {
      references.incrementAndGet();
      return new PointInTime(this, db.getSnapshot());
    } finally {
      lock.unlock();
    }
  }

  /** Deletes stored keys in one batch. */
  public void delete(List<byte[]> keys) {
    try (TableBatch b = newBatch()) {
      for (byte[] k : keys) {
        b.delete(k);
      }
      b.commit();
    }
  }

  /**
   * Deletes every pair in {@code [lower, upper)} in one write (a range tombstone, not a key at a
   * time): how a copy that fell behind is emptied before it is filled again.
   */
  public void deleteRange(byte[] lower, byte[] upper) {
    try (TableBatch b = newBatch()) {
      b.deleteRange(lower, upper);
      b.commit();
    }
  }

  /**
   * A cursor over {@code [lower, upper)} of stored keys (upper null: to the end), as of now.
   */
  public StoreCursor scan(byte[] lower, byte[] upper) {
    List<byte[][]> one = new ArrayList<>();
    one.add(new byte[][] {lower, upper});
    return scanRanges(one, false);
  }

  /**
   * A cursor over several key ranges of one consistent snapshot: one range after another, or,
   * when {@code ordered}, merged into one ascending order (used to merge a node's partitions).
   */
  public StoreCursor scanRanges(List<byte[][]> ranges, boolean ordered) {
    // the resident run and the snapshot are taken together, so no write lands between them
    // (the lock order is runs, then lifecycle)
    synchronized (runs) {
      try {
        return scanRanges(ranges, ordered, storing(runs::forScan));
      } catch (StoreException e) {
        if (dropped) {
          runs.discard(); // dropped meanwhile: give back what the scan kept in memory
        }
        throw e;
      }
    }
  }

  private StoreCursor scanRanges(List<byte[][]> ranges, boolean ordered, SortedRuns.Resident resident) {
    Lock lock = use();
    try {
      long readAhead = readAheadPerFile(ranges.size()); // before anything that must be given back
      references.incrementAndGet();
      Snapshot snapshot = db.getSnapshot();
      List<RangeReader> cursors = new ArrayList<>(ranges.size());
      for (byte[][] range : ranges) {
        RangeReader stored = new RangeCursor(this, snapshot, range[0], range[1], readAhead);
        cursors.add(resident == null ? stored : ResidentCursor.over(resident, range[0], range[1], stored));
      }
      Runnable release = () -> {
        db.releaseSnapshot(snapshot);
        releaseReference();
      };
      return ordered ? new MergingCursor(cursors, release) : new ConcatCursor(cursors, release);
    } finally {
      lock.unlock();
    }
  }

  /**
   * Each file a cursor reads holds a read-ahead buffer of this size, and every file of level 0
   * (a bulk table's sorted runs) is read at once by a merge: so the share of each is the
   * scan's budget over the files merged and the ranges open side by side.
   */
  long readAheadPerFile(int ranges) {
    long files;
    try {
      files = levelZeroFiles() + LEVELS_BELOW_ZERO;
    } catch (RocksDBException e) {
      throw storageError("stats", e);
    }
    return Math.max(MIN_READ_AHEAD, Math.min(MAX_READ_AHEAD, READ_AHEAD_BUDGET / (files * Math.max(1, ranges))));
  }

  /** Bytes of a column family's files: SST files, and blob files holding its large values. */
  static long fileBytes(RocksDB db, ColumnFamilyHandle handle) throws RocksDBException {
    return db.getLongProperty(handle, "rocksdb.total-sst-files-size")
        + db.getLongProperty(handle, "rocksdb.total-blob-file-size");
  }

  /** One of RocksDB's numeric properties of this table's column family (its block cache's, say). */
  long rocksProperty(String property) {
    try {
      return db.getLongProperty(handle, property);
    } catch (RocksDBException e) {
      throw storageError("property " + property, e);
    }
  }

  /** Levels 1 to 6: each is read through one file at a time. */
  private static final int LEVELS_BELOW_ZERO = 6;

  /** Counts the pairs exactly by scanning keys. */
  public long count() {
    return count(null, null);
  }

  /** Exact number of pairs with stored keys in {@code [lower, upper)} (null: unbounded). */
  public long count(byte[] lower, byte[] upper) {
    long n = 0;
    try (StoreCursor c = scan(lower, upper)) {
      for (; c.valid(); c.next()) {
        n++;
      }
    }
    return n;
  }

  /**
   * The table's info, or empty when it was dropped: a listing takes a snapshot of the tables
   * and must not fail because another client dropped one of them meanwhile.
   */
  public Optional<TableInfo> infoIfLive() {
    try {
      return Optional.of(info());
    } catch (StoreException e) {
      if (dropped) {
        return Optional.empty();
      }
      throw e;
    }
  }

  /** Pairs (RocksDB's estimate) and bytes (SST files plus memtables). */
  public TableInfo info() {
    // read before the lock: the lock order is runs, then lifecycle
    long pendingPairs = runs.pendingPairs();
    long pendingBytes = runs.pendingBytes();
    Lock lock = use();
    try {
      long pairs = db.getLongProperty(handle, "rocksdb.estimate-num-keys");
      long bytes = fileBytes(db, handle)
          + db.getLongProperty(handle, "rocksdb.cur-size-all-mem-tables");
      pairs += pendingPairs;
      bytes += pendingBytes;
      boolean background = db.getLongProperty(handle, "rocksdb.compaction-pending") > 0
          || db.getLongProperty(handle, "rocksdb.mem-table-flush-pending") > 0
          || db.getLongProperty("rocksdb.num-running-compactions") > 0
          || db.getLongProperty("rocksdb.num-running-flushes") > 0;
      return TableInfo.newBuilder().setName(name).setOptions(options).setPairs(pairs).setBytes(bytes)
          .setBackgroundWork(background).build();
    } catch (RocksDBException e) {
      throw storageError("stats", e);
    } finally {
      lock.unlock();
    }
  }

  /**
   * Writes a run of pairs, already in ascending stored-key order without duplicates, as one
   * SST file and ingests it: the fast path for write-once data (no memtable, no WAL, no
   * compaction of the run itself).
   */
  public void ingestSorted(Iterable<byte[][]> sortedPairs) {
    sealRuns();
    ingestRun(writer -> {
      long n = 0;
      for (byte[][] pair : sortedPairs) {
        writer.put(pair[0], pair[1]);
        n++;
      }
      return n;
    });
  }

  /**
   * Writes one pair of a sorted run through the memtable, read in place from the array that
   * holds it: for values of {@link #LARGE_VALUE_BYTES} or more, which the memtable's flush
   * moves into a blob file. Called after the run's other pairs were ingested, so the pair is as
   * new as they are.
   */
  void putLarge(byte[] source, int keyAt, int keyLength, int valueAt, int valueLength) {
    Lock lock = use();
    try {
      db.put(handle, writeOptions(), source, keyAt, keyLength, source, valueAt, valueLength);
    } catch (RocksDBException e) {
      throw storageError("write", e);
    } finally {
      lock.unlock();
    }
  }

  /** {@link #ingestSorted} without storing gathered runs first (it stores one). */
  void ingestRun(SortedRun run) {
    checkLive();
    try (RunFile file = new RunFile(this, false)) { // it stores the gathered runs: sealing here would recurse
      try {
        file.write(run);
      } catch (RocksDBException e) {
        throw storageError("writing a sorted run", e);
      }
      file.ingest();
    }
  }

  /**
   * A file to write a sorted run into, apart from the table until {@link RunFile#ingest}: for a
   * writer that must do something between writing the run and making it visible (a node
   * catching up keeps the keys written live meanwhile).
   */
  public RunFile newRunFile() {
    checkLive();
    return new RunFile(this, true);
  }

  long levelZeroFiles() throws RocksDBException {
    // a string property: RocksDB has no integer form of it
    return Long.parseLong(db.getProperty(handle, "rocksdb.num-files-at-level0").trim());
  }

  /** Flushes memtables to disk (used before measuring scans and in tests). */
  public void flush() {
    sealRuns();
    Lock lock = use();
    try (org.rocksdb.FlushOptions f = new org.rocksdb.FlushOptions().setWaitForFlush(true)) {
      db.flush(f, handle);
    } catch (RocksDBException e) {
      throw storageError("flush", e);
    } finally {
      lock.unlock();
    }
  }

  /** Compacts the whole table. */
  public void compact() {
    sealRuns();
    Lock lock = use();
    try {
      db.compactRange(handle);
    } catch (RocksDBException e) {
      throw storageError("compaction", e);
    } finally {
      lock.unlock();
    }
  }

  ColumnFamilyHandle handle() {
    return handle;
  }

  String family() {
    return family;
  }

  RocksDB db() {
    return db;
  }

  /** Where {@link RunFile}s are written before they are ingested. */
  Path ingestDir() {
    return ingestDir;
  }

  /**
   * After a drop, hands the column family over for reuse when nothing uses it any more (no
   * open cursor: only the reference {@link #retain} took is left). Returns null otherwise, and
   * the caller drops the column family as usual.
   */
  ColumnFamilyHandle detach() {
    if (references.compareAndSet(1, 0)) {
      writeOptions.close();
      unlogged.close();
      return handle;
    }
    return null;
  }

  /** Keeps the native handle alive for a column family drop that runs later. */
  void retain() {
    references.incrementAndGet();
  }

  /** Releases what {@link #retain} kept. */
  void release() {
    releaseReference();
  }

  /** Marks the table dropped (once no operation uses it); the caller has removed the column family. */
  void markDropped() {
    lifecycle.writeLock().lock();
    try {
      markDroppedLocked();
    } finally {
      lifecycle.writeLock().unlock();
    }
    closeStreams();
  }

  /**
   * Forgets files of ordered streams once the table is marked dropped, outside the lifecycle
   * lock (the lock order is runs, then lifecycle). It takes the runs' lock, which a writer may
   * hold for seconds (storing a run): a drop under the node's DDL lock hands it to
   * {@code later} instead.
   */
  private void closeStreams() {
    if (runs.keepsStreams()) {
      runs.closeStreams();
    }
  }

  /** {@link #markDropped} under the lifecycle lock, which the caller holds. */
  private void markDroppedLocked() {
    if (!dropped) {
      dropped = true;
      bulkInbox.clear();
      runs.discard();
      releaseReference();
    }
  }

  /** A step of dropping a table that RocksDB may refuse. */
  interface DropStep {
    void run() throws RocksDBException;
  }

  /**
   * Runs {@code step} (removing the column family) once no operation uses the table, and marks
   * the table dropped before any other operation can start, whether or not the step succeeded;
   * its streams' files are forgotten on {@code later}.
   */
  void drop(DropStep step, Executor later) throws RocksDBException {
    lifecycle.writeLock().lock();
    try {
      step.run();
    } finally {
      try {
        markDroppedLocked();
        synchronized (marking) { // its pairs went with it; a writeBulk under way finds it dropped
          marks.clear(family);
          marked = false;
          markHeld = false;
        }
      } finally {
        lifecycle.writeLock().unlock();
        if (runs.keepsStreams()) {
          try {
            later.execute(runs::closeStreams);
          } catch (RejectedExecutionException e) {
            runs.closeStreams(); // the store is closing: its writers are done
          }
        }
      }
    }
  }

  void releaseReference() {
    if (references.decrementAndGet() == 0) {
      handle.close();
      writeOptions.close();
      unlogged.close();
    }
  }
}
