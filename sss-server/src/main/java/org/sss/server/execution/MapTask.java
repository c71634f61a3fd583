package org.sss.server.execution;

import java.io.IOException;
import java.nio.channels.FileChannel;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.ArrayBlockingQueue;
import java.util.concurrent.BlockingQueue;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.TimeUnit;
import org.sss.core.api.Emitter;
import org.sss.core.api.Mapper;
import org.sss.core.api.Serde;
import org.sss.core.api.Serdes;
import org.sss.core.io.TextSplitReader;
import org.sss.core.keys.KeyCodec;
import org.sss.core.keys.StoredKeys;
import org.sss.core.proto.ErrorCode;
import org.sss.core.proto.FileSplit;
import org.sss.kvs.KeyRanges;
import org.sss.kvs.StoreCursor;
import org.sss.kvs.StoreException;

/**
 * Maps one partition of the input table, or one split of the input files, into its runner's
 * {@link MapOutput}.
 *
 * <h2>Threads</h2>
 * A reader thread scans the partition into chunks and hands them over a bounded queue
 * ({@link #CHUNKS_AHEAD} chunks) to the task thread, which decodes pairs, calls the mapper,
 * and feeds the shuffle, whose sends complete on network threads. Reading, computing and
 * sending thus overlap, and neither side can run ahead by more than a few chunks.
 */
final class MapTask<KI, VI, KO, VO> implements Runnable {
  static final int CHUNKS_AHEAD = 2;
  /** Values a task's combiner may hold before it flushes (about 50 MB of small objects). */
  static final long COMBINE_BUDGET = 1_000_000;
  private static final InputChunk END = new InputChunk(true);

  private final StageContext stage;
  private final int partition;
  private final ExecutorService readers;
  private final TaskOutput<KO, VO> output;

  /** A task emitting into {@code output}, its runner's (see {@link MapOutput}). */
  MapTask(StageContext stage, int partition, ExecutorService readers, TaskOutput<KO, VO> output) {
    this.stage = stage;
    this.partition = partition;
    this.readers = readers;
    this.output = output;
  }

  @Override
  @SuppressWarnings("unchecked")
  public void run() {
    var spec = stage.spec;
    Mapper<KI, VI, KO, VO> mapper;
    Serde<KI> inKey;
    Serde<VI> inValue;
    try {
      mapper = UserClasses.create(stage.loader, spec.getFunctionClass(), Mapper.class);
      inKey = stage.serde(spec.getInputKeySerde());
      inValue = stage.serde(spec.getInputValueSerde());
    } catch (RuntimeException e) {
      throw new UserCodeException(stage.where("map", partition), e);
    }
    BatchedCount recordsIn = new BatchedCount(stage.recordsIn);
    Emitter<KO, VO> emitter = output.emitter(partition);
    BlockingQueue<InputChunk> chunks = new ArrayBlockingQueue<>(CHUNKS_AHEAD);
    Serde<VI> lineSerde = inValue;
    var reading = readers.submit(() -> read(chunks, lineSerde));
    boolean ok = false;
    try {
      mapper.setup(stage.taskContext(partition));
      while (true) {
        InputChunk chunk = chunks.poll(200, TimeUnit.MILLISECONDS);
        if (stage.stopping()) {
          throw new StageAborted();
        }
        if (chunk == null && reading.isDone()) {
          chunk = chunks.poll(); // the reader may have queued its last chunks after the poll above
          if (chunk == null) {
            reading.get(); // the reader ended without its last chunk: it failed, say why
            throw new ReadFailed("reading " + input() + " ended early on node " + stage.nodeId, null);
          }
        }
        if (chunk == null) {
          continue;
        }
        if (chunk == END) {
          break;
        }
        for (int i = 0; i < chunk.size; i++) {
          recordsIn.increment();
          if (chunk.decoded) {
            mapper.map((KI) chunk.keys[i], (VI) chunk.values[i], emitter);
          } else {
            mapper.map(inKey.decodeKey((byte[]) chunk.keys[i]), inValue.decodeValue((byte[]) chunk.values[i]), emitter);
          }
        }
      }
      reading.get();
      mapper.cleanup(emitter);
      ok = true;
    } catch (StageAborted e) {
      throw e;
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
      throw new StageAborted();
    } catch (ReadFailed | TextPartOutput.WriteFailed e) {
      throw e;
    } catch (ExecutionException e) {
      if (e.getCause() instanceof StoreException s && s.code() == ErrorCode.NO_SUCH_FILE) {
        throw s; // a file the node cannot read: its code says so, and its message names file and node
      }
      throw new ReadFailed("reading " + input() + " failed on node " + stage.nodeId + ": "
          + e.getCause().getMessage(), e.getCause());
    } catch (Throwable e) {
      if (stage.aborted.get()) {
        throw new StageAborted(); // user code that wrapped the abort's interrupt: not its own failure
      }
      throw new UserCodeException(stage.where("map", partition), e);
    } finally {
      recordsIn.flush();
      if (!ok) {
        reading.cancel(true);
      }
      try {
        output.taskDone();
      } catch (RuntimeException e) {
        if (ok) {
          throw e;
        } // else the task's own failure is the one to report
      }
    }
  }

  /** The input could not be read: the engine's failure, not the mapper's. */
  static final class ReadFailed extends RuntimeException {
    ReadFailed(String message, Throwable cause) {
      super(message, cause);
    }
  }

  /** What the task reads, for messages. */
  private String input() {
    if (stage.input == null) {
      var split = stage.spec.getInputSplits(partition);
      return "split " + partition + " of " + split.getPath() + " (bytes " + split.getStart() + " to "
          + (split.getStart() + split.getLength()) + ")";
    }
    return "partition " + partition + " of table '" + stage.spec.getInputTable() + "'";
  }

  /** The reader: hands the input's pairs over in chunks until done or the stage stops. */
  private Void read(BlockingQueue<InputChunk> chunks, Serde<VI> lineSerde) throws InterruptedException, IOException {
    return stage.input == null ? readSplit(chunks, lineSerde) : readPartition(chunks);
  }

  private Void readPartition(BlockingQueue<InputChunk> chunks) throws InterruptedException {
    List<byte[][]> ranges = new ArrayList<>();
    ranges.add(KeyRanges.partition(partition, new byte[0]));
    boolean multiValued = stage.spec.getInputMultiValued();
    try (StoreCursor c = stage.input.scanRanges(ranges, false)) {
      InputChunk chunk = new InputChunk(false);
      for (; c.valid(); c.next()) {
        byte[] k = StoredKeys.encodedKey(c.key(), multiValued);
        byte[] v = c.value();
        if (chunk.add(k, v, k.length + v.length)) {
          if (!offer(chunks, chunk)) {
            return null;
          }
          chunk = new InputChunk(false);
        }
      }
      if (chunk.size > 0 && !offer(chunks, chunk)) {
        return null;
      }
      offer(chunks, END);
    }
    return null;
  }

  /**
   * Reads this task's split of a text file: (byte offset, line) pairs, decoded when the lines'
   * serde is a built-in one (see {@link InputChunk}).
   */
  private Void readSplit(BlockingQueue<InputChunk> chunks, Serde<VI> lineSerde) throws InterruptedException, IOException {
    FileSplit split = stage.spec.getInputSplits(partition);
    try (FileChannel file = InputFiles.open(split, stage.nodeId)) {
      // a line is a value: at most what the node takes as one
      TextSplitReader lines = new TextSplitReader(file, split.getStart(), split.getLength(), split.getFileSize(),
          stage.shuffle.maxValueBytes);
      boolean strings = lineSerde instanceof Serdes.StringSerde;
      // the built-in serdes decode here; a job's own serde decodes on the task's thread, where
      // its failure is reported as the user's code's (USER_CODE_FAILED, naming the task)
      boolean decode = strings || lineSerde instanceof Serdes.BytesSerde || lineSerde instanceof Serdes.StringBytesSerde;
      InputChunk chunk = new InputChunk(decode);
      while (lines.next()) {
        Object key = decode ? (Object) lines.offset() : KeyCodec.encodeLong(lines.offset());
        Object line = strings ? lines.lineString() : decode ? lineSerde.decodeValue(lines.line()) : lines.line();
        if (chunk.add(key, line, Long.BYTES + lines.lineLength())) {
          if (!offer(chunks, chunk)) {
            return null;
          }
          chunk = new InputChunk(decode);
        }
      }
      if (chunk.size > 0 && !offer(chunks, chunk)) {
        return null;
      }
      offer(chunks, END);
    }
    return null;
  }

  private boolean offer(BlockingQueue<InputChunk> chunks, InputChunk chunk) throws InterruptedException {
    while (!chunks.offer(chunk, 200, TimeUnit.MILLISECONDS)) {
      if (stage.stopping()) {
        return false;
      }
    }
    return true;
  }
}
