package org.sss.server.execution;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.attribute.FileTime;
import java.util.ArrayList;
import java.util.List;
import java.util.stream.Stream;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;
import org.sss.core.proto.ErrorCode;
import org.sss.kvs.StoreException;

class JarCacheTest {
  @TempDir
  Path dir;

  private String store(JarCache cache, int i) {
    byte[] bytes = ("not really a jar " + i).getBytes(StandardCharsets.UTF_8);
    String hash = JarCache.sha256(bytes);
    cache.put(hash, bytes);
    return hash;
  }

  private void age(String hash, long minutes) throws IOException {
    Files.setLastModifiedTime(dir.resolve(hash + ".jar"),
        FileTime.fromMillis(System.currentTimeMillis() - minutes * 60_000));
  }

  private long jarsOnDisk() throws IOException {
    try (Stream<Path> s = Files.list(dir)) {
      return s.filter(p -> p.toString().endsWith(".jar")).count();
    }
  }

  @Test
  void manyJars_keepTheMostRecent_andNeverOneInUse() throws IOException {
    JarCache cache = new JarCache(dir);
    List<String> hashes = new ArrayList<>();
    hashes.add(store(cache, 0));
    String inUse = hashes.get(0); // the oldest, but a stage holds it
    ClassLoader loader = cache.acquire(inUse);
    for (int i = 1; i < JarCache.MAX_JARS + 9; i++) {
      hashes.add(store(cache, i));
      age(hashes.get(i), 1000 - i); // older first, all idle long enough to go
    }
    age(inUse, 2000);
    store(cache, 999); // a store evicts beyond the limit
    assertTrue(cache.has(inUse), "a JAR in use is never evicted");
    assertEquals(JarCache.MAX_JARS + 1, jarsOnDisk(), "the most recent " + JarCache.MAX_JARS + ", and the one in use");
    for (int i = 1; i <= 8; i++) {
      assertFalse(cache.has(hashes.get(i)), "old idle JAR " + i + " was evicted");
    }
    StoreException e = assertThrows(StoreException.class, () -> cache.acquire(hashes.get(1)));
    assertEquals(ErrorCode.NO_SUCH_JAR, e.code());
    cache.release(inUse);
    assertTrue(loader != null);
  }

  @Test
  void recentlyUsedJars_areNotEvictedEvenBeyondTheLimit() throws IOException {
    JarCache cache = new JarCache(dir);
    for (int i = 0; i < JarCache.MAX_JARS + 5; i++) {
      store(cache, i); // all used just now
    }
    assertEquals(JarCache.MAX_JARS + 5, jarsOnDisk(), "a JAR asked for within the last minute stays");
  }
}
