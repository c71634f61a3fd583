package org.sss.client.io;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.NoSuchFileException;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.HashSet;
import java.util.List;
import java.util.Set;
import java.util.stream.Stream;

/**
 * Cuts text files into splits, each read on its own by {@link org.sss.core.io.TextSplitReader}.
 * The splits aim at one size for all files, {@code tasks} of them in all, at least 8 MiB and at
 * most 256 MiB; each file is cut into near-equal pieces of at most that size (a file smaller than
 * it is one split, and no piece of a file cut in several is under half of it). When 256 MiB caps
 * the size, the count aimed at is a multiple of {@code tasks}, so that a single file's splits
 * come in whole rounds of {@code tasks}; a directory's files, cut one by one, may add a split or
 * two. (A file just over 1 GiB on one node of two task threads, {@code tasks} 4, was five splits
 * of 205 MiB, the fifth run alone: WordCount of it took 4.51-5.18 s, and 4.11-5.06 s as eight of
 * 128 MiB.)
 */
public final class TextSplits {
  static final long MIN_SPLIT = 8L << 20;
  static final long MAX_SPLIT = 256L << 20;

  private TextSplits() {}

  /**
   * A byte range of one file; {@code fileOffset} is where the file starts in the listed files
   * taken end to end (the sizes of those before it).
   */
  public record Split(Path file, long start, long length, long fileSize, long fileOffset) {}

  /**
   * The files of {@code path}: the file itself, or every regular file below a directory in path
   * order, leaving out names that start with {@code .} or {@code _} (as Hadoop's
   * {@code FileInputFormat} does: hidden files, {@code _SUCCESS} markers). A directory given as
   * a symbolic link is walked where it points (its files named under the link); links to
   * directories below it are not followed (a link to a file is read as that file). Refused: two
   * files whose names read the same as text (bytes that do not decode in the JVM's file-name
   * encoding), which nodes told the names could not tell apart.
   */
  public static List<Path> files(Path path) throws IOException {
    if (Files.isRegularFile(path)) {
      return List.of(path);
    }
    if (!Files.isDirectory(path)) {
      throw new NoSuchFileException(path.toString(), null, "no such file or directory");
    }
    Path start = Files.isSymbolicLink(path) ? path.toRealPath() : path;
    List<Path> files;
    try (Stream<Path> walk = Files.walk(start)) {
      files = walk.filter(Files::isRegularFile).filter(f -> visible(start, f)).map(f -> path.resolve(start.relativize(f)))
          .sorted().toList();
    }
    Set<String> names = new HashSet<>();
    for (Path f : files) {
      if (!names.add(f.toString())) {
        throw new IOException("cannot read " + path + ": two files are named " + f + " in this JVM's file-name encoding ("
            + System.getProperty("sun.jnu.encoding") + "), bytes that do not decode having become the same text; rename"
            + " them, or run with a UTF-8 locale (LC_ALL=C.UTF-8) if they are UTF-8. Nothing was read.");
      }
    }
    return files;
  }

  private static boolean visible(Path root, Path file) {
    for (Path part : root.relativize(file)) {
      String name = part.toString();
      if (name.startsWith(".") || name.startsWith("_")) {
        return false;
      }
    }
    return true;
  }

  /** About {@code tasks} splits over {@code files}; none for an empty file. */
  public static List<Split> plan(List<Path> files, int tasks) throws IOException {
    long total = 0;
    List<Long> sizes = new ArrayList<>();
    for (Path f : files) {
      long size = Files.size(f);
      sizes.add(size);
      total += size;
    }
    int wave = Math.max(1, tasks);
    long target = ceilDiv(total, wave);
    if (target > MAX_SPLIT) {
      long waves = ceilDiv(ceilDiv(total, MAX_SPLIT), wave);
      target = ceilDiv(total, waves * wave);
    }
    target = Math.max(MIN_SPLIT, target);
    List<Split> splits = new ArrayList<>();
    long fileOffset = 0;
    for (int i = 0; i < files.size(); i++) {
      long size = sizes.get(i);
      long n = ceilDiv(size, target);
      for (long j = 0; j < n; j++) {
        long start = size * j / n;
        long end = size * (j + 1) / n;
        splits.add(new Split(files.get(i), start, end - start, size, fileOffset));
      }
      fileOffset += size;
    }
    return splits;
  }

  private static long ceilDiv(long a, long b) {
    return (a + b - 1) / b;
  }
}
