package org.sss.core.io;

import org.sss.core.api.Emitter;
import org.sss.core.api.Mapper;
import org.sss.core.api.TaskContext;

/**
 * Keys each line of a stage over several text files by its byte offset in the files'
 * concatenation, in the order the job lists them, instead of in its own file: the keys of a
 * directory loaded into a table, where offsets in each file would collide from one file to the
 * next (every file has a line at offset 0) and one line would replace another. A single file's
 * keys do not change (its base is 0), and the table's key order is the concatenation's.
 *
 * <p>Each file's base (the bytes of the files before it) and size come in the job's
 * configuration under {@link #KEY_PREFIX} and the file's path, from the listing the client made
 * when it submitted the job. A file that listing does not name, or a line beyond the size it
 * gives (a file that grew since), fails the task: its keys would be another file's.
 */
public final class ConcatenatedOffsets<V> implements Mapper<Long, V, Long, V> {
  /** Followed by a file's path: its base and size, {@code BASE,SIZE}. */
  public static final String KEY_PREFIX = "sss.concatenation:";

  private String file;
  private long base;
  private long size;

  /** The configuration value of a file at {@code base} of {@code size} bytes. */
  public static String placement(long base, long size) {
    return base + "," + size;
  }

  @Override
  public void setup(TaskContext context) {
    file = context.inputFile();
    if (file == null) {
      throw new IllegalStateException(getClass().getSimpleName() + " runs in a stage over text files only");
    }
    String placed = context.config().get(KEY_PREFIX + file);
    if (placed == null) {
      throw new IllegalStateException("file " + file + " was not among the files listed when the job was"
          + " submitted (added since?), so its lines have no place in their concatenation");
    }
    int comma = placed.indexOf(',');
    base = Long.parseLong(placed.substring(0, comma));
    size = Long.parseLong(placed.substring(comma + 1));
  }

  @Override
  public void map(Long offset, V line, Emitter<Long, V> out) {
    if (offset >= size) {
      throw new IllegalStateException("file " + file + " has a line at byte " + offset + ", beyond the " + size
          + " bytes it had when the job was submitted: it changed during the job");
    }
    out.emit(base + offset, line);
  }
}
