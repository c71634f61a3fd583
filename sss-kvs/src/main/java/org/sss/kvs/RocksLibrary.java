package org.sss.kvs;

import java.io.IOException;
import java.io.InputStream;
import java.io.OutputStream;
import java.net.JarURLConnection;
import java.net.URL;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardCopyOption;
import java.nio.file.attribute.PosixFilePermission;
import java.nio.file.attribute.PosixFilePermissions;
import java.util.List;
import java.util.Set;
import java.util.jar.JarEntry;
import java.util.jar.JarFile;
import java.util.zip.CRC32;
import org.rocksdb.RocksDB;
import org.rocksdb.util.Environment;

/**
 * Loads RocksDB's native library from a copy extracted once per library build, rather than
 * from the JAR at every start. RocksJava inflates its 17 MB library into a new temporary file
 * in every JVM that uses it: about 0.2 s of CPU, a sixth of a node's start, paid by every node
 * of a cluster and by every command that runs an embedded one.
 *
 * <p>The copy lives in the user's cache directory ({@code $XDG_CACHE_HOME/sss}, else
 * {@code ~/.cache/sss}), in a directory named by the library's CRC and size in the JAR, so a
 * new RocksDB version gets a copy of its own. It is written to a temporary file, checked
 * against the JAR's CRC and then renamed, so a JVM never loads a half-written copy, and JVMs
 * starting together at worst each write one. The directories are the user's own (mode 700); a
 * cache directory owned by someone else is not used. When anything about this fails (no home,
 * a read-only disk, a library not in a JAR), RocksJava's own loading runs instead: the copy
 * only saves time.
 */
public final class RocksLibrary {
  private static final Set<PosixFilePermission> OWNER_ONLY = PosixFilePermissions.fromString("rwx------");

  private RocksLibrary() {}

  /** Loads the library once per JVM; later calls (and RocksJava's own) return at once. */
  public static synchronized void load() {
    try {
      Path dir = extracted();
      if (dir != null) {
        RocksDB.loadLibrary(List.of(dir.toString()));
        return;
      }
    } catch (IOException | RuntimeException | UnsatisfiedLinkError e) {
      // fall through: RocksJava extracts its own temporary copy
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
    connection.setUseCaches(false);
    try (JarFile jar = connection.getJarFile()) {
      JarEntry entry = jar.getJarEntry(connection.getEntryName());
      if (entry == null || entry.getCrc() < 0 || entry.getSize() < 0) {
        return null;
      }
      Path dir = ownDirectory(root.resolve("rocksdbjni-" + Long.toHexString(entry.getCrc()) + "-" + entry.getSize()));
      Path lib = dir.resolve(name);
      if (Files.isRegularFile(lib) && Files.size(lib) == entry.getSize()) {
        return dir;
      }
      Path partial = Files.createTempFile(dir, name, ".partial");
      try {
        CRC32 crc = new CRC32();
        try (InputStream in = jar.getInputStream(entry); OutputStream out = Files.newOutputStream(partial)) {
          byte[] chunk = new byte[1 << 16];
          for (int n; (n = in.read(chunk)) > 0; ) {
            crc.update(chunk, 0, n);
            out.write(chunk, 0, n);
          }
        }
        if (crc.getValue() != entry.getCrc() || Files.size(partial) != entry.getSize()) {
          return null;
        }
        Files.move(partial, lib, StandardCopyOption.ATOMIC_MOVE, StandardCopyOption.REPLACE_EXISTING);
      } finally {
        Files.deleteIfExists(partial);
      }
      return dir;
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

  /** Makes {@code dir} (and its parent) with mode 700 if new; refuses one this user does not own. */
  private static Path ownDirectory(Path dir) throws IOException {
    for (Path d : List.of(dir.getParent(), dir)) {
      if (!Files.isDirectory(d)) {
        Files.createDirectories(d);
        Files.setPosixFilePermissions(d, OWNER_ONLY);
      }
      if (!Files.getOwner(d).getName().equals(System.getProperty("user.name"))
          || !Files.getPosixFilePermissions(d).equals(OWNER_ONLY)) {
        throw new IOException(d + " is not this user's own directory");
      }
    }
    return dir;
  }
}
