package org.sss.server.execution;

import java.io.BufferedOutputStream;
import java.io.IOException;
import java.io.OutputStream;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardOpenOption;
import org.sss.core.api.Emitter;
import org.sss.core.api.Serde;
import org.sss.core.io.TextOutputDir;
import org.sss.core.proto.DataType;

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
  private OutputStream out;
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
      out = new BufferedOutputStream(Files.newOutputStream(file, StandardOpenOption.CREATE_NEW,
          StandardOpenOption.WRITE), BUFFER_BYTES);
    } catch (IOException e) {
      throw new WriteFailed("node " + stage.nodeId + " cannot write " + file + ": " + e, e);
    }
    return emitter;
  }

  private void emit(K k, V v) {
    if (stage.stopping()) {
      throw new StageAborted();
    }
    recordsOut.increment();
    try {
      TextOutputDir.print(k, keyType, out);
      out.write('\t');
      TextOutputDir.print(v, valueType, out);
      out.write('\n');
    } catch (IOException e) {
      throw new WriteFailed("node " + stage.nodeId + " failed writing " + file + ": " + e, e);
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
    OutputStream o = out;
    out = null;
    try {
      o.close();
    } catch (IOException e) {
      throw new WriteFailed("node " + stage.nodeId + " failed writing " + file + ": " + e, e);
    }
  }

  /** A part file could not be written: the node's failure (a full disk, a directory gone), not the user code's. */
  static final class WriteFailed extends RuntimeException {
    WriteFailed(String message, Throwable cause) {
      super(message, cause);
    }
  }
}
