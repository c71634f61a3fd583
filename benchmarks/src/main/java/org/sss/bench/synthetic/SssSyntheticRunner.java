package org.sss.bench.synthetic;

import java.net.URISyntaxException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.LinkedHashMap;
import java.util.Map;
import org.sss.client.BulkWriter;
import org.sss.client.SssClient;
import org.sss.client.TableSpec;
import org.sss.client.cluster.SssCluster;
import org.sss.client.job.Job;
import org.sss.client.job.JobResult;
import org.sss.client.job.StageSummary;
import org.sss.core.api.Serdes;
import org.sss.core.cluster.PartitionMap;
import org.sss.core.keys.KeyCodec;
import org.sss.core.keys.PairTypes;
import org.sss.core.proto.DataType;

/**
 * Runs synthetic points on SSS: loads the input table with the bulk writer (load phase), runs
 * the map/reduce job (job phase, timed by {@link JobClock}), then verifies the counters and the
 * output table ({@link SssOutputCheck}: every pair where it is stored, and a sample by key).
 */
public final class SssSyntheticRunner {
  private final SssCluster cluster;
  private final boolean shipJar;
  private final Fault fault;

  /**
   * @param cluster a running cluster (embedded or remote); not closed here
   * @param shipJar send the benchmark's JAR with each job (a remote cluster's servers lack it)
   */
  public SssSyntheticRunner(SssCluster cluster, boolean shipJar) {
    this(cluster, shipJar, Fault.NONE);
  }

  /** A runner whose jobs produce {@code fault} (for tests of the verification). */
  SssSyntheticRunner(SssCluster cluster, boolean shipJar, Fault fault) {
    this.cluster = cluster;
    this.shipJar = shipJar;
    this.fault = fault;
  }

  public RunResult run(SyntheticParams p, Progress progress) throws Exception {
    return run(p, progress, null);
  }

  /** Looks at a run's tables after its job, before they are dropped (tests check them against their own answers). */
  @FunctionalInterface
  interface TableCheck {
    void check(SssClient client, String input, String output, JobResult job) throws Exception;
  }

  RunResult run(SyntheticParams p, Progress progress, TableCheck afterJob) throws Exception {
    String id = Long.toHexString(System.nanoTime());
    String in = "synthetic-in-" + id;
    String out = "synthetic-out-" + id;
    try (SssClient client = cluster.client()) {
      PartitionMap map = client.spec().partitionMap();
      if (map.nodes() != p.nodes()) {
        throw new IllegalArgumentException("the cluster has " + map.nodes() + " nodes but the parameters say nodes="
            + p.nodes());
      }
      try {
        client.createTable(in, TableSpec.of(PairTypes.of(DataType.LONG, DataType.BYTES)), false);
        progress.phase("load");
        long t0 = System.nanoTime();
        byte[] value = SyntheticData.pattern(p.initialValueLength());
        try (BulkWriter w = client.writer(in, PairTypes.of(DataType.LONG, DataType.BYTES))) {
          for (long i = 0; i < p.initialKeyCount(); i++) {
            SyntheticData.fillInput(value, i);
            w.put(KeyCodec.encodeLong(i), value);
            progress.update((double) (i + 1) / p.initialKeyCount());
          }
        }
        double load = (System.nanoTime() - t0) / 1e9;

        Job.Builder b = Job.named("synthetic-" + p.workload())
            .input(in, Serdes.LONG, Serdes.BYTES)
            .map(SssSynthetic.SynthMapper.class, Serdes.LONG, Serdes.BYTES);
        if (p.combinerEnabled()) {
          b.combine(SssSynthetic.SynthCombiner.class);
        }
        switch (p.partitionMethod()) {
          case LOCAL -> b.partitionBy(SssSynthetic.LocalPartitioner.class);
          case SHIFTED -> b.partitionBy(SssSynthetic.ShiftedPartitioner.class);
          default -> { }
        }
        b.reduce(SssSynthetic.SynthReducer.class, Serdes.LONG, Serdes.BYTES).output(out).overwrite()
            .threads(p.threadsPerNode());
        boolean multiValued = p.partitionMethod() != SyntheticParams.PartitionMethod.AVERAGE;
        if (multiValued) {
          // each node reduces its own part of a key: several output values per key
          b.multiValuedOutput();
        }
        SssSynthetic.config(p).forEach(b::config);
        if (fault != Fault.NONE) {
          b.config(Fault.CONFIG, fault.label());
          if (fault == Fault.WRONG_PARTITION) {
            b.partitionBy(SssSynthetic.MisplacingPartitioner.class); // the reduce stage's: where its output goes
          }
        }
        Path jar = shipJar ? ownJar() : null;
        if (jar != null) {
          b.jar(jar);
        }
        Job job = b.build();
        progress.phase("job");
        JobClock.Timed<JobResult> timed = JobClock.sss(client, job,
            (stage, stages, kind, done, total, rin, rout, bytes, sec) ->
                progress.update((stage + (total == 0 ? 0 : (double) done / total)) / stages));
        JobResult r = timed.value();

        progress.phase("verify");
        Expected expected = Expected.compute(p, multiValued ? i -> map.nodeOf(KeyCodec.encodeLong(i)) : null,
            p.nodes());
        Observed seen = new Observed(expected.keys());
        seen.inputRecords = r.counter(SyntheticData.INPUT_RECORDS);
        seen.inputCrc = r.counter(SyntheticData.INPUT_CRC);
        seen.values = r.counter(SyntheticData.REDUCE_VALUES);
        seen.valueCrc = r.counter(SyntheticData.REDUCE_CRC);
        seen.reduceKeys = r.counter(SyntheticData.REDUCE_KEYS);
        seen.reduceDigest = r.counter(SyntheticData.REDUCE_DIGEST);
        int byKey = SssOutputCheck.read(client, out, multiValued, expected, seen);
        if (afterJob != null) {
          afterJob.check(client, in, out, r);
        }
        String problem = seen.compare(expected);
        Map<String, Long> counters = new LinkedHashMap<>();
        for (StageSummary s : r.stages()) {
          String k = s.kind() + ".";
          counters.put(k + "recordsIn", s.recordsIn());
          counters.put(k + "recordsOut", s.recordsOut());
          counters.put(k + "recordsShuffled", s.recordsShuffled());
          counters.put(k + "bytesShuffled", s.bytesShuffled());
          counters.put(k + "millis", Math.round(s.seconds() * 1000));
        }
        counters.put("reduce.keys", r.counter(SyntheticData.REDUCE_KEYS));
        counters.put("verify.keysReadByKey", (long) byKey);
        return new RunResult(load, timed.seconds(), problem.isEmpty(), problem, counters);
      } finally {
        client.dropTable(in, true);
        client.dropTable(out, true);
      }
    }
  }

  /** The benchmark's JAR, shipped with jobs so that a remote cluster can load the classes. */
  static Path ownJar() {
    try {
      var src = SssSynthetic.class.getProtectionDomain().getCodeSource();
      if (src == null) {
        return null;
      }
      Path p = Path.of(src.getLocation().toURI());
      return Files.isRegularFile(p) && p.toString().endsWith(".jar") ? p : null;
    } catch (URISyntaxException | RuntimeException e) {
      return null;
    }
  }
}
