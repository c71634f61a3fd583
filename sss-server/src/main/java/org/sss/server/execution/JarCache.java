package org.sss.server.execution;

import java.io.IOException;
import java.net.URL;
import java.net.URLClassLoader;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardCopyOption;
import java.nio.file.attribute.FileTime;
import java.security.MessageDigest;
import java.security.NoSuchAlgorithmException;
import java.util.Comparator;
import java.util.HexFormat;
import java.util.List;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;
import java.util.stream.Stream;
import org.sss.core.proto.ErrorCode;
import org.sss.kvs.StoreException;

/**
 * Job JARs by content hash, each with its own class loader.
 *
 * <p>A JAR is stored once under {@code <data>/jars/<sha256>.jar} and checked against its hash;
 * every job naming that hash shares one class loader, whose parent is the server's, so jobs see
 * the SSS API but not each other's classes: two JARs with different versions of a class run
 * side by side. The cache survives restarts.
 *
 * <h2>Bounded</h2>
 * The cache keeps the {@value #MAX_JARS} most recently used JARs: when a JAR is stored, the
 * least recently used ones beyond that, unused by any running stage for a minute, are deleted
 * and their class loaders closed, so neither the directory nor the server's memory grows with
 * every JAR ever run. A job whose JAR was evicted is answered NO_SUCH_JAR and ships it again.
 */
public final class JarCache {
  static final int MAX_JARS = 32;
  static final long IDLE_BEFORE_EVICTION_MILLIS = 60_000;

  private final Path dir;
  private final Map<String, Loaded> loaders = new ConcurrentHashMap<>();

  /** A JAR's class loader and the stages using it now. */
  private static final class Loaded {
    final URLClassLoader loader;
    int users;

    Loaded(URLClassLoader loader) {
      this.loader = loader;
    }
  }

  public JarCache(Path dir) {
    this.dir = dir;
  }

  public static String sha256(byte[] bytes) {
    try {
      return HexFormat.of().formatHex(MessageDigest.getInstance("SHA-256").digest(bytes));
    } catch (NoSuchAlgorithmException e) {
      throw new IllegalStateException(e);
    }
  }

  /** True when the JAR is cached; counts as a use, so that it stays for the job that asked. */
  public boolean has(String hash) {
    boolean present = Files.exists(file(hash));
    if (present) {
      touch(hash);
    }
    return present;
  }

  private Path file(String hash) {
    if (!hash.matches("[0-9a-f]{64}")) {
      throw new StoreException(ErrorCode.BAD_REQUEST, "not a SHA-256 hash: '" + hash + "'");
    }
    return dir.resolve(hash + ".jar");
  }

  /** Stores a JAR after checking that its bytes have the given hash. */
  public void put(String hash, byte[] bytes) {
    String actual = sha256(bytes);
    if (!actual.equals(hash)) {
      throw new StoreException(ErrorCode.BAD_REQUEST, "JAR content hashes to " + actual + ", not " + hash);
    }
    try {
      Files.createDirectories(dir);
      Path tmp = Files.createTempFile(dir, "upload-", ".tmp");
      Files.write(tmp, bytes);
      Files.move(tmp, file(hash), StandardCopyOption.REPLACE_EXISTING, StandardCopyOption.ATOMIC_MOVE);
    } catch (IOException e) {
      throw new StoreException(ErrorCode.STORAGE_ERROR, "cannot store JAR: " + e.getMessage(), e);
    }
    evictBeyondLimit();
  }

  /** Deletes the least recently used JARs beyond {@link #MAX_JARS} that no stage uses. */
  synchronized void evictBeyondLimit() {
    List<Path> jars;
    try (Stream<Path> files = Files.list(dir)) {
      jars = files.filter(f -> f.getFileName().toString().endsWith(".jar"))
          .sorted(Comparator.comparingLong(JarCache::lastUsed).reversed()).toList();
    } catch (IOException e) {
      return; // nothing to evict from
    }
    long now = System.currentTimeMillis();
    for (Path f : jars.subList(Math.min(MAX_JARS, jars.size()), jars.size())) {
      String hash = f.getFileName().toString().replace(".jar", "");
      Loaded l = loaders.get(hash);
      if (l != null && l.users > 0 || now - lastUsed(f) < IDLE_BEFORE_EVICTION_MILLIS) {
        continue;
      }
      loaders.remove(hash);
      try {
        if (l != null) {
          l.loader.close();
        }
        Files.deleteIfExists(f);
      } catch (IOException ignored) {
        // tried again at the next store
      }
    }
  }

  private static long lastUsed(Path f) {
    try {
      return Files.getLastModifiedTime(f).toMillis();
    } catch (IOException e) {
      return 0;
    }
  }

  /**
   * The class loader for a JAR, or the server's own when {@code hash} is empty, held for a stage
   * until {@link #release}: a JAR in use is never evicted.
   */
  public synchronized ClassLoader acquire(String hash) {
    if (hash.isEmpty()) {
      return JarCache.class.getClassLoader();
    }
    Loaded l = loaders.computeIfAbsent(hash, h -> {
      Path f = file(h);
      if (!Files.exists(f)) {
        throw new StoreException(ErrorCode.NO_SUCH_JAR, "JAR " + h + " is not in the cache");
      }
      try {
        return new Loaded(new URLClassLoader("job-" + h.substring(0, 12), new URL[] {f.toUri().toURL()},
            JarCache.class.getClassLoader()));
      } catch (IOException e) {
        throw new StoreException(ErrorCode.STORAGE_ERROR, "cannot open JAR " + h, e);
      }
    });
    l.users++;
    touch(hash);
    return l.loader;
  }

  /** A stage is done with the JAR it {@linkplain #acquire acquired}. */
  public synchronized void release(String hash) {
    Loaded l = hash.isEmpty() ? null : loaders.get(hash);
    if (l != null) {
      l.users--;
      touch(hash);
    }
  }

  /** A JAR's last use is its file's modification time, so that it survives restarts. */
  private void touch(String hash) {
    try {
      Files.setLastModifiedTime(file(hash), FileTime.fromMillis(System.currentTimeMillis()));
    } catch (IOException ignored) {
      // the order of eviction is a preference
    }
  }
}
