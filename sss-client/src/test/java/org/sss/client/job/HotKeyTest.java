package org.sss.client.job;

import static org.junit.jupiter.api.Assertions.assertEquals;

import java.nio.file.Path;
import java.util.Optional;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;
import org.sss.client.BulkWriter;
import org.sss.client.SssClient;
import org.sss.client.cluster.LocalProcessCluster;
import org.sss.client.io.BulkIO;
import org.sss.core.api.Serdes;

/**
 * One key with 50 million values reduces in a server with a 256 MB heap: the reducer's values
 * stream from the store. Scale with -Dsss.test.hotKeyValues=N.
 */
class HotKeyTest {
  @TempDir
  Path dir;

  @Test
  void reduce_hotKeyWithFiftyMillionValues_inSmallHeap() throws Exception {
    long total = Long.getLong("sss.test.hotKeyValues", 50_000_000L);
    int rows = 50;
    long perRow = total / rows;
    LocalProcessCluster cluster = LocalProcessCluster.start(dir, 1, 4, "256m");
    try (SssClient client = SssClient.connect(cluster.spec())) {
      client.createTable("seed", BulkIO.textTable(), false);
      try (BulkWriter w = client.writer("seed")) {
        for (long i = 0; i < rows; i++) {
          w.put(Serdes.LONG.encodeKey(i), Serdes.STRING.encodeValue("x"));
        }
      }
      client.submit(Job.named("hot").input("seed", Serdes.LONG, Serdes.STRING)
          .map(TestJobs.HotKey.class, Serdes.STRING, Serdes.LONG)
          .reduce(TestJobs.CountValues.class, Serdes.STRING, Serdes.LONG)
          .output("hot-out").config("hot.values.per.row", Long.toString(perRow)).build()).await();
      Optional<byte[]> v = client.get("hot-out", Serdes.STRING.encodeKey("hot"));
      assertEquals(perRow * rows, Serdes.LONG.decodeValue(v.orElseThrow()));
    } finally {
      cluster.stopAll();
    }
  }
}
