package org.sss.server.execution;

import java.io.IOException;
import java.nio.channels.FileChannel;
import java.nio.file.NoSuchFileException;
import java.nio.file.Path;
import java.nio.file.StandardOpenOption;
import org.sss.core.proto.ErrorCode;
import org.sss.core.proto.FileSplit;
import org.sss.kvs.StoreException;

/**
 * Opens the file of a job's input split. A job over files needs every node to see the same
 * file at the same path (a shared or copied file system, as Hadoop and Spark need); a node that
 * cannot, or sees a file of another size, refuses with {@code NO_SUCH_FILE}, which a client can
 * take as "send the data from here instead".
 */
final class InputFiles {
  private InputFiles() {}

  static FileChannel open(FileSplit split, int nodeId) {
    Path path = Path.of(split.getPath());
    FileChannel file;
    try {
      file = FileChannel.open(path, StandardOpenOption.READ);
    } catch (NoSuchFileException e) {
      throw refused(split, nodeId, "no such file");
    } catch (IOException | SecurityException e) {
      throw refused(split, nodeId, e.toString());
    }
    try {
      long size = file.size();
      if (size != split.getFileSize()) {
        file.close();
        throw refused(split, nodeId, "it has " + size + " bytes here, " + split.getFileSize()
            + " where the job was planned (another file, or one that changed)");
      }
      return file;
    } catch (IOException e) {
      closeQuietly(file);
      throw refused(split, nodeId, e.toString());
    }
  }

  private static StoreException refused(FileSplit split, int nodeId, String why) {
    return new StoreException(ErrorCode.NO_SUCH_FILE, "node " + nodeId + " cannot read the job's input "
        + split.getPath() + ": " + why + "; a job over files needs them at the same path on every node");
  }

  private static void closeQuietly(FileChannel f) {
    try {
      f.close();
    } catch (IOException ignored) {
      // the refusal says what matters
    }
  }
}
