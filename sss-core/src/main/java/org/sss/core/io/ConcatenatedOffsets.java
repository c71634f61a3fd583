package org.sss.core.io;

import org.sss.core.api.Emitter;
import org.sss.core.api.Mapper;
import org.sss.core.api.TaskContext;

/**
 * Keys each line of a stage over several text files by its byte offset in the files'
 * concatenation, in the order the job lists them ({@link TaskContext#inputFileOffset}), instead
 * of in its own file: the keys of a directory loaded into a table, where offsets in each file
 * would collide from one file to the next (every file has a line at offset 0) and one line would
 * replace another. A single file's keys do not change (it starts at 0), and the table's key order
 * is the concatenation's. The offsets come with the splits from the same listing of the files,
 * and a node reads a split only if its file still has the size listed.
 */
public final class ConcatenatedOffsets<V> implements Mapper<Long, V, Long, V> {
  private long fileOffset;

  @Override
  public void setup(TaskContext context) {
    fileOffset = context.inputFileOffset();
    if (fileOffset < 0) {
      throw new IllegalStateException(getClass().getSimpleName() + " runs in a stage over text files only");
    }
  }

  @Override
  public void map(Long offset, V line, Emitter<Long, V> out) {
    out.emit(fileOffset + offset, line);
  }
}
