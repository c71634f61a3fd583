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
 * One key with more values than the server's heap could hold reduces in that server: the
 * reducer's values stream from the store. Five million values in a 64 MB heap: held as objects
 * (even as their 8 encoded bytes each, 5M x 24 B) they would need about twice that heap; a
 * reducer that keeps them in a list does run out of memory at this size. Scale with
 * -Dsss.test.hotKeyValues=N and -Dsss.test.hotKeyHeap=SIZE (e.g. 50000000 in 256m, about ten
 * times as long).
 */
class HotKeyTest {
  @TempDir
  Path dir;

  static Job hot(Class<? extends org.sss.core.api.Reducer> reducer, String output, long perRow) {
    return Job.named("hot").input("seed", Serdes.LONG, Serdes.STRING)
        .map(TestJobs.HotKey.class, Serdes.STRING, Serdes.LONG)
        .reduce(reducer, Serdes.STRING, Serdes.LONG)
        .output(output).config("hot.values.per.row", Long.toString(perRow)).build();
  }

  @Test
  void reduce_hotKeyWithMoreValuesThanTheHeapHolds_streams() throws Exception {
    long total = Long.getLong("sss.test.hotKeyValues", 5_000_000L);
    String heap = System.getProperty("sss.test.hotKeyHeap", "64m");
    int rows = 50;
    long perRow = total / rows;
    LocalProcessCluster cluster = LocalProcessCluster.start(dir, 1, 4, heap);
    try (SssClient client = SssClient.connect(cluster.spec())) {
      client.createTable("seed", BulkIO.textTable(), false);
      try (BulkWriter w = client.writer("seed", BulkIO.textTable().types())) {
        for (long i = 0; i < rows; i++) {
          w.put(Serdes.LONG.encodeKey(i), Serdes.STRING.encodeValue("x"));
        }
      }
      client.submit(hot(TestJobs.CountValues.class, "hot-out", perRow)).await();
      Optional<byte[]> v = client.get("hot-out", Serdes.STRING.encodeKey("hot"));
      assertEquals(perRow * rows, Serdes.LONG.decodeValue(v.orElseThrow()));
    } finally {
      cluster.stopAll();
    }
  }
}
