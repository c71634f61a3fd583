package org.sss.server.execution;

import java.io.IOException;
import java.io.OutputStream;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardOpenOption;
import org.sss.core.api.Emitter;
import org.sss.core.api.Serde;
import org.sss.core.io.TextOutputDir;
import org.sss.core.proto.DataType;
import org.sss.core.proto.ErrorCode;

/**
 * A last stage's output as text files: each task of the runner writes its own
 * {@code part-m-NNNNN} or {@code part-r-NNNNN} below the job attempt's directory, one
 * {@code KEY<TAB>VALUE} line per emitted pair, printed by the stage's output types as
 * {@code sss dump} prints them ({@link TextOutputDir#print}). Nothing is shuffled: a pair goes
 * to the file of the task that emitted it, as a Hadoop task writes its own part file, so a
 * reduce task's file is in key order. A combiner is not run (Hadoop runs none without a shuffle).
 *
 * <p>The files are written through the page cache and not synced, as Hadoop's and Spark's part
 * files are: the job's {@code _SUCCESS} says the output is whole, not that it reached the disk.
 */
final class TextPartOutput<K, V> implements TaskOutput<K, V> {
  private static final int BUFFER_BYTES = 1 << 20;

  private final StageContext stage;
  private final boolean map;
  private final Path attemptDir;
  private final DataType keyType;
  private final DataType valueType;
  private final BatchedCount recordsOut;
  private final Emitter<K, V> emitter = this::emit;
  private LineBuffer out;
  private Path file;

  TextPartOutput(StageContext stage, boolean map) {
    this.stage = stage;
    this.map = map;
    this.attemptDir = TextOutputDir.attemptDir(Path.of(stage.spec.getOutputDir()), stage.jobId);
    Serde<K> k = stage.serde(stage.spec.getOutputKeySerde());
    Serde<V> v = stage.serde(stage.spec.getOutputValueSerde());
    this.keyType = k.dataType();
    this.valueType = v.dataType();
    this.recordsOut = new BatchedCount(stage.recordsOut);
  }

  @Override
  public Emitter<K, V> emitter(int task) {
    close();
    file = attemptDir.resolve(TextOutputDir.partName(map, task));
    try {
      // CREATE_NEW in a directory the client made: a job aborted meanwhile (its directory
      // deleted) writes nothing, and two attempts never share a file
      out = new LineBuffer(Files.newOutputStream(file, StandardOpenOption.CREATE_NEW, StandardOpenOption.WRITE));
    } catch (IOException e) {
      throw new WriteFailed(ErrorCode.NO_SUCH_FILE, "node " + stage.nodeId + " cannot create "
          + file + ": " + e, e);
    }
    return emitter;
  }

  private void emit(K k, V v) {
    if (stage.stopping()) {
      throw new StageAborted();
    }
    recordsOut.increment();
    try {
      // as Hadoop's TextOutputFormat: a null key or value is left out with its tab; both, the line
      if (k == null && v == null) {
        return;
      }
      if (k != null) {
        print(k, keyType);
      }
      if (k != null && v != null) {
        out.write('\t');
      }
      if (v != null) {
        print(v, valueType);
      }
      out.write('\n');
      out.lines++;
    } catch (IOException e) {
      throw new WriteFailed(ErrorCode.STORAGE_ERROR, "node " + stage.nodeId + " failed writing "
          + file + ": " + e, e);
    }
  }

  private void print(Object o, DataType type) throws IOException {
    if (o instanceof Long l) {
      out.writeDecimal(l); // the common key of a text file's lines: no String on the way
    } else {
      TextOutputDir.print(o, type, out);
    }
  }

  @Override
  public void taskDone() {
    recordsOut.flush();
    close();
  }

  @Override
  public void finish() {
    taskDone();
  }

  @Override
  public void discard() {
    recordsOut.flush();
    try {
      if (out != null) {
        out.close();
      }
    } catch (IOException ignored) {
      // the stage failed already; its files go with the attempt's directory
    }
    out = null;
  }

  private void close() {
    if (out == null) {
      return;
    }
    LineBuffer o = out;
    out = null;
    try {
      o.close();
      // the stage's "written" figures: lines and bytes in its files, as a shuffle's are pairs stored
      stage.shuffle.pairsShuffled.addAndGet(o.lines);
      stage.shuffle.bytesShuffled.addAndGet(o.bytes);
    } catch (IOException e) {
      throw new WriteFailed(ErrorCode.STORAGE_ERROR, "node " + stage.nodeId + " failed writing "
          + file + ": " + e, e);
    }
  }

  /** A part file could not be written: the node's failure (a full disk, a directory gone), not the user code's. */
  static final class WriteFailed extends RuntimeException {
    final ErrorCode code;

    WriteFailed(ErrorCode code, String message, Throwable cause) {
      super(message, cause);
      this.code = code;
    }
  }

  /**
   * A write buffer for one thread: {@link java.io.BufferedOutputStream} locks on every write,
   * four times a pair here.
   */
  private static final class LineBuffer extends OutputStream {
    private final OutputStream file;
    private final byte[] buf = new byte[BUFFER_BYTES];
    private int n;
    long lines;
    long bytes;

    LineBuffer(OutputStream file) {
      this.file = file;
    }

    @Override
    public void write(int b) throws IOException {
      if (n == buf.length) {
        drain();
      }
      buf[n++] = (byte) b;
    }

    @Override
    public void write(byte[] b, int off, int len) throws IOException {
      if (len > buf.length - n) {
        drain();
        if (len > buf.length) {
          file.write(b, off, len);
          bytes += len;
          return;
        }
      }
      System.arraycopy(b, off, buf, n, len);
      n += len;
    }

    /** {@code Long.toString(v)}'s bytes. */
    void writeDecimal(long v) throws IOException {
      if (v == Long.MIN_VALUE) {
        write(Long.toString(v).getBytes(StandardCharsets.US_ASCII));
        return;
      }
      if (buf.length - n < 20) {
        drain();
      }
      if (v < 0) {
        buf[n++] = '-';
        v = -v;
      }
      int digits = 1;
      for (long t = v; t >= 10; t /= 10) {
        digits++;
      }
      for (int i = n + digits - 1; i >= n; i--) {
        buf[i] = (byte) ('0' + v % 10);
        v /= 10;
      }
      n += digits;
    }

    private void drain() throws IOException {
      file.write(buf, 0, n);
      bytes += n;
      n = 0;
    }

    @Override
    public void close() throws IOException {
      try {
        drain();
      } finally {
        file.close();
      }
    }
  }
}
