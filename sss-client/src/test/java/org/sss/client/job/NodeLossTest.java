package org.sss.client.job;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.nio.file.Path;
import java.time.Duration;
import java.util.List;
import java.util.Map;
import java.util.TreeMap;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;
import org.sss.client.BulkWriter;
import org.sss.client.ScanOptions;
import org.sss.client.SssClient;
import org.sss.client.TableScan;
import org.sss.client.TableStatus;
import org.sss.client.cluster.LocalProcessCluster;
import org.sss.client.io.BulkIO;
import org.sss.core.api.Pair;
import org.sss.core.api.Serdes;

/** A server process killed mid-job: the job fails naming the node; after a restart jobs are correct again. */
class NodeLossTest {
  @TempDir
  Path dir;

  @Test
  void killNodeMidJob_failsNamingNodeThenRecovers() throws Exception {
    LocalProcessCluster cluster = LocalProcessCluster.start(dir, 3, 0, "512m");
    try {
      try (SssClient client = SssClient.connect(cluster.spec())) {
        client.createTable("rows", BulkIO.textTable(), false);
        try (BulkWriter w = client.writer("rows", BulkIO.textTable().types())) {
          for (long i = 1; i <= 30_000; i++) {
            w.put(Serdes.LONG.encodeKey(i), Serdes.STRING.encodeValue("row " + i));
          }
        }
        // the job's map tasks wait at the gate: it is running, on node 1 too, when node 1 dies
        Gate gate = new Gate(dir.resolve("gate"));
        Job gated = gate.configure(Job.named("gated").input("rows", Serdes.LONG, Serdes.STRING)
            .map(Gate.Gated.class, Serdes.LONG, Serdes.LONG)
            .reduce(TestJobs.SumLongs.class, Serdes.LONG, Serdes.LONG)
            .output("out").overwrite()).build();
        RunningJob job = client.submit(gated);
        try {
          gate.awaitStarted(s -> s.startsWith("node 1 "), Duration.ofSeconds(60));
          cluster.kill(1);
          // the tasks wait at the gate: only node 1's loss can end the job, and its closed
          // connection says so while they still wait (not a request's timeout, minutes later)
          JobFailedException e = assertThrows(JobFailedException.class, job::await);
          assertTrue(e.getMessage().contains("lost connection to node 1 (")
              || e.getMessage().contains("cannot connect to node 1 ("), e.getMessage());
          assertEquals(List.of(), gate.passed(), "the job failed while its tasks waited at the gate");
        } finally {
          gate.open();
        }
      }
      cluster = LocalProcessCluster.start(dir, 3, 0, "512m");
      try (SssClient client = SssClient.connect(cluster.spec())) {
        for (TableStatus t : client.listTables()) {
          assertTrue(!t.name().startsWith("sss-tmp-"), "left behind: " + t.name());
        }
        assertEquals(30_000, client.count("rows"), "user data must survive");
        client.submit(Job.named("after").input("rows", Serdes.LONG, Serdes.STRING)
            .map(TestJobs.ModTen.class, Serdes.LONG, Serdes.LONG)
            .reduce(TestJobs.SumLongs.class, Serdes.LONG, Serdes.LONG)
            .output("out").overwrite().build()).await();
        Map<Long, Long> actual = new TreeMap<>();
        try (TableScan s = client.scan("out", ScanOptions.inKeyOrder())) {
          while (s.hasNext()) {
            Pair p = s.next();
            actual.put(Serdes.LONG.decodeKey(p.key()), Serdes.LONG.decodeValue(p.value()));
          }
        }
        Map<Long, Long> expected = new TreeMap<>();
        for (long k = 0; k < 10; k++) {
          expected.put(k, 3000L);
        }
        assertEquals(expected, actual);
      }
    } finally {
      cluster.stopAll();
    }
  }
}
