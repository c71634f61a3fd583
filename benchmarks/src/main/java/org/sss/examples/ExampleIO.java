package org.sss.examples;

import java.io.BufferedOutputStream;
import java.io.File;
import java.io.IOException;
import java.io.OutputStream;
import java.nio.file.AccessDeniedException;
import java.nio.file.FileAlreadyExistsException;
import java.nio.file.FileSystemException;
import java.nio.file.Files;
import java.nio.file.NoSuchFileException;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.function.BiConsumer;
import org.sss.client.ScanOptions;
import org.sss.client.SssClient;
import org.sss.client.TableScan;
import org.sss.client.TableSpec;
import org.sss.client.io.BulkIO;
import org.sss.core.api.Pair;
import org.sss.core.api.Serde;

/** Moving the examples' inputs and outputs between files and tables. */
public final class ExampleIO {
  /** The name of the single part file written into an output directory. */
  public static final String PART_FILE = "part-r-00000";

  private ExampleIO() {}

  /**
   * Where to write an output given as typed: a file, or — when it ends with a slash or names an
   * existing directory — {@code part} inside that directory (created if needed).
   */
  public static Path outputFile(String out, String part) throws IOException {
    Path p = Path.of(out);
    if (out.endsWith("/") || out.endsWith(File.separator) || Files.isDirectory(p)) {
      Files.createDirectories(p);
      return p.resolve(part);
    }
    Path parent = p.toAbsolutePath().getParent();
    if (parent != null) {
      Files.createDirectories(parent);
    }
    return p;
  }

  /**
   * Checks, before any work, that an output given as typed can be written: makes its directory
   * (as writing it would) and writes and removes a file there.
   *
   * @throws IllegalArgumentException naming the output and the reason
   */
  public static void checkWritable(String out) {
    // the directories this check makes are removed again: a run that fails later leaves none
    List<Path> made = new ArrayList<>();
    for (Path d = Path.of(out).toAbsolutePath(); d != null && !Files.exists(d); d = d.getParent()) {
      made.add(d);
    }
    try {
      checkWritable(out, made);
    } finally {
      for (Path d : made) {
        try {
          Files.deleteIfExists(d); // deepest first; only empty directories go
        } catch (IOException notEmpty) {
          break;
        }
      }
    }
  }

  private static void checkWritable(String out, List<Path> made) {
    try {
      Path target = outputFile(out, PART_FILE);
      if (Files.isDirectory(target)) {
        throw new IOException(target + " is a directory");
      }
      if (Files.exists(target) && !Files.isWritable(target)) {
        throw new IOException(target + " is not writable");
      }
      Path probe = Files.createTempFile(target.toAbsolutePath().getParent(), ".sss-write-check-", "");
      Files.delete(probe);
    } catch (NoSuchFileException e) {
      throw new IllegalArgumentException("cannot write " + out + ": no such directory: " + e.getFile());
    } catch (FileAlreadyExistsException e) {
      throw new IllegalArgumentException("cannot write " + out + ": " + e.getFile() + " exists and is not a directory");
    } catch (AccessDeniedException e) {
      throw new IllegalArgumentException("cannot write " + out + ": permission denied: " + e.getFile());
    } catch (FileSystemException e) {
      throw new IllegalArgumentException("cannot write " + out + ": " + e.getFile()
          + (e.getReason() != null ? ": " + e.getReason() : ""));
    } catch (IOException e) {
      throw new IllegalArgumentException("cannot write " + out + ": " + e.getMessage());
    }
  }

  /** True when an output given as typed names a directory. */
  public static boolean isDirectory(String out) {
    return out.endsWith("/") || out.endsWith(File.separator) || Files.isDirectory(Path.of(out));
  }

  /**
   * Scans a table in key order, decoding keys and values (a multi-valued table: once per value,
   * without the engine's uniquifier).
   */
  public static <K, V> void scan(SssClient client, String table, Serde<K> keys, Serde<V> values,
                                 BiConsumer<K, V> each) {
    TableSpec o = client.tableStats(table).spec();
    try (TableScan scan = client.scan(table, ScanOptions.inKeyOrder())) {
      while (scan.hasNext()) {
        Pair p = scan.next();
        each.accept(keys.decodeKey(BulkIO.userKey(o, p.key())), values.decodeValue(p.value()));
      }
    }
  }

  /** Every pair of a table in key order (see {@link #scan}). */
  public static List<Pair> pairs(SssClient client, String table) {
    TableSpec o = client.tableStats(table).spec();
    List<Pair> out = new ArrayList<>();
    try (TableScan scan = client.scan(table, ScanOptions.inKeyOrder())) {
      while (scan.hasNext()) {
        Pair p = scan.next();
        out.add(new Pair(BulkIO.userKey(o, p.key()), p.value()));
      }
    }
    return out;
  }

  /** A buffered output stream on a new file. */
  static OutputStream create(Path file) throws IOException {
    return new BufferedOutputStream(Files.newOutputStream(file), 1 << 16);
  }
}
