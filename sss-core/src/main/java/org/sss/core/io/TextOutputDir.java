package org.sss.core.io;

import java.io.IOException;
import java.io.OutputStream;
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import org.sss.core.keys.KeyType;
import org.sss.core.proto.DataType;

/**
 * The layout of a job's output written as text files, as Hadoop's {@code FileOutputCommitter}
 * lays it out, so that tools reading Hadoop's output read ours: one {@code part-m-NNNNN} (map)
 * or {@code part-r-NNNNN} (reduce) file per task, {@code KEY<TAB>VALUE} lines, and an empty
 * {@code _SUCCESS} once the job committed. Tasks write below {@code _temporary/<job id>/}; the
 * commit moves their files up, so a reader never sees part of a job's output without
 * {@code _SUCCESS}, and an attempt run again after a lost node writes a directory of its own.
 * The client and every node share this class, so they agree on every name.
 */
public final class TextOutputDir {
  public static final String TEMPORARY = "_temporary";
  public static final String SUCCESS = "_SUCCESS";

  private TextOutputDir() {}

  /** Where the tasks of one job attempt write their part files. */
  public static Path attemptDir(Path dir, String jobId) {
    return dir.resolve(TEMPORARY).resolve(jobId);
  }

  /** The file of one task: its index is its partition (a table's) or its split (files'). */
  public static String partName(boolean map, int task) {
    return String.format("part-%s-%05d", map ? "m" : "r", task);
  }

  /**
   * Writes a key or a value as {@code sss dump} prints a table of its type: text as its bytes
   * (also bytes that are not UTF-8, which a table's string values may hold), bytes as text when
   * they are UTF-8 and as {@code 0x} and hex otherwise, opaque bytes as hex; any other object
   * (numbers, a user's type) by {@code toString()}, as Hadoop's {@code TextOutputFormat} does.
   */
  public static void print(Object o, DataType type, OutputStream out) throws IOException {
    if (o instanceof byte[] b) {
      if (type == DataType.STRING) {
        out.write(b);
      } else {
        out.write(KeyType.printBytes(type, b).getBytes(StandardCharsets.UTF_8));
      }
    } else if (o instanceof String s) {
      out.write(s.getBytes(StandardCharsets.UTF_8));
    } else {
      out.write(String.valueOf(o).getBytes(StandardCharsets.UTF_8));
    }
  }
}
