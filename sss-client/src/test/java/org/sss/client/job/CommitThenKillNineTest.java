package org.sss.client.job;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.nio.file.Path;
import java.util.List;
import java.util.Map;
import java.util.TreeMap;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;
import org.sss.client.SssClient;
import org.sss.client.TableStatus;
import org.sss.client.cluster.LocalProcessCluster;
import org.sss.core.api.Serdes;
import org.sss.core.keys.PairTypes;

/** kill -9 of every node right after a job committed: output and kept intermediates survive. */
class CommitThenKillNineTest {
  @TempDir
  Path dir;

  @Test
  void killNineRightAfterCommit_outputAndKeptIntermediateSurvive() throws Exception {
    LocalProcessCluster cluster = LocalProcessCluster.start(dir, 3, 0, "256m");
    try {
      try (SssClient client = SssClient.connect(cluster.spec())) {
        JobCommitEdgesTest.loadRows(client, "rows", 3000);
        // an old output, replaced by the commit
        client.submit(JobCommitEdgesTest.modTenOf("rows", "dur-out")).await();
        JobResult r = client.submit(Job.named("dur").input("rows", Serdes.LONG, Serdes.STRING)
            .map(TestJobs.ModTen.class, Serdes.LONG, Serdes.LONG)
            .reduce(TestJobs.SumLongs.class, Serdes.LONG, Serdes.LONG)
            .output("dur-out").overwrite().keepIntermediate().build()).await();
        assertEquals(List.of("dur-out.stage0"), r.intermediateTables());
        // once committed, the output is written with its WAL like any table (the job wrote it without)
        List<org.sss.core.api.Pair> later = new java.util.ArrayList<>();
        for (long k = 100; k < 110; k++) {
          later.add(new org.sss.core.api.Pair(Serdes.LONG.encodeKey(k), Serdes.LONG.encodeValue(k * 7)));
        }
        client.putAll("dur-out", org.sss.core.keys.PairTypes.of(Serdes.LONG, Serdes.LONG), later);
        for (int n = 0; n < 3; n++) {
          cluster.kill(n);
        }
      }
      cluster = LocalProcessCluster.start(dir, 3, 0, "256m");
      try (SssClient client = SssClient.connect(cluster.spec())) {
        for (TableStatus t : client.listTables()) {
          assertTrue(!t.name().startsWith("sss-tmp-"), "left behind: " + t.name());
        }
        Map<Long, Long> out = new TreeMap<>(JobCommitEdgesTest.modTenExpected(3000));
        for (long k = 100; k < 110; k++) {
          out.put(k, k * 7);
        }
        assertEquals(out, JobCommitEdgesTest.readLongs(client, "dur-out"));
        assertEquals(3000, client.count("dur-out.stage0"));
        Map<Long, Long> counts = new TreeMap<>();
        client.submit(Job.named("again").input("dur-out.stage0", Serdes.LONG, Serdes.LONG)
            .reduce(TestJobs.SumLongs.class, Serdes.LONG, Serdes.LONG).output("again-out").build()).await();
        counts.putAll(JobCommitEdgesTest.readLongs(client, "again-out"));
        assertEquals(JobCommitEdgesTest.modTenExpected(3000), counts);
      }
    } finally {
      cluster.stopAll();
    }
  }
}
