package org.sss.server.execution;

import java.io.IOException;
import java.net.URL;
import java.net.URLClassLoader;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardCopyOption;
import java.security.MessageDigest;
import java.security.NoSuchAlgorithmException;
import java.util.HexFormat;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;
import org.sss.core.proto.ErrorCode;
import org.sss.kvs.StoreException;

/**
 * Job JARs by content hash, each with its own class loader.
 *
 * <p>A JAR is stored once under {@code <data>/jars/<sha256>.jar} and checked against its hash;
 * every job naming that hash shares one class loader, whose parent is the server's, so jobs see
 * the SSS API but not each other's classes: two JARs with different versions of a class run
 * side by side. The cache survives restarts.
 */
public final class JarCache {
  private final Path dir;
  private final Map<String, ClassLoader> loaders = new ConcurrentHashMap<>();

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

  public boolean has(String hash) {
    return Files.exists(file(hash));
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
  }

  /** The class loader for a JAR, or the server's own when {@code hash} is empty. */
  public ClassLoader loader(String hash) {
    if (hash.isEmpty()) {
      return JarCache.class.getClassLoader();
    }
    return loaders.computeIfAbsent(hash, h -> {
      Path f = file(h);
      if (!Files.exists(f)) {
        throw new StoreException(ErrorCode.NO_SUCH_JAR, "JAR " + h + " is not in the cache");
      }
      try {
        return new URLClassLoader("job-" + h.substring(0, 12), new URL[] {f.toUri().toURL()},
            JarCache.class.getClassLoader());
      } catch (IOException e) {
        throw new StoreException(ErrorCode.STORAGE_ERROR, "cannot open JAR " + h, e);
      }
    });
  }
}
