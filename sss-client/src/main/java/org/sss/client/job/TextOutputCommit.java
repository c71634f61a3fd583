package org.sss.client.job;

import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.file.DirectoryNotEmptyException;
import java.nio.file.DirectoryStream;
import java.nio.file.Files;
import java.nio.file.LinkOption;
import java.nio.file.NoSuchFileException;
import java.nio.file.Path;
import java.nio.file.StandardCopyOption;
import java.util.Comparator;
import java.util.HashSet;
import java.util.Set;
import java.util.stream.Stream;
import org.sss.core.io.TextOutputDir;
import org.sss.core.proto.ErrorCode;

/**
 * The client's side of a job that writes text files (see {@link TextOutputDir}): it makes the
 * attempt's directory before the stages run, moves the part files up and writes
 * {@code _SUCCESS} at the commit, and deletes the attempt's directory after a failure. The
 * nodes only write files into a directory made here, so a node that does not see it fails the
 * job instead of writing where nobody looks.
 */
public final class TextOutputCommit {
  private final String jobName;
  private final Path dir;
  private final boolean overwrite;
  /** True when this job made {@code dir}: a job that fails removes it again if it stayed empty. */
  private boolean madeDir;
  /** Set when the commit starts moving files: from then on a failure keeps what is left. */
  private boolean committing;

  /** The commit of {@code jobName}'s output into {@code dir} (absolute). */
  public TextOutputCommit(String jobName, Path dir, boolean overwrite) {
    this.jobName = jobName;
    this.dir = dir;
    this.overwrite = overwrite;
  }

  /**
   * Makes the attempt's directory. The output directory must hold nothing (a leftover
   * {@code _temporary} of a job that died aside), unless the job overwrites: its old contents
   * then go at the commit, not now, so a job that fails leaves them as they were.
   */
  public void prepare(String jobId) {
    try {
      if (Files.exists(dir) && !Files.isDirectory(dir)) {
        throw new JobFailedException(ErrorCode.BAD_REQUEST, "job " + jobName + ": its output " + dir
            + " is a file, not a directory", null);
      }
      if (!overwrite && Files.isDirectory(dir)) {
        requireEmpty();
      }
      madeDir |= !Files.exists(dir);
      Files.createDirectories(TextOutputDir.attemptDir(dir, jobId));
    } catch (IOException e) {
      throw new JobFailedException(ErrorCode.NO_SUCH_FILE, "job " + jobName + " cannot make its output directory "
          + dir + ": " + e, e);
    }
  }

  /** Fails when the directory holds anything but {@code _temporary} (names are not reserved, as tables' are). */
  private void requireEmpty() throws IOException {
    try (Stream<Path> s = Files.list(dir)) {
      Path found = s.filter(p -> !p.getFileName().toString().equals(TextOutputDir.TEMPORARY)).findFirst()
          .orElse(null);
      if (found != null) {
        throw new JobFailedException(ErrorCode.TABLE_EXISTS, "job " + jobName + ": output directory " + dir
            + " already holds " + found.getFileName() + (committing ? ", written there while the job ran: its parts"
            + " are left in " + TextOutputDir.TEMPORARY + " below it" : " (write elsewhere, or overwrite)"), null);
      }
    }
  }

  /** Where the attempt {@code jobId} writes its part files. */
  public Path attemptDir(String jobId) {
    return TextOutputDir.attemptDir(dir, jobId);
  }

  /**
   * Moves the attempt's part files into the directory and writes {@code _SUCCESS}; returns the
   * part files moved. Without overwrite the directory must still hold nothing else (another job
   * may have written there since the stages started), and no part replaces a file. With
   * overwrite the old {@code _SUCCESS} goes first, the parts then replace files of their names,
   * and the old entries left go last, so a commit that fails midway leaves no {@code _SUCCESS},
   * and the parts not yet moved stay below {@code _temporary} to be moved by hand.
   */
  public int commit(String jobId) {
    Path attempt = TextOutputDir.attemptDir(dir, jobId);
    try {
      committing = true; // from here on a failure keeps the parts: the job's work is done
      if (!overwrite) {
        requireEmpty();
      }
      Files.deleteIfExists(dir.resolve(TextOutputDir.SUCCESS));
      Set<Path> moved = new HashSet<>();
      try (DirectoryStream<Path> parts = Files.newDirectoryStream(attempt)) {
        for (Path p : parts) {
          Path target = dir.resolve(p.getFileName());
          if (overwrite) {
            if (Files.isDirectory(target, LinkOption.NOFOLLOW_LINKS)) {
              deleteTree(target); // an old entry of a part's name; a file cannot be renamed onto it
            }
            Files.move(p, target, StandardCopyOption.ATOMIC_MOVE, StandardCopyOption.REPLACE_EXISTING);
          } else {
            Files.move(p, target); // refuses an existing file
          }
          moved.add(target.getFileName());
        }
      }
      if (overwrite) {
        try (DirectoryStream<Path> old = Files.newDirectoryStream(dir)) {
          for (Path p : old) {
            if (!p.getFileName().toString().equals(TextOutputDir.TEMPORARY) && !moved.contains(p.getFileName())) {
              deleteTree(p);
            }
          }
        }
      }
      removeAttempt(jobId);
      Files.write(dir.resolve(TextOutputDir.SUCCESS), new byte[0]);
      return moved.size();
    } catch (IOException | UncheckedIOException e) {
      throw new JobFailedException(ErrorCode.STORAGE_ERROR, "job " + jobName + " failed to commit its output "
          + dir + ": " + e + " (it has no " + TextOutputDir.SUCCESS + "; the parts not moved are in " + attempt + ")", e);
    }
  }

  /**
   * After a failure: the attempt's files go, and the directory if this job made it and it is
   * empty; after a commit that failed midway, nothing is deleted.
   */
  public void abandon(String jobId) {
    if (committing) {
      return;
    }
    try {
      removeAttempt(jobId);
      if (madeDir) {
        try (Stream<Path> s = Files.list(dir)) {
          if (s.findAny().isEmpty()) {
            Files.deleteIfExists(dir);
          }
        }
      }
    } catch (IOException | UncheckedIOException ignored) {
      // best effort: what is left is below _temporary, which a reader of the output skips
    }
  }

  private void removeAttempt(String jobId) throws IOException {
    deleteTree(TextOutputDir.attemptDir(dir, jobId));
    Path temporary = dir.resolve(TextOutputDir.TEMPORARY);
    try (Stream<Path> s = Files.list(temporary)) {
      if (s.findAny().isEmpty()) {
        Files.deleteIfExists(temporary); // another job's attempt may still write beside it
      }
    } catch (NoSuchFileException | DirectoryNotEmptyException gone) {
      // removed, or filled, meanwhile
    }
  }

  private static void deleteTree(Path root) throws IOException {
    if (!Files.exists(root, LinkOption.NOFOLLOW_LINKS)) {
      return;
    }
    try (Stream<Path> s = Files.walk(root)) {
      for (Path p : s.sorted(Comparator.reverseOrder()).toList()) {
        Files.deleteIfExists(p);
      }
    }
  }
}
