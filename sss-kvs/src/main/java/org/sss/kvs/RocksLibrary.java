package org.sss.kvs;

import java.io.IOException;
import java.io.InputStream;
import java.net.JarURLConnection;
import java.net.URL;
import java.nio.ByteBuffer;
import java.nio.channels.FileChannel;
import java.nio.file.DirectoryStream;
import java.nio.file.FileAlreadyExistsException;
import java.nio.file.Files;
import java.nio.file.LinkOption;
import java.nio.file.Path;
import java.nio.file.StandardCopyOption;
import java.nio.file.StandardOpenOption;
import java.nio.file.attribute.FileTime;
import java.nio.file.attribute.PosixFileAttributes;
import java.nio.file.attribute.PosixFilePermission;
import java.nio.file.attribute.PosixFilePermissions;
import java.time.Duration;
import java.time.Instant;
import java.util.List;
import java.util.Set;
import java.util.jar.JarEntry;
import java.util.jar.JarFile;
import java.util.zip.CRC32;
import org.rocksdb.RocksDB;
import org.rocksdb.util.Environment;
import org.slf4j.LoggerFactory;

/**
 * Loads RocksDB's native library from a copy extracted once per library build, rather than
 * from the JAR at every start. RocksJava inflates its 17 MB library into a new temporary file
 * in every JVM that uses it: about a tenth of a second (docs/operations.md), paid by every node
 * of a cluster at every start and by every command that runs an embedded one.
 *
 * <p>The copy lives in the user's cache directory ({@code $XDG_CACHE_HOME/sss} when that is an
 * absolute path, else {@code sss} under {@code .cache} in Java's {@code user.home}), in a
 * directory named by the library's CRC and size in the JAR, so each build of the library gets
 * a copy of its own. It is written to a temporary file, synced, checked against the JAR's CRC
 * and renamed, so no JVM loads a half-written copy, and JVMs starting together at worst each
 * write one; every load checks the copy's CRC again (a few milliseconds), so a copy damaged
 * later (a machine crash, a disk error) is written anew, not loaded. The directories are made
 * for their user alone (mode 700); one that is a link, is not this user's, or that others may
 * write is not used. When anything about this fails (no home, a read-only disk, a library
 * not in a JAR), or when {@code ROCKSDB_SHAREDLIB_DIR} names a directory of the user's own
 * choosing, RocksJava's own loading runs instead: the copy only saves time.
 */
public final class RocksLibrary {
  private static final Set<PosixFilePermission> OWNER_ONLY = PosixFilePermissions.fromString("rwx------");
  /** A temporary copy older than this was left by a JVM that died while writing it. */
  private static final Duration ABANDONED = Duration.ofHours(1);

  /** Whether {@link #load} succeeded, or how it failed (guarded by the class). */
  private static boolean loaded;
  private static Throwable failed;

  private RocksLibrary() {}

  /**
   * Loads the library once per JVM; later calls (and RocksJava's own) find it loaded. A load
   * that failed fails every later call with the same error: RocksJava's own loader, after a
   * native library that would not link, would make every later caller wait for it forever.
   */
  public static synchronized void load() {
    if (loaded) {
      return;
    }
    if (failed instanceof Error e) {
      throw e;
    }
    if (failed != null) {
      throw new IllegalStateException("RocksDB's library did not load: " + failed.getMessage(), failed);
    }
    try {
      loadOnce();
      loaded = true;
    } catch (RuntimeException | Error e) {
      failed = e;
      throw e;
    }
  }

  private static void loadOnce() {
    try {
      Path dir = System.getenv("ROCKSDB_SHAREDLIB_DIR") == null ? extracted() : null;
      if (dir != null) {
        RocksDB.loadLibrary(List.of(dir.toString()));
        return;
      }
    } catch (IOException | RuntimeException | LinkageError e) {
      LoggerFactory.getLogger(RocksLibrary.class).debug("RocksDB's library not loaded from the cache: {}",
          e.toString()); // RocksJava extracts its own temporary copy, as it always did
    }
    RocksDB.loadLibrary();
  }

  /** The directory holding a checked copy of the library, made if needed; null when there is none to make. */
  private static Path extracted() throws IOException {
    URL url = RocksDB.class.getClassLoader().getResource(Environment.getJniLibraryFileName("rocksdb"));
    // the name RocksDB.loadLibrary(paths) looks for in each path (not the JAR's: it says "jni" twice)
    String name = Environment.getJniLibraryFileName("rocksdbjni");
    Path root = cacheRoot();
    if (url == null || !"jar".equals(url.getProtocol()) || root == null) {
      return null;
    }
    JarURLConnection connection = (JarURLConnection) url.openConnection();
    connection.setUseCaches(false); // a JarFile of its own, closed below, not the class loader's
    try (JarFile jar = connection.getJarFile()) {
      JarEntry entry = jar.getJarEntry(connection.getEntryName());
      if (entry == null || entry.getCrc() < 0 || entry.getSize() < 0) {
        return null;
      }
      Files.createDirectories(root.getParent(), PosixFilePermissions.asFileAttribute(OWNER_ONLY)); // as XDG asks
      ownDirectory(root);
      Path dir = ownDirectory(root.resolve("rocksdbjni-" + Long.toHexString(entry.getCrc()) + "-" + entry.getSize()));
      Path lib = dir.resolve(name);
      removeAbandoned(dir);
      if (Files.isRegularFile(lib, LinkOption.NOFOLLOW_LINKS) && Files.size(lib) == entry.getSize()
          && crc(lib) == entry.getCrc()) {
        return dir;
      }
      Path partial = Files.createTempFile(dir, name, ".partial");
      try {
        try (InputStream in = jar.getInputStream(entry)) {
          Files.copy(in, partial, StandardCopyOption.REPLACE_EXISTING);
        }
        if (Files.size(partial) != entry.getSize() || crc(partial) != entry.getCrc()) {
          return null;
        }
        try (FileChannel f = FileChannel.open(partial, StandardOpenOption.WRITE)) {
          f.force(true); // on disk before its name says it is whole
        }
        Files.move(partial, lib, StandardCopyOption.ATOMIC_MOVE, StandardCopyOption.REPLACE_EXISTING);
      } finally {
        Files.deleteIfExists(partial);
      }
      return dir;
    }
  }

  /**
   * The file's CRC-32, read in 1 MiB blocks into a direct buffer that {@code CRC32} reads in
   * place: 6-8 ms for the 17 MB library in a fresh JVM, against 16-24 ms through an input
   * stream's 8 KiB reads, on every command's start.
   */
  static long crc(Path file) throws IOException {
    try (FileChannel f = FileChannel.open(file, StandardOpenOption.READ, LinkOption.NOFOLLOW_LINKS)) {
      CRC32 crc = new CRC32();
      ByteBuffer block = ByteBuffer.allocateDirect(1 << 20);
      while (f.read(block.clear()) >= 0) {
        crc.update(block.flip());
      }
      return crc.getValue();
    }
  }

  /** Removes temporary copies that JVMs killed while writing them left behind. */
  private static void removeAbandoned(Path dir) {
    FileTime before = FileTime.from(Instant.now().minus(ABANDONED));
    try (DirectoryStream<Path> partials = Files.newDirectoryStream(dir, "*.partial")) {
      for (Path p : partials) {
        if (Files.getLastModifiedTime(p, LinkOption.NOFOLLOW_LINKS).compareTo(before) < 0) {
          Files.deleteIfExists(p);
        }
      }
    } catch (IOException e) {
      // only space: the copy is written all the same
    }
  }

  /** The user's cache directory for SSS, or null without a home. */
  private static Path cacheRoot() {
    String xdg = System.getenv("XDG_CACHE_HOME");
    if (xdg != null && xdg.startsWith("/")) {
      return Path.of(xdg, "sss");
    }
    String home = System.getProperty("user.home");
    return home == null || home.isEmpty() || "?".equals(home) ? null : Path.of(home, ".cache", "sss");
  }

  /**
   * Makes {@code dir} if new (mode 700 from the start); refuses one that is a link, is not this
   * user's, or that others may write (its group too, unless that is the user's own group, as
   * where every user has a group of their own and a umask of 002).
   */
  private static Path ownDirectory(Path dir) throws IOException {
    if (!Files.exists(dir, LinkOption.NOFOLLOW_LINKS)) {
      try {
        Files.createDirectory(dir, PosixFilePermissions.asFileAttribute(OWNER_ONLY));
      } catch (FileAlreadyExistsException raced) {
        // another JVM made it: checked below
      }
    }
    String user = System.getProperty("user.name");
    PosixFileAttributes a = Files.readAttributes(dir, PosixFileAttributes.class, LinkOption.NOFOLLOW_LINKS);
    if (!a.isDirectory() || !a.owner().getName().equals(user)) {
      throw new IOException(dir + " is not a directory of this user's");
    }
    if (a.permissions().contains(PosixFilePermission.OTHERS_WRITE)
        || a.permissions().contains(PosixFilePermission.GROUP_WRITE) && !a.group().getName().equals(user)) {
      throw new IOException(dir + " may be written by others");
    }
    return dir;
  }
}
