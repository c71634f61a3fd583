package org.sss.client.job;

import static org.junit.jupiter.api.Assertions.assertEquals;

import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;
import org.junit.jupiter.api.Test;
import org.sss.client.BulkWriter;
import org.sss.client.SssClient;
import org.sss.client.cluster.SssCluster;
import org.sss.client.io.BulkIO;
import org.sss.core.api.Serdes;

/** A stage's last progress line counts its tasks over every node: one per partition. */
class ProgressTasksTest {
  @Test
  void lastUpdateOfEachStage_countsOneTaskPerPartition() throws Exception {
    try (SssCluster cluster = SssCluster.embedded(3); SssClient client = cluster.client()) {
      client.createTable("rows", BulkIO.textTable(), false);
      try (BulkWriter w = client.writer("rows", BulkIO.textTable().types())) {
        for (long i = 1; i <= 1000; i++) {
          w.put(Serdes.LONG.encodeKey(i), Serdes.STRING.encodeValue("r" + i));
        }
      }
      Map<Integer, long[]> last = new ConcurrentHashMap<>();
      client.submit(Job.named("mod").input("rows", Serdes.LONG, Serdes.STRING)
          .map(TestJobs.ModTen.class, Serdes.LONG, Serdes.LONG)
          .reduce(TestJobs.SumLongs.class, Serdes.LONG, Serdes.LONG)
          .output("mod").build()).await((s, n, k, done, total, in, out, b, sec) -> last.put(s, new long[] {done, total}));
      int partitions = cluster.spec().partitionMap().partitions();
      for (int stage = 0; stage < 2; stage++) {
        assertEquals(partitions, last.get(stage)[1], "stage " + stage + ": tasks in all");
        assertEquals(partitions, last.get(stage)[0], "stage " + stage + ": every task done");
      }
    }
  }
}
