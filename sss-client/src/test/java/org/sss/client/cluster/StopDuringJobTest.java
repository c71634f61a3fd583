package org.sss.client.cluster;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.nio.file.Path;
import java.util.List;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.io.TempDir;
import org.sss.client.BulkWriter;
import org.sss.client.SssClient;
import org.sss.client.TableSpec;
import org.sss.client.TableStatus;
import org.sss.client.job.Job;
import org.sss.client.job.RunningJob;
import org.sss.client.job.TestJobs;
import org.sss.core.api.Serdes;
import org.sss.core.keys.PairTypes;
import org.sss.core.proto.DataType;

/** A cluster stop while a job runs: the job fails promptly, saying why; nothing is left behind. */
@Timeout(value = 240, unit = TimeUnit.SECONDS)
class StopDuringJobTest {
  @TempDir
  Path work;

  @Test
  void stopWhileAJobRuns_failsTheJobClearly_andLeavesNoJobTables() throws Exception {
    Path dir = work.resolve("c");
    LocalProcessCluster cluster = LocalProcessCluster.start(dir, 2, 0, "256m");
    try (SssClient client = cluster.client()) {
      client.createTable("rows", TableSpec.of(PairTypes.of(DataType.LONG, DataType.STRING)), false);
      try (BulkWriter w = client.writer("rows", PairTypes.of(DataType.LONG, DataType.STRING))) {
        for (long i = 1; i <= 20_000; i++) {
          w.put(Serdes.LONG.encodeKey(i), Serdes.STRING.encodeValue("row " + i));
        }
      }
      RunningJob job = client.submit(Job.named("slow").input("rows", Serdes.LONG, Serdes.STRING)
          .map(TestJobs.Slow.class, Serdes.LONG, Serdes.LONG)
          .reduce(TestJobs.SumLongs.class, Serdes.LONG, Serdes.LONG).output("out").build());
      Thread.sleep(3000);
      long t0 = System.nanoTime();
      List<String> report = cluster.stop();
      System.out.println("stop report " + report + " after " + (System.nanoTime() - t0) / 1_000_000 + " ms");
      RuntimeException e = assertThrows(RuntimeException.class, job::await);
      System.out.println("job failed with: " + e);
      for (String line : report) {
        assertTrue(line.contains("stopped, "), report.toString());
      }
    }
    cluster = LocalProcessCluster.start(dir, 0, 0, null);
    try (SssClient client = cluster.client()) {
      assertEquals(20_000, client.count("rows"));
      for (TableStatus t : client.listTables()) {
        assertTrue(t.name().equals("rows"), "left behind: " + t.name());
      }
    } finally {
      cluster.stopAll();
    }
  }
}
