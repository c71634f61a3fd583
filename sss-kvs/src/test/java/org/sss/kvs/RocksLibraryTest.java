package org.sss.kvs;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.attribute.FileTime;
import java.nio.file.attribute.PosixFilePermissions;
import java.util.List;
import java.util.concurrent.TimeUnit;
import java.util.stream.Stream;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;
import org.rocksdb.Options;
import org.rocksdb.RocksDB;

/**
 * The native library is extracted into the user's cache once and loaded from there by later
 * JVMs; a cache directory that is not the user's own is not used, and the library loads anyway.
 * Each case runs in a JVM of its own: a JVM loads the library once.
 */
class RocksLibraryTest {
  @TempDir
  Path dir;

  @Test
  void firstJvmExtracts_laterJvmsLoadTheSameCopy() throws Exception {
    Path cache = dir.resolve("cache");
    assertEquals("works, from the cache", run(cache));
    List<Path> copies = libraries(cache.resolve("sss"));
    assertEquals(1, copies.size(), "one copy: " + copies);
    Path lib = copies.get(0);
    assertEquals("rwx------", PosixFilePermissions.toString(Files.getPosixFilePermissions(lib.getParent())));
    FileTime written = Files.getLastModifiedTime(lib);
    byte[] whole = Files.readAllBytes(lib);
    assertEquals("works, from the cache", run(cache));
    assertEquals(written, Files.getLastModifiedTime(lib), "the second JVM loaded the copy, not a new one");
    assertEquals(copies, libraries(cache.resolve("sss")));

    // a copy damaged since (its size kept) is written anew, not loaded
    byte[] damaged = whole.clone();
    damaged[damaged.length / 2] ^= 0x5a;
    Files.write(lib, damaged);
    assertEquals("works, from the cache", run(cache));
    assertTrue(java.util.Arrays.equals(whole, Files.readAllBytes(lib)), "the damaged copy was replaced");
  }

  /** The copy's check reads blocks of 1 MiB: sizes around and at their edges give the JDK's CRC-32. */
  @Test
  void crcIsTheJdksOverEverySize() throws Exception {
    java.util.Random random = new java.util.Random(5);
    int m = 1 << 20;
    for (int n : new int[] {0, 1, 8191, m - 1, m, m + 1, 3 * m, 3 * m + 12345}) {
      byte[] bytes = new byte[n];
      random.nextBytes(bytes);
      Path f = dir.resolve("f" + n);
      Files.write(f, bytes);
      java.util.zip.CRC32 expected = new java.util.zip.CRC32();
      expected.update(bytes);
      assertEquals(expected.getValue(), RocksLibrary.crc(f), n + " bytes");
    }
  }

  @Test
  void aCacheOthersMayWrite_isNotUsed_andTheLibraryStillLoads() throws Exception {
    Path cache = dir.resolve("cache");
    Files.createDirectories(cache.resolve("sss"));
    Files.setPosixFilePermissions(cache.resolve("sss"), PosixFilePermissions.fromString("rwxrwxrwx"));
    assertEquals("works, not from the cache", run(cache));
    assertEquals(List.of(), libraries(cache.resolve("sss")));
  }

  private static List<Path> libraries(Path root) throws Exception {
    try (Stream<Path> files = Files.walk(root)) {
      return files.filter(f -> f.getFileName().toString().endsWith(".so")).sorted().toList();
    }
  }

  /** Runs {@link Probe} in a new JVM with {@code XDG_CACHE_HOME=cache}; returns what it printed. */
  private String run(Path cache) throws Exception {
    ProcessBuilder pb = new ProcessBuilder(Path.of(System.getProperty("java.home"), "bin", "java").toString(),
        "-cp", System.getProperty("java.class.path"), Probe.class.getName());
    pb.environment().put("XDG_CACHE_HOME", cache.toString());
    pb.redirectErrorStream(true);
    Process p = pb.start();
    assertTrue(p.waitFor(60, TimeUnit.SECONDS), "the probe ends");
    String out = new String(p.getInputStream().readAllBytes()).trim();
    assertEquals(0, p.exitValue(), out);
    return out.substring(out.lastIndexOf('\n') + 1); // its last line: before it, a logger may say it has no backend
  }

  /** Loads the library as a node does, then uses it. */
  public static final class Probe {
    public static void main(String[] args) throws Exception {
      RocksLibrary.load();
      Path db = Files.createTempDirectory("rocks-library-probe");
      try (Options o = new Options().setCreateIfMissing(true); RocksDB rocks = RocksDB.open(o, db.toString())) {
        rocks.put(new byte[] {1}, new byte[] {2});
        Path dir = Path.of(System.getenv("XDG_CACHE_HOME"), "sss");
        String cache = (Files.exists(dir) ? dir.toRealPath() : dir).toString(); // as the JVM maps it
        boolean mapped = Files.readAllLines(Path.of("/proc/self/maps")).stream()
            .anyMatch(l -> l.contains(cache) && l.contains("librocksdbjni"));
        System.out.println((rocks.get(new byte[] {1})[0] == 2 ? "works" : "wrong")
            + (mapped ? ", from the cache" : ", not from the cache"));
      } finally {
        try (Stream<Path> files = Files.walk(db)) {
          for (Path f : files.sorted(java.util.Comparator.reverseOrder()).toList()) {
            Files.delete(f);
          }
        }
      }
    }
  }
}
