package org.sss.kvs;

import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.Set;
import java.util.TreeSet;
import java.util.stream.Stream;

/**
 * One empty file per column family, in the store's {@code unsealed} directory, while its table
 * holds bulk writers' pairs that were acknowledged but not stored yet ({@link StoreTable#writeBulk}).
 *
 * <h2>Why</h2>
 * A node killed before a writer's seal loses those pairs. The writer learns so from the seal and
 * sends them again; but a writer that dies too never seals, and the node's copies would then lack
 * pairs that another copy holds and serves, with nothing to tell them apart: the copies would
 * answer differently, for good. A mark found when the store opens names the tables whose copies
 * may lack pairs, and the node catches them up from a copy in sync before it serves (as for a
 * table without a WAL after a crash). Kept as files rather than in RocksDB: a mark is set once
 * per seal, never synced (a process killed keeps what it wrote; a machine crash loses the WAL's
 * last writes as well), and read only at open.
 */
final class UnsealedMarks {
  private final Path dir;

  UnsealedMarks(Path dir) {
    this.dir = dir;
  }

  /** The column families marked now: when the store opens, those it may have lost unsealed pairs of. */
  Set<String> list() throws IOException {
    Set<String> families = new TreeSet<>();
    if (Files.isDirectory(dir)) {
      try (Stream<Path> files = Files.list(dir)) {
        files.forEach(p -> families.add(p.getFileName().toString()));
      }
    }
    return families;
  }

  /** Marks {@code family}; thrown when the mark cannot be written, so the pairs are refused. */
  void mark(String family) {
    try {
      Files.createDirectories(dir);
      Path p = dir.resolve(family);
      if (!Files.exists(p)) {
        Files.createFile(p);
      }
    } catch (IOException e) {
      throw new UncheckedIOException(e);
    }
  }

  /** Removes {@code family}'s mark; one left behind only costs a catch-up after a crash. */
  void clear(String family) {
    try {
      Files.deleteIfExists(dir.resolve(family));
    } catch (IOException e) {
      // kept: the next open is only more cautious
    }
  }
}
