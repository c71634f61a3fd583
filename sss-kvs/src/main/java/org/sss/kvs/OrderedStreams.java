package org.sss.kvs;

import java.util.ArrayDeque;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.Comparator;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import org.sss.core.keys.StoredKeys;
import org.sss.core.proto.ErrorCode;
import org.sss.core.transport.Varints;

/**
 * A job's output written as it arrives into SST files that do not overlap, one per writer and
 * partition, so that they are ingested straight into the bottom level: no sort, and no
 * compaction afterwards.
 *
 * <h2>Why</h2>
 * Sorted runs ({@link SortedRuns}) each cover the whole key range of the node's partitions,
 * since every run mixes the pairs of every writer. Ingested, they overlap, so they land in level
 * 0, and RocksDB merges them all once level 0 holds eight: for a load of 1 GiB with two copies
 * that merge was a quarter of the CPU the load took. Yet most writers emit their pairs in key order
 * within each partition: a load's map task reads its split front to back and keys each line by
 * its offset, a reduce task walks its partition in key order. Kept apart per writer and
 * partition, their pairs are already sorted, and writers' key ranges rarely overlap (a split's
 * offsets are its own: a map task begins a new stream, {@code ShuffleWriter.startStream}). So
 * each (writer, partition) gets a file of its own, written pair by pair, and a
 * {@link #ingestAll seal} ingests them together: files that share no key in one call, which puts
 * each in the lowest level it fits in (the bottom one, in a table new to the job).
 *
 * <h2>Order of writes</h2>
 * A writer is a stream: the pairs of one shuffle writer on one node, received in the order it
 * wrote them (one connection per node, one ordered lane per connection). A pair that cannot
 * follow its stream's last pair of the partition (a key not greater, or a large value)
 * <em>breaks</em> the stream: its files are ingested at once and it writes through sorted runs
 * from then on, for good (unless forgotten, see {@link #ingestAll}). So a stream's pairs in files
 * are all older than its pairs in runs, and a key written twice keeps its last value as a sorted
 * run would. Pairs of different streams of a job are written concurrently, so no order between
 * them is promised, here or anywhere else in a job. One order between streams is kept outside
 * jobs: runs are stored only after every stream's files ({@code SortedRuns}), since a bulk writer
 * that sends its pairs again does so under a new stream, which breaks where the old stream's file
 * may still hold an older value of the key.
 *
 * <h2>Files built by the writer</h2>
 * A writer of an output of several copies may send its files already built
 * ({@link PartitionFiles}, taken by {@link #take}) instead of its pairs, so that each copy does
 * not build them again: its first pair after them breaks the stream, and a file after any of
 * its pairs is refused.
 *
 * <p>Not thread-safe: its owner calls it under the {@link SortedRuns} lock.
 */
final class OrderedStreams {
  /** No stream: a write that joins the sorted runs. */
  static final long NONE = -1;
  /**
   * Files being written at once per table (each holds a write buffer): past this many, the file
   * opened first is finished, and its lane goes on in a new file when it writes again. A stream
   * is one task's or a few tasks' in a row, so the oldest files are mostly those of tasks that
   * ended.
   */
  static final int MAX_OPEN_FILES = 256;
  /** Broken streams kept past an ingest of every file; beyond, all are forgotten. */
  static final int MAX_KEPT_STREAMS = 1024;
  /** Bytes after which a stream's file of a partition is finished and a new one begun. */
  static final long MAX_FILE_BYTES = 256L << 20;

  private final StoreTable table;
  private final Map<Long, Stream> streams = new HashMap<>();
  /** Files finished (rolled over) and waiting for the next ingest. */
  private final List<Written> finished = new ArrayList<>();
  /** Files in the order they were opened, with their lanes (one finished since is skipped). */
  private final ArrayDeque<Opened> open = new ArrayDeque<>();
  private int openFiles;
  private boolean closed;

  OrderedStreams(StoreTable table) {
    this.table = table;
  }

  /** The id of writer {@code writer} (1 or more) on node {@code node}; {@link #NONE} for writer 0, which names none. */
  static long id(int node, int writer) {
    return writer <= 0 ? NONE : (long) node << 32 | writer;
  }

  /**
   * Writes the packed pairs of {@code block[0, length)} of stream {@code id} into its files, in
   * order, until one cannot follow (the stream then breaks); returns where the pairs not written
   * begin ({@code length} when all were).
   */
  int write(long id, byte[] block, int length) {
    if (closed) {
      return 0;
    }
    Stream s = streams.computeIfAbsent(id, k -> new Stream());
    if (s.broken) {
      return 0;
    }
    if (s.built) {
      breakStream(s); // pairs after the writer's own files: the files land first
      return 0;
    }
    int at = 0;
    while (at < length) {
      int pairAt = at;
      int keyLength = Varints.get(block, at);
      at = Varints.skip(block, at);
      int keyAt = at;
      at += keyLength;
      int valueLength = Varints.get(block, at);
      at = Varints.skip(block, at);
      int valueAt = at;
      at += valueLength;
      if (!append(s, block, keyAt, keyLength, valueAt, valueLength)) {
        breakStream(s);
        return pairAt;
      }
    }
    return length;
  }

  /**
   * Takes a file that stream {@code id}'s writer built of its pairs of one partition
   * ({@link PartitionFiles}), to be ingested with the files finished here. Refused, deleting the
   * file, after any pair of the stream: the writer sends its files first, and pairs only once it
   * broke, so a file after pairs would be one whose order is lost. Returns why it was refused, or
   * null.
   */
  StoreException take(long id, Written w) {
    StoreException refused = null;
    if (closed) {
      refused = new StoreException(ErrorCode.NO_SUCH_TABLE, "table '" + table.name() + "' was dropped or closed");
    } else if (id == NONE) {
      refused = new StoreException(ErrorCode.BAD_REQUEST, "a built file of table '" + table.name() + "' names no stream");
    } else {
      Stream s = streams.computeIfAbsent(id, k -> new Stream());
      if (s.broken || Arrays.stream(s.lanes).anyMatch(lane -> lane != null && lane.last.isSet())) {
        refused = new StoreException(ErrorCode.BAD_REQUEST, "a built file of table '" + table.name() + "' came after"
            + " pairs of its stream (" + (id >>> 32) + "/" + (int) id + "); a writer sends its files first");
      } else {
        s.built = true;
        finished.add(w);
      }
    }
    if (refused != null) {
      w.file().close();
    }
    return refused;
  }

  private boolean append(Stream s, byte[] block, int keyAt, int keyLength, int valueAt, int valueLength) {
    if (valueLength >= StoreTable.LARGE_VALUE_BYTES || keyLength < StoredKeys.PREFIX_BYTES) {
      return false; // a large value goes through the memtable into a blob file (SortedRuns.store)
    }
    Lane lane = s.lane((block[keyAt] & 0xFF) << 8 | block[keyAt + 1] & 0xFF);
    if (!lane.last.follows(block, keyAt, keyLength)) {
      return false;
    }
    if (lane.file != null && lane.fileBytes >= MAX_FILE_BYTES) {
      finish(lane);
    }
    if (lane.file == null) {
      if (openFiles >= MAX_OPEN_FILES) {
        finishOldest();
      }
      lane.open(new RunFile(table, false), block, keyAt, keyLength);
      open.add(new Opened(lane, lane.file));
      openFiles++;
    }
    lane.file.put(block, keyAt, keyLength, valueAt, valueLength);
    lane.fileBytes += keyLength + valueLength;
    lane.last.set(block, keyAt, keyLength);
    return true;
  }

  /** Finishes the lane's file; the lane goes on in a new file when it writes again. */
  private void finish(Lane lane) {
    finished.add(lane.finish());
    openFiles--;
  }

  private void finishOldest() {
    for (Opened o = open.peek(); o != null; o = open.peek()) {
      if (o.lane().file == o.file()) {
        finish(o.lane()); // first: if it fails, the file stays where ingestAll finds it
        open.poll();
        return;
      }
      open.poll();
    }
  }

  /** Ingests the stream's files (with those finished so far) ahead of its later pairs, which go through sorted runs. */
  private void breakStream(Stream s) {
    s.broken = true;
    finishAll(s);
    s.lanes = new Lane[0]; // it writes no file again: its keys are not needed
    ingestFinished();
  }

  /**
   * Ingests every file written so far, finished or open; streams go on in new files. Streams
   * that did not break are forgotten: what they wrote is in the table now, older than anything
   * written later, so one that writes again begins anew. Without that, every writer that ever
   * wrote (a bulk writer's session, a task's stream) would be kept for the table's life. A broken
   * stream is kept (it holds no lane) so that it goes on through sorted runs, unless more than
   * {@link #MAX_KEPT_STREAMS} are.
   */
  void ingestAll() {
    if (openFiles == 0 && finished.isEmpty()) {
      return; // every read of the table comes here (a seal): it must cost nothing when idle
    }
    for (Stream s : streams.values()) {
      finishAll(s);
    }
    open.clear();
    streams.values().removeIf(s -> !s.broken);
    if (streams.size() > MAX_KEPT_STREAMS) {
      streams.clear();
    }
    ingestFinished();
  }

  /** Whether no file is open or waiting for an ingest. */
  boolean isIdle() {
    return openFiles == 0 && finished.isEmpty();
  }

  /** Forgets stream {@code id} once it has no file left (a bulk writer's session that ended). */
  void forget(long id) {
    Stream s = streams.get(id);
    if (s != null && Arrays.stream(s.lanes).allMatch(lane -> lane == null || lane.file == null)) {
      streams.remove(id);
    }
  }

  private void finishAll(Stream s) {
    for (Lane lane : s.lanes) {
      if (lane != null && lane.file != null) {
        finish(lane);
      }
    }
  }

  private void ingestFinished() {
    List<Written> files = new ArrayList<>(finished);
    finished.clear();
    try {
      List<List<RunFile>> layers = layers(files);
      for (List<RunFile> layer : layers) {
        RunFile.awaitLevelZero(table); // a layer over keys the table holds lands in level 0
        RunFile.ingestTogether(table, layer);
      }
    } finally {
      for (Written w : files) {
        w.file().close(); // those not ingested, after a failure
      }
    }
  }

  /**
   * {@code files} in layers of files that share no key, fewest layers first (a sweep in order of
   * first keys, each file into the first layer it follows): each layer is one ingest, the first
   * into the lowest levels. Files of one lane never overlap; files of different streams overlap
   * only where writers' keys do, and between streams no order is promised.
   */
  static List<List<RunFile>> layers(List<Written> files) {
    List<Written> sorted = new ArrayList<>(files);
    sorted.sort(Comparator.comparing(Written::first, Arrays::compareUnsigned));
    List<List<RunFile>> layers = new ArrayList<>();
    List<byte[]> lastOfLayer = new ArrayList<>();
    for (Written w : sorted) {
      int layer = 0;
      while (layer < layers.size() && Arrays.compareUnsigned(w.first(), lastOfLayer.get(layer)) <= 0) {
        layer++;
      }
      if (layer == layers.size()) {
        layers.add(new ArrayList<>());
        lastOfLayer.add(null);
      }
      layers.get(layer).add(w.file());
      lastOfLayer.set(layer, w.last());
    }
    return layers;
  }

  /** Forgets every file (the table is dropped or closing); later writes go through sorted runs. */
  void close() {
    closed = true;
    for (Stream s : streams.values()) {
      for (Lane lane : s.lanes) {
        if (lane != null && lane.file != null) {
          lane.file.close();
          lane.file = null;
        }
      }
    }
    for (Written w : finished) {
      w.file().close();
    }
    finished.clear();
    streams.clear();
    open.clear();
    openFiles = 0;
  }

  /** Pairs written into files and not ingested yet. */
  long pendingPairs() {
    long n = 0;
    for (Written w : finished) {
      n += w.file().pairs();
    }
    for (Stream s : streams.values()) {
      for (Lane lane : s.lanes) {
        n += lane == null || lane.file == null ? 0 : lane.file.pairs();
      }
    }
    return n;
  }

  /** Bytes of keys and values written into files and not ingested yet. */
  long pendingBytes() {
    long n = 0;
    for (Written w : finished) {
      n += w.bytes();
    }
    for (Stream s : streams.values()) {
      for (Lane lane : s.lanes) {
        n += lane == null || lane.file == null ? 0 : lane.fileBytes;
      }
    }
    return n;
  }

  /** One writer's pairs, per partition. */
  private static final class Stream {
    /** By partition (a stored key's first two bytes); grown to the highest partition written. */
    Lane[] lanes = new Lane[0];
    boolean broken;
    /** Whether its writer sent files it built ({@link #take}): its first pair is its break. */
    boolean built;

    /** The lane of {@code partition}, made on first use: an array lookup per pair, no boxing. */
    Lane lane(int partition) {
      if (partition >= lanes.length) {
        lanes = Arrays.copyOf(lanes, Math.max(partition + 1, lanes.length * 2));
      }
      Lane lane = lanes[partition];
      if (lane == null) {
        lane = lanes[partition] = new Lane();
      }
      return lane;
    }
  }

  /** One writer's pairs of one partition: the file they go to now, and the last key written. */
  private static final class Lane {
    RunFile file;
    long fileBytes;
    byte[] first;
    final LastKey last = new LastKey();

    void open(RunFile f, byte[] block, int keyAt, int keyLength) {
      file = f;
      fileBytes = 0;
      first = Arrays.copyOfRange(block, keyAt, keyAt + keyLength);
    }

    /** The file, written to its end, with its key range; the lane goes on in a new file, after its last key. */
    Written finish() {
      file.finishWriting(); // closes the file and frees its write buffer now, not at the ingest
      Written w = new Written(file, first, last.copy(), fileBytes);
      file = null;
      return w;
    }
  }

  /** A file a lane opened. */
  private record Opened(Lane lane, RunFile file) {}

  /** A file, the first and last keys in it, and the bytes of its keys and values. */
  record Written(RunFile file, byte[] first, byte[] last, long bytes) {}
}
