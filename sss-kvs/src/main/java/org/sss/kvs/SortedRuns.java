package org.sss.kvs;

import java.nio.ByteBuffer;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.BitSet;
import java.util.List;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicLong;
import org.sss.core.cluster.JobTables;
import org.sss.core.proto.ErrorCode;
import org.sss.core.transport.Varints;

/**
 * Writes of a bulk table (no WAL, no compaction: the data between a job's stages) gathered in
 * memory and stored as sorted runs, the way Hadoop spills its map output.
 *
 * <h2>Why</h2>
 * A memtable takes a pair with a skip-list insert, a few microseconds of cache misses each on
 * this kind of machine; for a stage that moves millions of small pairs those inserts are most
 * of its time. Sorting a run of pairs in memory and writing it as one SST file (ingested into
 * the table) costs a fraction of that, and the next stage reads the runs merged, in order.
 *
 * <h2>Visibility</h2>
 * Gathered pairs are not in RocksDB yet. The table {@link #seal seals} the runs (writes what is
 * gathered) before anything else touches it: a read, another kind of write, a flush. So every
 * read sees every write acknowledged before it, as with the memtable. Runs are ingested in the
 * order they were gathered, and within a run the last write of a key wins, so overwrites keep
 * their order too.
 *
 * <h2>Memory</h2>
 * Gathered and resident runs of all tables in this JVM share one budget, a quarter of the heap
 * ({@link #BUDGET}). A table stores its gathered writes as a run when they reach
 * {@link #MAX_RUN_BYTES} or {@link #MAX_RUN_PAIRS} (sorting takes about 70 bytes per pair on
 * top of the pairs) or when the budget is spent; a scan keeps the last run in memory only
 * while the budget allows.
 */
final class SortedRuns {
  private static final long HEAP = Runtime.getRuntime().maxMemory();
  /** Gathered bytes that make a run: 256 MiB, or a sixteenth of the heap when that is less. */
  static final long MAX_RUN_BYTES = Math.min(256L << 20, HEAP / 16);
  /** Gathered pairs that make a run: 2M, or one per 512 bytes of heap when that is less. */
  static final long MAX_RUN_PAIRS = Math.min(2_000_000, HEAP / 512);
  /** The least a run stores when the budget is spent, so that a full budget does not make tiny runs. */
  static final long MIN_RUN_BYTES = 4L << 20;
  /** What gathered and resident runs of all tables in this JVM may hold. */
  static final long BUDGET = HEAP / 4;
  private static final AtomicLong HELD = new AtomicLong();

  private final StoreTable table;
  private final List<Batch> batches = new ArrayList<>();
  private long bytes;
  private long pairs;
  /** Bytes of {@link #batches} counted in {@link #HELD}; atomic so that a drop can give them back without the lock. */
  private final AtomicLong gatheredHeld = new AtomicLong();
  /** Gathered writes sorted for a scan and kept in memory, newer than all RocksDB holds; or null. */
  private volatile Resident resident;
  /** Writes of a job's output that come in key order, stored without a sort; null for a bulk table. */
  private final OrderedStreams streams;
  /** See {@link #isEmpty}. */
  private volatile boolean empty = true;

  /** Sorted runs of {@code table}; with {@code streams}, writes of a stream go to {@link OrderedStreams} first. */
  SortedRuns(StoreTable table, boolean streams) {
    this.table = table;
    this.streams = streams ? new OrderedStreams(table) : null;
  }

  /**
   * Takes a block of packed pairs (see {@link PackedBatch}) written by stream {@code stream}
   * ({@link OrderedStreams#NONE} for none): into the stream's files as far as they follow it in
   * key order, the rest gathered for a sorted run. Returns whether it kept the array (the caller
   * must not touch it again). Stores a run when the gathered pairs fill one, unless
   * {@code storeWhenFull} is false: the caller then calls {@link #storeIfFull} later, outside
   * whatever it holds (a bulk writer's batch is taken under the node's membership view).
   */
  synchronized boolean add(byte[] block, int length, int count, long stream, boolean storeWhenFull) {
    try {
      storeResident(); // it must land before anything written after it
      byte[] kept = block;
      if (streams != null && stream != OrderedStreams.NONE && !table.isDropped()) {
        int rest = streams.write(stream, block, length);
        if (rest == length) {
          return false;
        }
        if (rest > 0) {
          count = countPairs(block, rest, length);
          kept = Arrays.copyOfRange(block, rest, length);
          length = kept.length;
        } else if (!PackedBatch.nearlyFull(block, length)) {
          kept = Arrays.copyOf(block, length); // a stream's batch comes whole: keep no more than its pairs
        }
      }
      gather(kept, length, count, storeWhenFull);
      return kept == block;
    } finally {
      noteEmptiness();
    }
  }

  /**
   * Takes a file stream {@code stream}'s writer built ({@link OrderedStreams#take}); returns why
   * it was refused (the file then deleted), or null: on a table that keeps no streams or is
   * dropped, or out of its stream's order. Returned, not thrown: a refusal is not a failure to
   * store (which would hold the table's mark, {@code StoreTable.storing}).
   */
  synchronized StoreException takeBuiltFile(long stream, OrderedStreams.Written file) {
    try {
      storeResident(); // it must land before anything written after it
      if (streams == null || table.isDropped()) {
        file.file().close();
        return new StoreException(streams == null ? ErrorCode.BAD_REQUEST : ErrorCode.NO_SUCH_TABLE, "table '"
            + table.name() + "' takes no built files" + (streams == null ? " (it keeps no writers' streams)" : " (it was dropped)"));
      }
      return streams.take(stream, file);
    } finally {
      noteEmptiness();
    }
  }

  private static int countPairs(byte[] block, int from, int to) {
    int n = 0;
    for (int at = from; at < to; n++) {
      at = Varints.skip(block, at) + Varints.get(block, at);
      at = Varints.skip(block, at) + Varints.get(block, at);
    }
    return n;
  }

  private void gather(byte[] block, int length, int count, boolean storeWhenFull) {
    batches.add(new Batch(block, length, count));
    bytes += length; // what the run will store
    gatheredHeld.addAndGet(block.length); // what memory holds: the whole array
    long held = HELD.addAndGet(block.length);
    pairs += count;
    if (table.isDropped()) {
      discard(); // dropped while this write was on its way: its bytes must not stay counted
      return;
    }
    if (storeWhenFull && full(held)) {
      storeGathered();
    }
  }

  private boolean full(long held) {
    return bytes >= MAX_RUN_BYTES || pairs >= MAX_RUN_PAIRS || held > BUDGET && bytes >= MIN_RUN_BYTES;
  }

  /** Stores the gathered pairs as a run when they fill one (see {@link #add}). */
  synchronized void storeIfFull() {
    try {
      if (pairs > 0 && full(HELD.get())) {
        storeGathered();
      }
    } finally {
      noteEmptiness();
    }
  }

  /**
   * Stores the gathered pairs as a run that filled, after the streams' files: pairs are gathered for a run
   * only when their stream broke or names none, and a file of another stream may hold an older
   * value of their key (a bulk writer's pairs sent again under a new session break its new stream
   * where the old one's file still holds them), which must not land after them.
   */
  private void storeGathered() {
    if (streams != null && !JobTables.isJobTable(table.name())) {
      streams.ingestAll(); // (a job's streams promise no order between them: their files go on)
    }
    ingestGathered(Records.parse(batches, (int) pairs));
  }

  /**
   * Whether nothing is gathered, resident or in a stream's files: a seal would store nothing.
   * Read without the lock (volatile, set at the end of every change): a write acknowledged before
   * a read began is seen by it.
   */
  boolean isEmpty() {
    return empty;
  }

  private void noteEmptiness() {
    empty = pairs == 0 && resident == null && (streams == null || streams.isIdle());
  }

  /** Forgets stream {@code id} (a bulk writer's session that ended), once its files are in. */
  synchronized void forgetStream(long id) {
    if (streams != null) {
      streams.forget(id);
    }
  }

  /**
   * What a scan reads from memory besides RocksDB: the gathered writes, sorted now and kept
   * (immutable, so a cursor may read them without a lock); null when there are none. Over the
   * memory budget they are stored in RocksDB instead, and this returns null.
   */
  synchronized Resident forScan() {
    try {
      if (streams != null) {
        streams.ingestAll(); // before the snapshot, which the resident run is newer than
      }
      if (pairs > 0) {
        if (HELD.get() + Resident.INDEX_BYTES_PER_PAIR * pairs > BUDGET) {
          seal();
          return null;
        }
        Resident r = Records.parse(batches, (int) pairs).resident();
        forgetGathered();
        HELD.addAndGet(r.bytes); // the same batches, now with the resident run's index
        resident = r;
      }
      return resident;
    } finally {
      noteEmptiness();
    }
  }

  /**
   * Stores everything in RocksDB: the resident run, then the streams' files, then what is
   * gathered as one sorted run (a stream's pairs in runs are only those after it broke, which its
   * files already preceded, and a resend's pairs must land after an old session's files; see
   * {@link #storeGathered} and {@link OrderedStreams}).
   */
  synchronized void seal() {
    try {
      storeResident();
      if (streams != null) {
        streams.ingestAll(); // every table's, a job's too: a seal stores everything
      }
      if (pairs > 0) {
        ingestGathered(Records.parse(batches, (int) pairs));
      }
    } finally {
      noteEmptiness();
    }
  }

  /**
   * Marks the runs as holding pairs before a bulk writer's queued block leaves its queue for
   * them: a seal that finds the queue empty must then find them not empty.
   */
  synchronized void takingQueued() {
    empty = false;
  }

  /**
   * Forgets the streams' files before the table is dropped or closed: called before the
   * lifecycle lock is taken (the lock order is runs, then lifecycle). Later writes are gathered
   * and discarded with the table.
   */
  synchronized void closeStreams() {
    try {
      if (streams != null) {
        streams.close();
      }
    } finally {
      noteEmptiness();
    }
  }

  /** Whether writes of streams go to {@link OrderedStreams} (a job's output), not only to runs. */
  boolean keepsStreams() {
    return streams != null;
  }

  private void ingestGathered(Records records) {
    try {
      store(records.resident());
    } finally {
      forgetGathered();
    }
  }

  private void forgetGathered() {
    batches.clear();
    bytes = 0;
    pairs = 0;
    HELD.addAndGet(-gatheredHeld.getAndSet(0));
  }

  private void storeResident() {
    Resident r = resident;
    if (r != null) {
      resident = null;
      try {
        store(r);
      } finally {
        r.release();
      }
    }
  }

  /**
   * Stores a run: its pairs as an SST file, except large values, which go through the
   * memtable into blob files afterwards (see {@link StoreTable#LARGE_VALUE_BYTES}).
   */
  private void store(Resident run) {
    table.ingestRun(run::writeSmallTo);
    run.writeLargeTo(table);
  }

  /** Forgets the runs of a dropped table. Takes no lock: it is called under the table's drop lock. */
  void discard() {
    HELD.addAndGet(-gatheredHeld.getAndSet(0));
    Resident r = resident;
    if (r != null) {
      r.release();
    }
  }

  /** Bytes of gathered and resident runs in this JVM (for tests). */
  static long heldBytes() {
    return HELD.get();
  }

  synchronized long pendingPairs() {
    Resident r = resident;
    return pairs + (r == null ? 0 : r.n) + (streams == null ? 0 : streams.pendingPairs());
  }

  synchronized long pendingBytes() {
    Resident r = resident;
    return bytes + (r == null ? 0 : r.bytes) + (streams == null ? 0 : streams.pendingBytes());
  }

  /** Pairs sorted by key, without duplicate keys, read in place from the batches that brought them. */
  static final class Resident extends PairIndex {
    /** A reference and four ints per pair. */
    static final long INDEX_BYTES_PER_PAIR = 24;
    final long batchBytes;
    final long bytes;
    private final AtomicBoolean released = new AtomicBoolean();

    Resident(int n, long batchBytes) {
      super(n);
      this.batchBytes = batchBytes;
      bytes = batchBytes + INDEX_BYTES_PER_PAIR * n;
    }

    /** Gives its bytes back to the budget, once. */
    void release() {
      if (released.compareAndSet(false, true)) {
        HELD.addAndGet(-bytes);
      }
    }

    /** The first position whose key is at least {@code key}. */
    int lowerBound(byte[] key) {
      int lo = 0;
      int hi = n;
      while (lo < hi) {
        int mid = (lo + hi) >>> 1;
        if (compareKeyAt(mid, key) < 0) {
          lo = mid + 1;
        } else {
          hi = mid;
        }
      }
      return lo;
    }

    int compareKeyAt(int i, byte[] key) {
      return Arrays.compareUnsigned(source[i], keyAt[i], keyAt[i] + keyLength[i], key, 0, key.length);
    }

    byte[] key(int i) {
      return Arrays.copyOfRange(source[i], keyAt[i], keyAt[i] + keyLength[i]);
    }

    byte[] value(int i) {
      return Arrays.copyOfRange(source[i], valueAt[i], valueAt[i] + valueLength[i]);
    }

    int key(int i, ByteBuffer target) {
      target.put(target.position(), source[i], keyAt[i], Math.min(keyLength[i], target.remaining()));
      return keyLength[i];
    }

    int value(int i, ByteBuffer target) {
      target.put(target.position(), source[i], valueAt[i], Math.min(valueLength[i], target.remaining()));
      return valueLength[i];
    }

    /**
     * Puts every pair whose value is not large into an SST file through two reused direct
     * buffers: no array per key or value, and RocksDB reads the buffers in place.
     */
    long writeSmallTo(org.rocksdb.SstFileWriter writer) throws org.rocksdb.RocksDBException {
      ByteBuffer key = ByteBuffer.allocateDirect(256);
      ByteBuffer value = ByteBuffer.allocateDirect(64 << 10);
      long written = 0;
      for (int i = 0; i < n; i++) {
        if (valueLength[i] < StoreTable.LARGE_VALUE_BYTES) {
          key = RunFile.fill(key, source[i], keyAt[i], keyLength[i], 256);
          value = RunFile.fill(value, source[i], valueAt[i], valueLength[i], 64 << 10);
          writer.put(key, value);
          written++;
        }
      }
      return written;
    }

    /** Writes the pairs {@link #writeSmallTo} left out through the table's memtable. */
    void writeLargeTo(StoreTable table) {
      for (int i = 0; i < n; i++) {
        if (valueLength[i] >= StoreTable.LARGE_VALUE_BYTES) {
          table.putLarge(source[i], keyAt[i], keyLength[i], valueAt[i], valueLength[i]);
        }
      }
    }
  }

  /** Where n pairs lie: pair i's key and value are ranges of {@code source[i]}, a received batch. */
  abstract static class PairIndex {
    final byte[][] source;
    final int[] keyAt;
    final int[] keyLength;
    final int[] valueAt;
    final int[] valueLength;
    final int n;

    PairIndex(int n) {
      this.n = n;
      source = new byte[n][];
      keyAt = new int[n];
      keyLength = new int[n];
      valueAt = new int[n];
      valueLength = new int[n];
    }
  }

  /** {@code count} packed pairs ({@link PackedBatch}'s layout) in the first {@code length} bytes of {@code rep}. */
  record Batch(byte[] rep, int length, int count) {}

  /** The pairs of a list of serialized batches, in the order they were written. */
  static final class Records extends PairIndex {
    long batchBytes;

    private Records(int n) {
      super(n);
    }

    static Records parse(List<Batch> batches, int n) {
      Records r = new Records(n);
      int i = 0;
      for (Batch b : batches) {
        byte[] rep = b.rep();
        r.batchBytes += rep.length;
        int at = 0;
        while (at < b.length()) {
          int kl = Varints.get(rep, at);
          at = Varints.skip(rep, at);
          r.source[i] = rep;
          r.keyAt[i] = at;
          r.keyLength[i] = kl;
          at += kl;
          int vl = Varints.get(rep, at);
          at = Varints.skip(rep, at);
          r.valueAt[i] = at;
          r.valueLength[i] = vl;
          at += vl;
          i++;
        }
      }
      if (i != n) {
        throw new IllegalStateException("batches announced " + n + " pairs but held " + i);
      }
      return r;
    }

    /** The pairs in key order; of equal keys only the last written (the sort is stable). */
    Resident resident() {
      int[] order = sortedOrder();
      Resident r = new Resident(n - equalToNext.cardinality(), batchBytes);
      int at = 0;
      for (int i = 0; i < n; i++) {
        if (!equalToNext.get(i)) {
          int from = order[i];
          r.source[at] = source[from];
          r.keyAt[at] = keyAt[from];
          r.keyLength[at] = keyLength[from];
          r.valueAt[at] = valueAt[from];
          r.valueLength[at] = valueLength[from];
          at++;
        }
      }
      return r;
    }

    /**
     * A stable sort in two steps, both kind to the cache. A counting sort on the first two key
     * bytes (a stored key's partition) splits the run into buckets in one pass. Inside a bucket
     * the keys usually share more leading bytes (the high bytes of small numbers), so each key
     * is represented by the 16 bytes that follow the bucket's common prefix, as two longs, and a
     * merge sort moves those longs and the record numbers side by side: most comparisons read
     * adjacent longs, and only keys equal in those 16 bytes reach into the keys themselves.
     * Fills {@link #equalToNext}.
     */
    int[] sortedOrder() {
      int[] bucketOf = new int[n];
      int[] start = new int[BUCKETS + 1];
      for (int i = 0; i < n; i++) {
        int b = bucketOf(i);
        bucketOf[i] = b;
        start[b + 1]++;
      }
      for (int b = 0; b < BUCKETS; b++) {
        start[b + 1] += start[b];
      }
      int[] order = new int[n];
      int[] fill = Arrays.copyOf(start, BUCKETS);
      for (int i = 0; i < n; i++) {
        order[fill[bucketOf[i]]++] = i;
      }
      bucketOf = null;
      Sorter sorter = new Sorter(order);
      for (int b = 0; b < BUCKETS; b++) {
        int from = start[b];
        int to = start[b + 1];
        if (to - from > 1) {
          sorter.sortBucket(from, to);
        }
      }
      return order;
    }

    /** Set at i when the i-th key in sorted order equals the next one. */
    private final BitSet equalToNext = new BitSet();

    /** Buckets in key order: the empty key, then by first byte, a one-byte key before longer ones. */
    private static final int BUCKETS = 1 + 256 * 257;

    private int bucketOf(int i) {
      int length = keyLength[i];
      if (length == 0) {
        return 0;
      }
      int first = source[i][keyAt[i]] & 0xFF;
      return 1 + first * 257 + (length == 1 ? 0 : 1 + (source[i][keyAt[i] + 1] & 0xFF));
    }

    /** Sorts buckets of one order array in place. */
    private final class Sorter {
      final int[] order;
      final long[] high = new long[n];
      final long[] low = new long[n];
      final int[] orderAux = new int[n];
      final long[] highAux = new long[n];
      final long[] lowAux = new long[n];
      int common;

      Sorter(int[] order) {
        this.order = order;
      }

      void sortBucket(int from, int to) {
        common = commonPrefix(from, to);
        for (int k = from; k < to; k++) {
          high[k] = chunkOf(order[k], common);
          low[k] = chunkOf(order[k], common + 8);
        }
        mergeSort(from, to);
        for (int k = from; k + 1 < to; k++) {
          if (high[k] == high[k + 1] && low[k] == low[k + 1] && compareKeys(order[k], order[k + 1], common) == 0) {
            equalToNext.set(k);
          }
        }
      }

      private int commonPrefix(int from, int to) {
        int first = order[from];
        int c = keyLength[first];
        for (int k = from + 1; k < to && c > 0; k++) {
          int r = order[k];
          int limit = Math.min(c, keyLength[r]);
          int mismatch = Arrays.mismatch(source[first], keyAt[first], keyAt[first] + limit,
              source[r], keyAt[r], keyAt[r] + limit);
          c = mismatch < 0 ? limit : mismatch;
        }
        return c;
      }

      /** Compares two entries by their chunks, then by their keys past the common prefix. */
      private int compare(long h1, long l1, int o1, long h2, long l2, int o2) {
        int c = Long.compareUnsigned(h1, h2);
        if (c != 0) {
          return c;
        }
        c = Long.compareUnsigned(l1, l2);
        return c != 0 ? c : compareKeys(o1, o2, common);
      }

      /** Stable: equal keys keep the order they were written in. */
      private void mergeSort(int from, int to) {
        if (to - from <= 16) {
          for (int i = from + 1; i < to; i++) {
            int o = order[i];
            long h = high[i];
            long l = low[i];
            int j = i - 1;
            while (j >= from && compare(high[j], low[j], order[j], h, l, o) > 0) {
              order[j + 1] = order[j];
              high[j + 1] = high[j];
              low[j + 1] = low[j];
              j--;
            }
            order[j + 1] = o;
            high[j + 1] = h;
            low[j + 1] = l;
          }
          return;
        }
        int mid = (from + to) >>> 1;
        mergeSort(from, mid);
        mergeSort(mid, to);
        if (compare(high[mid - 1], low[mid - 1], order[mid - 1], high[mid], low[mid], order[mid]) <= 0) {
          return;
        }
        System.arraycopy(order, from, orderAux, from, to - from);
        System.arraycopy(high, from, highAux, from, to - from);
        System.arraycopy(low, from, lowAux, from, to - from);
        int i = from;
        int j = mid;
        for (int k = from; k < to; k++) {
          boolean left = j >= to || i < mid
              && compare(highAux[i], lowAux[i], orderAux[i], highAux[j], lowAux[j], orderAux[j]) <= 0;
          int take = left ? i++ : j++;
          order[k] = orderAux[take];
          high[k] = highAux[take];
          low[k] = lowAux[take];
        }
      }
    }

    /** The key's 8 bytes from {@code at}, big-endian, zero-padded past its end. */
    private long chunkOf(int r, int at) {
      byte[] b = source[r];
      int base = keyAt[r];
      int length = keyLength[r];
      long p = 0;
      for (int j = at; j < at + 8; j++) {
        p = p << 8 | (j < length ? b[base + j] & 0xFF : 0);
      }
      return p;
    }

    /** Compares two keys that are equal before {@code from}. */
    private int compareKeys(int x, int y, int from) {
      return Arrays.compareUnsigned(source[x], keyAt[x] + from, keyAt[x] + keyLength[x],
          source[y], keyAt[y] + from, keyAt[y] + keyLength[y]);
    }
  }
}
