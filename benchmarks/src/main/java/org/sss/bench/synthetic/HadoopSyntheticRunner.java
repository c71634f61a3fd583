package org.sss.bench.synthetic;

import java.io.IOException;
import java.nio.file.Files;
import java.util.Comparator;
import java.util.LinkedHashMap;
import java.util.Map;
import java.util.stream.Stream;
import org.apache.hadoop.conf.Configuration;
import org.apache.hadoop.fs.FileSystem;
import org.apache.hadoop.fs.Path;
import org.apache.hadoop.io.BytesWritable;
import org.apache.hadoop.io.LongWritable;
import org.apache.hadoop.io.SequenceFile;
import org.apache.hadoop.mapreduce.Counter;
import org.apache.hadoop.mapreduce.CounterGroup;
import org.apache.hadoop.mapreduce.Counters;
import org.apache.hadoop.mapreduce.Job;
import org.apache.hadoop.mapreduce.lib.input.SequenceFileInputFormat;
import org.apache.hadoop.mapreduce.lib.output.SequenceFileOutputFormat;

/**
 * Runs synthetic points as Hadoop MapReduce jobs through the Hadoop client: the input is written
 * as one SequenceFile of (LongWritable, BytesWritable) per node (load phase; key i goes to file
 * i mod nodes), the job runs with {@code nodes} reduce tasks (job phase, timed by
 * {@link JobClock}), and its counters and output SequenceFiles are verified like SSS's
 * ({@link HadoopOutputCheck}: every pair in the part file its partitioner names, and a sample
 * by key).
 *
 * <p>Without a Hadoop configuration directory the job runs on the local job runner, on the local
 * file system, with {@code nodes x threadsPerNode} map and reduce threads (the same threads SSS
 * gets); with one, it is submitted to the cluster that directory describes.
 */
public final class HadoopSyntheticRunner {
  private final java.nio.file.Path confDir;
  private final Fault fault;

  /** @param confDir a Hadoop configuration directory (core-site.xml, ...), or null for the local job runner */
  public HadoopSyntheticRunner(java.nio.file.Path confDir) {
    this(confDir, Fault.NONE);
  }

  /** A runner whose jobs produce {@code fault} (for tests of the verification). */
  HadoopSyntheticRunner(java.nio.file.Path confDir, Fault fault) {
    this.confDir = confDir;
    this.fault = fault;
  }

  Configuration configuration(SyntheticParams p, java.nio.file.Path localWork) throws IOException {
    Configuration conf = new Configuration();
    int threads = p.nodes() * p.threadsPerNode();
    if (confDir != null) {
      try (Stream<java.nio.file.Path> files = Files.list(confDir)) {
        files.filter(f -> f.toString().endsWith(".xml")).sorted()
            .forEach(f -> conf.addResource(new Path(f.toUri())));
      }
    } else {
      conf.set("mapreduce.framework.name", "local");
      conf.set("fs.defaultFS", "file:///");
      conf.set("hadoop.tmp.dir", localWork.resolve("tmp").toString());
      conf.setInt("mapreduce.local.map.tasks.maximum", threads);
      conf.setInt("mapreduce.local.reduce.tasks.maximum", threads);
    }
    return conf;
  }

  public RunResult run(SyntheticParams p, Progress progress) throws Exception {
    if (p.partitionMethod() != SyntheticParams.PartitionMethod.AVERAGE) {
      throw new IllegalArgumentException("Hadoop cannot place reducers: partitionMethod=" + p.partitionMethod().label()
          + " runs on SSS only");
    }
    java.nio.file.Path localWork = Files.createTempDirectory("sss-synthetic-hadoop-");
    Configuration conf = configuration(p, localWork);
    FileSystem fs = FileSystem.get(conf);
    Path work = confDir == null ? new Path(localWork.toUri())
        : fs.makeQualified(new Path(conf.get("sss.bench.dir", "/tmp"), localWork.getFileName().toString()));
    Path input = new Path(work, "input");
    Path output = new Path(work, "output");
    try {
      progress.phase("load");
      long t0 = System.nanoTime();
      byte[] value = SyntheticData.pattern(p.initialValueLength());
      LongWritable k = new LongWritable();
      BytesWritable v = new BytesWritable();
      long written = 0;
      for (int f = 0; f < p.nodes(); f++) {
        try (SequenceFile.Writer w = SequenceFile.createWriter(conf,
            SequenceFile.Writer.file(new Path(input, String.format("part-%05d", f))),
            SequenceFile.Writer.keyClass(LongWritable.class), SequenceFile.Writer.valueClass(BytesWritable.class),
            SequenceFile.Writer.compression(SequenceFile.CompressionType.NONE))) {
          for (long i = f; i < p.initialKeyCount(); i += p.nodes()) {
            SyntheticData.fillInput(value, i);
            k.set(i);
            v.set(value, 0, value.length);
            w.append(k, v);
            progress.update((double) ++written / p.initialKeyCount());
          }
        }
      }
      double load = (System.nanoTime() - t0) / 1e9;

      Configuration jobConf = new Configuration(conf);
      HadoopSynthetic.configure(jobConf, p);
      Job job = Job.getInstance(jobConf, "synthetic-" + p.workload());
      job.setJarByClass(HadoopSynthetic.class);
      job.setInputFormatClass(SequenceFileInputFormat.class);
      job.setOutputFormatClass(SequenceFileOutputFormat.class);
      SequenceFileInputFormat.addInputPath(job, input);
      SequenceFileOutputFormat.setOutputPath(job, output);
      job.setMapperClass(HadoopSynthetic.SynthMapper.class);
      if (p.combinerEnabled()) {
        job.setCombinerClass(HadoopSynthetic.SynthCombiner.class);
      }
      job.setReducerClass(HadoopSynthetic.SynthReducer.class);
      job.setMapOutputKeyClass(LongWritable.class);
      job.setMapOutputValueClass(BytesWritable.class);
      job.setOutputKeyClass(LongWritable.class);
      job.setOutputValueClass(BytesWritable.class);
      job.setNumReduceTasks(p.nodes());
      if (fault != Fault.NONE) {
        job.getConfiguration().set(Fault.CONFIG, fault.label());
        if (fault == Fault.WRONG_PARTITION) {
          job.setPartitionerClass(HadoopSynthetic.MisplacingPartitioner.class);
        }
      }

      progress.phase("job");
      long t1 = System.nanoTime();
      job.submit();
      double jobSeconds = JobClock.waitFor(t1, job::isComplete, () -> {
        try {
          progress.update((job.mapProgress() + job.reduceProgress()) / 2);
        } catch (IOException ignored) {
          // progress only
        }
      });
      if (!job.isSuccessful()) {
        throw new IllegalStateException("Hadoop job " + job.getJobID() + " failed: " + job.getStatus().getFailureInfo());
      }

      progress.phase("verify");
      Counters counters = job.getCounters();
      Expected expected = Expected.compute(p, null, p.nodes());
      Observed seen = new Observed(expected.keys());
      seen.inputRecords = counter(counters, SyntheticData.INPUT_RECORDS);
      seen.inputCrc = counter(counters, SyntheticData.INPUT_CRC);
      seen.values = counter(counters, SyntheticData.REDUCE_VALUES);
      seen.valueCrc = counter(counters, SyntheticData.REDUCE_CRC);
      seen.reduceKeys = counter(counters, SyntheticData.REDUCE_KEYS);
      seen.reduceDigest = counter(counters, SyntheticData.REDUCE_DIGEST);
      int byKey = HadoopOutputCheck.read(conf, fs, output, p.nodes(), expected, seen);
      String problem = seen.compare(expected);
      Map<String, Long> shown = counterMap(counters);
      shown.put("verify.keysReadByKey", (long) byKey);
      return new RunResult(load, jobSeconds, problem.isEmpty(), problem, shown);
    } finally {
      try {
        fs.delete(work, true);
      } finally {
        deleteTree(localWork);
      }
    }
  }

  private static long counter(Counters counters, String name) {
    return counters.findCounter(HadoopSynthetic.GROUP, name).getValue();
  }

  /** Hadoop's task counters and the benchmark's own, by short name. */
  static Map<String, Long> counterMap(Counters counters) {
    Map<String, Long> out = new LinkedHashMap<>();
    for (CounterGroup g : counters) {
      String group = g.getName();
      if (!group.endsWith("TaskCounter") && !group.equals(HadoopSynthetic.GROUP)) {
        continue;
      }
      for (Counter c : g) {
        out.put(group.equals(HadoopSynthetic.GROUP) ? "synthetic." + c.getName() : c.getName(), c.getValue());
      }
    }
    return out;
  }

  static void deleteTree(java.nio.file.Path dir) {
    try (Stream<java.nio.file.Path> paths = Files.walk(dir)) {
      paths.sorted(Comparator.reverseOrder()).forEach(f -> f.toFile().delete());
    } catch (IOException ignored) {
      // best effort: a temporary directory
    }
  }
}
