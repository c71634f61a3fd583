package org.sss.client.it;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.nio.file.Files;
import java.nio.file.Path;
import java.util.Map;
import java.util.TreeMap;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;
import org.sss.client.BulkWriter;
import org.sss.client.ScanOptions;
import org.sss.client.SssClient;
import org.sss.client.TableScan;
import org.sss.client.cluster.LocalProcessCluster;
import org.sss.client.io.BulkIO;
import org.sss.client.job.Job;
import org.sss.client.job.JobResult;
import org.sss.client.job.RunningJob;
import org.sss.client.job.TestJobs;
import org.sss.core.api.Emitter;
import org.sss.core.api.Mapper;
import org.sss.core.api.Pair;
import org.sss.core.api.TaskContext;
import org.sss.core.cluster.ClusterSpec;
import org.sss.core.api.Serdes;

/**
 * A node killed (kill -9) while a job maps and a bulk load writes, on three server processes
 * keeping two copies: the job runs again on the nodes in sync once the members decide the node
 * out, and completes with the answer a plain count gives, its counters saying it ran again (so
 * does the same job writing part files, whose directory then holds the parts and _SUCCESS, the first
 * attempt's directory below _temporary gone); the
 * load goes on and every pair it wrote is there. The node then comes back, gets the output
 * table made while it was out, and every copy of both tables is the test's model.
 */
@Tag("serial") // timing it checks (decisions after 5 s of silence, reruns, synced writes): alone on the cores
class JobNodeLossTest {
  private static final int ROWS = 30_000;
  private static final int GROUPS = 97;

  @TempDir
  Path dir;
  /** The pairs the load wrote, as the test kept them. */
  private Map<Long, String> loaded;

  @Test
  void nodeKilledMidJob_jobRunsAgainOnTheSurvivors_andItsOutputReachesTheNodeWhenItReturns() throws Exception {
    LocalProcessCluster cluster = LocalProcessCluster.start(dir, 3, 0, 2, "512m");
    try {
      ClusterSpec spec = cluster.spec();
      Map<Long, Long> expected = new TreeMap<>();
      Path gate = Files.createDirectories(dir.resolve("gate"));
      try (SssClient client = SssClient.connect(spec)) {
        client.createTable("rows", BulkIO.textTable(), false);
        try (BulkWriter w = client.writer("rows", BulkIO.textTable().types())) {
          for (long i = 1; i <= ROWS; i++) {
            w.put(Serdes.LONG.encodeKey(i), Serdes.STRING.encodeValue("row " + i));
            expected.merge(i % GROUPS, 1L, Long::sum);
          }
        }
        client.createTable("loaded", BulkIO.textTable(), false);
        Map<Long, String> loaded = new TreeMap<>();
        java.util.concurrent.atomic.AtomicBoolean stopLoading = new java.util.concurrent.atomic.AtomicBoolean();
        java.util.concurrent.atomic.AtomicLong written = new java.util.concurrent.atomic.AtomicLong();
        java.util.concurrent.CompletableFuture<Long> load = java.util.concurrent.CompletableFuture.supplyAsync(() -> {
          try (SssClient loader = SssClient.connect(spec);
               BulkWriter w = loader.writer("loaded", BulkIO.textTable().types(), 64 << 10, 4)) {
            long i = 0;
            while (!stopLoading.get()) {
              i++;
              w.put(Serdes.LONG.encodeKey(i), Serdes.STRING.encodeValue("loaded " + i));
              loaded.put(i, "loaded " + i);
              written.set(i);
              if (i % 100 == 0) {
                Thread.sleep(5); // a load that spans the node's death and the members' decision
              }
            }
            w.close();
            return w.acknowledged();
          } catch (InterruptedException e) {
            throw new IllegalStateException(e);
          }
        });
        RunningJob job = client.submit(Job.named("groups").input("rows", Serdes.LONG, Serdes.STRING)
            .map(GatedModulo.class, Serdes.LONG, Serdes.LONG)
            .reduce(TestJobs.SumLongs.class, Serdes.LONG, Serdes.LONG)
            .output("groups").config(GatedModulo.GATE, gate.toString()).build());
        // the same job writing part files: its attempt's files are given up with the attempt
        Path filesGate = Files.createDirectories(dir.resolve("files-gate"));
        Path out = dir.resolve("groups-out");
        RunningJob filesJob = client.submit(Job.named("groups-files").input("rows", Serdes.LONG, Serdes.STRING)
            .map(GatedModulo.class, Serdes.LONG, Serdes.LONG)
            .reduce(TestJobs.SumLongs.class, Serdes.LONG, Serdes.LONG)
            .outputText(out).config(GatedModulo.GATE, filesGate.toString()).build());
        long deadline = System.nanoTime() + 60_000_000_000L;
        while (!started(gate, 1) || !started(filesGate, 1)) {
          assertTrue(System.nanoTime() < deadline, "node 1 did not start mapping within 60 s");
          Thread.sleep(20);
        }
        cluster.kill(1);
        long writtenAtKill = written.get();
        Files.writeString(gate.resolve("open"), "");
        Files.writeString(filesGate.resolve("open"), "");
        JobResult result = job.await();
        assertEquals(1L, result.counters().get(JobResult.RERUNS_COUNTER), result.counters().toString());
        assertEquals(expected, read(client, "groups"), "the job's answer, computed without node 1");
        assertEquals(GROUPS, client.count("groups"));
        JobResult filesResult = filesJob.await();
        assertEquals(1L, filesResult.counters().get(JobResult.RERUNS_COUNTER), filesResult.counters().toString());
        Map<Long, Long> inFiles = new TreeMap<>();
        try (var entries = Files.list(out)) {
          for (Path p : entries.toList()) {
            String name = p.getFileName().toString();
            if (name.equals(org.sss.core.io.TextOutputDir.SUCCESS)) {
              continue;
            }
            assertTrue(name.matches("part-r-\\d{5}"), "parts and _SUCCESS only (the first attempt's"
                + " _temporary directory is gone): " + name);
            for (String line : Files.readAllLines(p)) {
              String[] kv = line.split("\t");
              assertEquals(null, inFiles.put(Long.parseLong(kv[0]), Long.parseLong(kv[1])), "a group twice: " + line);
            }
          }
        }
        assertEquals(expected, inFiles, "the part files' answer, computed without node 1");
        assertTrue(Files.exists(out.resolve(org.sss.core.io.TextOutputDir.SUCCESS)));
        long until = System.nanoTime() + 30_000_000_000L;
        while (written.get() < writtenAtKill + 2_000 && System.nanoTime() < until && !load.isDone()) {
          Thread.sleep(20); // the load goes on without node 1, now decided out
        }
        stopLoading.set(true);
        long acknowledged = load.get(120, java.util.concurrent.TimeUnit.SECONDS);
        assertEquals(loaded.size(), acknowledged, "every pair acknowledged once");
        assertTrue(loaded.size() > writtenAtKill + 1_000, "the load went on after the node's death: "
            + writtenAtKill + " pairs before, " + loaded.size() + " in all");
        assertEquals(loaded.size(), client.count("loaded"));
        this.loaded = loaded;
      }

      cluster = LocalProcessCluster.start(dir, 0, 0, "512m"); // node 1 back: it catches up
      try (SssClient client = SssClient.connect(spec)) {
        long deadline = System.nanoTime() + 90_000_000_000L;
        while (!client.view().whole()) {
          assertTrue(System.nanoTime() < deadline, "node 1 did not catch up within 90 s: " + client.view());
          Thread.sleep(200);
        }
        EveryCopy.assertEveryCopy(client, spec, "groups", expected, Serdes.LONG::decodeValue);
        EveryCopy.assertEveryCopy(client, spec, "loaded", this.loaded, Serdes.STRING::decodeValue);
        // and a job with every node in again gives the same answer
        client.submit(Job.named("again").input("rows", Serdes.LONG, Serdes.STRING)
            .map(TestJobs.ModTen.class, Serdes.LONG, Serdes.LONG)
            .reduce(TestJobs.SumLongs.class, Serdes.LONG, Serdes.LONG).output("tens").build()).await();
        Map<Long, Long> tens = new TreeMap<>();
        for (long i = 1; i <= ROWS; i++) {
          tens.merge(i % 10, 1L, Long::sum);
        }
        assertEquals(tens, read(client, "tens"));
      }
    } finally {
      cluster.stopAll();
    }
  }

  private static boolean started(Path gate, int node) throws java.io.IOException {
    try (var files = Files.list(gate)) {
      return files.anyMatch(f -> f.getFileName().toString().startsWith("started node " + node + " "));
    }
  }

  private static Map<Long, Long> read(SssClient client, String table) {
    Map<Long, Long> out = new TreeMap<>();
    try (TableScan s = client.scan(table, ScanOptions.anyOrder())) {
      while (s.hasNext()) {
        Pair p = s.next();
        assertEquals(null, out.put(Serdes.LONG.decodeKey(p.key()), Serdes.LONG.decodeValue(p.value())));
      }
    }
    return out;
  }


  /**
   * (n, v) -> (n mod 97, 1), behind a gate: each task announces itself with the file
   * {@code GATE/started node N partition P} and waits (at most 120 s) for {@code GATE/open}, so
   * that the job is mapping when the test kills a node.
   */
  public static final class GatedModulo implements Mapper<Long, String, Long, Long> {
    static final String GATE = "gate.dir";

    @Override
    public void setup(TaskContext context) throws Exception {
      Path gate = Path.of(context.get(GATE, "gate-directory-not-configured"));
      Files.createFile(gate.resolve("started node " + context.nodeId() + " partition " + context.partition()
          + " " + System.nanoTime()));
      long deadline = System.nanoTime() + 120_000_000_000L;
      while (!Files.exists(gate.resolve("open")) && System.nanoTime() < deadline) {
        Thread.sleep(10); // an abort interrupts this
      }
    }

    @Override
    public void map(Long key, String value, Emitter<Long, Long> out) {
      out.emit(key % GROUPS, 1L);
    }
  }
}
