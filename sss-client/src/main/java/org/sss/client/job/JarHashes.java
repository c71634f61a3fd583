package org.sss.client.job;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;

/**
 * SHA-256 of job JARs, remembered per file while its size and modification time stay the same:
 * a client loop running one job many times hashes its JAR once.
 */
final class JarHashes {
  private record Version(Path file, long size, long modifiedMillis) {}

  private static final Map<Version, String> HASHES = new ConcurrentHashMap<>();

  private JarHashes() {}

  /** The hash of {@code file}'s content, read only when the file is new or changed. */
  static String of(Path file) throws IOException {
    Version v = new Version(file.toAbsolutePath(), Files.size(file), Files.getLastModifiedTime(file).toMillis());
    String known = HASHES.get(v);
    if (known != null) {
      return known;
    }
    String hash = JobCoordinator.sha256(Files.readAllBytes(file));
    if (HASHES.size() > 1000) {
      HASHES.clear();
    }
    HASHES.put(v, hash);
    return hash;
  }
}
