package org.sss.kvs;

import java.io.IOException;
import java.nio.ByteBuffer;
import java.nio.channels.FileChannel;
import java.nio.file.StandardOpenOption;
import java.util.ArrayDeque;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import org.sss.core.proto.ErrorCode;

/**
 * One writer's pairs of a replicated output built into SST files at the writer, a file per
 * partition, each sent whole to every copy of its partition ({@link BuiltFile}).
 *
 * <h2>Why</h2>
 * A receiving table stores a stream's pairs that come in key order as SST files of its own
 * ({@link OrderedStreams}). With two copies, both copies built and compressed the same file
 * from the same pairs, on cores that every node of a machine shares: storing was half of a
 * load's CPU, and the second copy doubled it. Built once here, the file costs one build and
 * travels compressed; each copy only writes it to disk and ingests it when the table is sealed.
 *
 * <h2>Order</h2>
 * A partition's pairs must come in ascending key order, as in {@link OrderedStreams}: a pair
 * that does not follow, or a large value, is refused ({@link #add} returns false), and the
 * writer then sends every file it has ({@link #finishAll}) and its later pairs as pairs. A
 * receiver takes the stream's first pair after its files as its break, so the files land first.
 *
 * <p>Not thread-safe: one writer's.
 */
public final class PartitionFiles implements AutoCloseable {
  /**
   * Bytes of keys and values a file holds at most: a file travels in one frame, and up to
   * {@code StageShuffle.IN_FLIGHT_PER_PEER} frames are in flight per destination (16 MiB then,
   * where batches of pairs take 4), so this bounds their memory.
   */
  public static final long MAX_FILE_BYTES = 4L << 20;
  /**
   * Files being written at once (each holds a write buffer of about 200 KiB): past this many,
   * the one opened first is sent. A writer writes to every partition of the cluster, so with
   * keys spread over more partitions than this, files would be sent a few pairs each: a writer
   * then sends pairs instead ({@link #worthBuilding}).
   */
  public static final int MAX_OPEN_FILES = 64;

  private final StoreTable table;
  /** Bytes of keys and values a file holds at most. */
  private final long maxFileBytes;
  /** By partition; grown to the highest partition written. */
  private Lane[] lanes = new Lane[0];
  private final ArrayDeque<Lane> opened = new ArrayDeque<>();
  /** Files finished and not taken yet ({@link #takeFinished}). */
  private final ArrayDeque<BuiltFile> ready = new ArrayDeque<>();
  private boolean closed;

  /**
   * Files built for {@code table}, this node's part of the output (its options are every
   * copy's), of at most {@code maxFileBytes} bytes of keys and values each: a quarter of the
   * frame they travel in at most, since an SST file of tiny pairs takes a few times their bytes
   * uncompressed (varints, filter and index per key).
   */
  public PartitionFiles(StoreTable table, long maxFileBytes) {
    this.table = table;
    this.maxFileBytes = Math.min(MAX_FILE_BYTES, maxFileBytes);
  }

  /** Whether a writer to {@code partitions} partitions builds files: as many as may be open at once. */
  public static boolean worthBuilding(int partitions) {
    return partitions <= MAX_OPEN_FILES;
  }

  /** The most bytes of keys and values a file holds that travels in frames of at most {@code frameBytes}. */
  public static long maxFileBytesFor(long frameBytes) {
    return Math.min(MAX_FILE_BYTES, frameBytes / 4);
  }

  /**
   * Adds a pair of {@code partition} whose stored key is {@code storedKey[0, keyLength)}; false,
   * adding nothing, when it cannot follow the partition's last pair (a key not greater, or a
   * large value): the writer's pairs must then go as pairs.
   */
  public boolean add(int partition, byte[] storedKey, int keyLength, byte[] value) {
    if (closed) {
      throw new IllegalStateException("partition files already closed");
    }
    long pairBytes = keyLength + (long) value.length;
    if (value.length >= StoreTable.LARGE_VALUE_BYTES || pairBytes > maxFileBytes || keyLength > maxFileBytes / 8) {
      // a large value goes through a memtable into a blob file; a long key travels in the frame's
      // header twice (the file's first and last keys) and in the file's index
      return false;
    }
    Lane lane = lane(partition);
    if (!lane.last.follows(storedKey, 0, keyLength)) {
      return false;
    }
    if (lane.file != null && lane.bytes + pairBytes > maxFileBytes) {
      opened.remove(lane);
      ready.add(lane.finish()); // the partition goes on in a new file, after its last key
    }
    if (lane.file == null) {
      lane.file = new RunFile(table, false);
      lane.first = Arrays.copyOf(storedKey, keyLength);
      lane.bytes = 0;
      opened.add(lane);
    }
    lane.file.put(storedKey, keyLength, value);
    lane.bytes += keyLength + value.length;
    lane.last.set(storedKey, 0, keyLength);
    return true;
  }

  /**
   * A file finished since the last call: one full (the next pair of its partition would not fit),
   * or the oldest open one when more than {@link #MAX_OPEN_FILES} are open; null when none is.
   */
  public BuiltFile takeFinished() {
    if (ready.isEmpty() && opened.size() > MAX_OPEN_FILES) {
      return opened.poll().finish();
    }
    return ready.poll();
  }

  /** Every file with pairs in it, finished; the writer's later pairs go to new files. */
  public List<BuiltFile> finishAll() {
    List<BuiltFile> files = new ArrayList<>(ready);
    ready.clear();
    opened.clear();
    try {
      for (int p = 0; p < lanes.length; p++) {
        if (lanes[p] != null && lanes[p].file != null) {
          files.add(lanes[p].finish());
        }
      }
    } catch (RuntimeException e) {
      files.forEach(BuiltFile::close);
      throw e;
    }
    return files;
  }

  /** Deletes every file not finished yet (after a failure). */
  @Override
  public void close() {
    closed = true;
    for (BuiltFile f : ready) {
      f.close();
    }
    ready.clear();
    for (Lane lane : lanes) {
      if (lane != null && lane.file != null) {
        lane.file.close();
        lane.file = null;
      }
    }
    opened.clear();
  }

  private Lane lane(int partition) {
    if (partition >= lanes.length) {
      lanes = Arrays.copyOf(lanes, Math.max(partition + 1, lanes.length * 2));
    }
    Lane lane = lanes[partition];
    if (lane == null) {
      lane = lanes[partition] = new Lane(partition);
    }
    return lane;
  }

  /** One partition's file being written, and the last key written to the partition. */
  private final class Lane {
    final int partition;
    final LastKey last = new LastKey();
    RunFile file;
    long bytes;
    byte[] first;

    Lane(int partition) {
      this.partition = partition;
    }

    BuiltFile finish() {
      RunFile f = file;
      file = null;
      try {
        f.finishWriting();
      } catch (RuntimeException e) {
        f.close();
        throw e;
      }
      return new BuiltFile(table, partition, f, first, last.copy(), bytes);
    }
  }

  /**
   * A finished SST file of one partition's pairs: sent to the partition's other copies
   * ({@link #readAll}) and kept in this node's table when it holds a copy too ({@link #keep}).
   * Closing it deletes it unless kept.
   */
  public static final class BuiltFile implements AutoCloseable {
    private final StoreTable table;
    private final int partition;
    private final RunFile file;
    private final byte[] first;
    private final byte[] last;
    private final long bytes;
    private boolean kept;

    BuiltFile(StoreTable table, int partition, RunFile file, byte[] first, byte[] last, long bytes) {
      this.table = table;
      this.partition = partition;
      this.file = file;
      this.first = first;
      this.last = last;
      this.bytes = bytes;
    }

    public int partition() {
      return partition;
    }

    public long pairs() {
      return file.pairs();
    }

    /** Bytes of keys and values in the file. */
    public long pairBytes() {
      return bytes;
    }

    public byte[] firstKey() {
      return first.clone();
    }

    public byte[] lastKey() {
      return last.clone();
    }

    /** The file's size on disk. */
    public long size() {
      try {
        return java.nio.file.Files.size(file.path());
      } catch (IOException e) {
        throw new StoreException(ErrorCode.STORAGE_ERROR, "cannot read a built file of table '" + table.name() + "': "
            + e.getMessage(), e);
      }
    }

    /** Reads the whole file into {@code into} (which has {@link #size} bytes left). */
    public void readAll(ByteBuffer into) {
      try (FileChannel ch = FileChannel.open(file.path(), StandardOpenOption.READ)) {
        while (into.hasRemaining()) {
          if (ch.read(into) < 0) {
            throw new IOException("the file ended early");
          }
        }
      } catch (IOException e) {
        throw new StoreException(ErrorCode.STORAGE_ERROR, "cannot read a built file of table '" + table.name() + "': "
            + e.getMessage(), e);
      }
    }

    /**
     * Makes the file this node's copy of the pairs, as stream {@code stream}'s
     * ({@link PackedBatch#stream}): ingested with the stream's other files when the table is
     * sealed, before the stream's later pairs.
     */
    public void keep(long stream) {
      table.takeBuiltFile(stream, new OrderedStreams.Written(file, first, last, bytes));
      kept = true;
    }

    @Override
    public void close() {
      if (!kept) {
        file.close();
      }
    }
  }
}
