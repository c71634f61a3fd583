package org.sss.bench.classic;

import java.io.ByteArrayOutputStream;
import java.io.IOException;
import java.io.InputStream;
import java.io.OutputStream;
import java.io.PrintStream;
import java.io.UncheckedIOException;
import java.math.BigDecimal;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.List;
import java.util.concurrent.Callable;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.stream.Stream;
import org.apache.hadoop.conf.Configuration;
import org.apache.hadoop.examples.QuasiMonteCarlo;
import org.apache.hadoop.examples.RandomTextWriter;
import org.apache.hadoop.examples.WordCount;
import org.apache.hadoop.fs.Path;
import org.apache.hadoop.io.IntWritable;
import org.apache.hadoop.io.Text;
import org.apache.hadoop.mapreduce.Job;
import org.apache.hadoop.mapreduce.lib.input.FileInputFormat;
import org.apache.hadoop.mapreduce.lib.output.FileOutputFormat;
import org.apache.hadoop.mapreduce.lib.output.TextOutputFormat;
import org.apache.hadoop.util.ToolRunner;
import org.sss.bench.synthetic.JobClock;
import org.sss.bench.synthetic.Progress;

/**
 * Hadoop's own example classes ({@code hadoop-mapreduce-examples} 3.4.2) on the local job runner,
 * with {@code threads} map and reduce threads: {@code RandomTextWriter} (its Tool, with one map
 * per thread), {@code WordCount} (its mapper, combiner and reducer, wired as its {@code main}
 * does, with one reduce task per thread) and {@code QuasiMonteCarlo.estimatePi}.
 */
public final class HadoopClassic {
  private final int threads;
  private final java.nio.file.Path work;

  /** @param work a local directory for Hadoop's temporary files */
  public HadoopClassic(int threads, java.nio.file.Path work) {
    this.threads = threads;
    this.work = work;
  }

  /**
   * The local job runner's configuration with the benchmark's thread count. Hadoop's own
   * {@code Job.waitForCompletion}, which RandomTextWriter and QuasiMonteCarlo call, polls the job
   * every second ({@code mapreduce.client.progressmonitor.pollinterval}, 1000 ms, or the
   * completion poll interval, 5000 ms): here both are the benchmark's {@link JobClock} interval,
   * so Hadoop's end is seen as SSS's is.
   */
  public Configuration configuration() {
    Configuration conf = new Configuration();
    conf.set("mapreduce.framework.name", "local");
    conf.set("fs.defaultFS", "file:///");
    conf.set("hadoop.tmp.dir", work.resolve("hadoop-tmp").toString());
    conf.setInt("mapreduce.local.map.tasks.maximum", threads);
    conf.setInt("mapreduce.local.reduce.tasks.maximum", threads);
    conf.setInt("mapreduce.client.progressmonitor.pollinterval", (int) JobClock.POLL_MILLIS);
    conf.setInt("mapreduce.client.completion.pollinterval", (int) JobClock.POLL_MILLIS);
    return conf;
  }

  /** What RandomTextWriter wrote. */
  public record TextResult(double seconds, int parts, long lines, long keyValueBytes, String problem) {}

  /**
   * Runs Hadoop's RandomTextWriter into {@code out} (a new directory) as text
   * ({@code -outFormat TextOutputFormat}: {@code key<TAB>value} lines), {@code threads} maps
   * writing {@code totalBytes / threads} bytes of keys and values each (Hadoop counts the words
   * and their trailing blanks, not the tab and newline); then (untimed) checks the part files
   * and concatenates them in order into {@code text}.
   *
   * <p>The local job runner forces every job to one map ({@code LocalClientProtocolProvider}
   * sets {@code mapreduce.job.maps=1}, which RandomTextWriter's input format reads), so the
   * {@code threads} maps are {@code threads} RandomTextWriter jobs of one map each, submitted at
   * once (into {@code out/job-N}); the time is from the first submission to the last job's end.
   */
  public TextResult randomTextWriter(long totalBytes, java.nio.file.Path out, java.nio.file.Path text,
                                     Progress progress) throws Exception {
    int maps = (int) Math.min(threads, Math.max(1, totalBytes));
    progress.phase("job");
    long t0 = System.nanoTime();
    PrintStream stdout = System.out;
    System.setOut(new PrintStream(OutputStream.nullOutputStream(), true, StandardCharsets.UTF_8));
    ExecutorService pool = Executors.newFixedThreadPool(maps);
    try {
      List<Future<Integer>> jobs = new ArrayList<>();
      for (int m = 0; m < maps; m++) {
        long share = totalBytes / maps + (m < totalBytes % maps ? 1 : 0);
        Configuration conf = configuration();
        conf.setLong(RandomTextWriter.TOTAL_BYTES, share);
        conf.setLong(RandomTextWriter.BYTES_PER_MAP, share);
        String[] args = {"-outFormat", TextOutputFormat.class.getName(), out.resolve("job-" + m).toString()};
        jobs.add(pool.submit(() -> ToolRunner.run(conf, new RandomTextWriter(), args)));
      }
      for (int m = 0; m < maps; m++) {
        int rc = jobs.get(m).get();
        if (rc != 0) {
          throw new IllegalStateException("Hadoop RandomTextWriter job " + m + " failed (exit " + rc + ")");
        }
      }
    } finally {
      pool.shutdownNow();
      System.setOut(stdout);
    }
    double seconds = (System.nanoTime() - t0) / 1e9;
    progress.phase("verify");
    StringBuilder problem = new StringBuilder();
    long lines = 0;
    long kv = 0;
    int partCount = 0;
    byte[] buf = new byte[1 << 20];
    try (OutputStream os = Files.newOutputStream(text)) {
      for (int m = 0; m < maps; m++) {
        long share = totalBytes / maps + (m < totalBytes % maps ? 1 : 0);
        List<java.nio.file.Path> parts = WordCounts.parts(out.resolve("job-" + m), "part-m-");
        if (parts.size() != 1) {
          problem.append("job ").append(m).append(" wrote ").append(parts.size()).append(" part files; ");
        }
        for (java.nio.file.Path part : parts) {
          partCount++;
          long partLines = 0;
          long tabs = 0;
          long bytes = 0;
          try (InputStream in = Files.newInputStream(part)) {
            for (int n = in.read(buf); n > 0; n = in.read(buf)) {
              for (int i = 0; i < n; i++) {
                byte b = buf[i];
                if (b == '\n') {
                  partLines++;
                } else if (b == '\t') {
                  tabs++;
                }
              }
              bytes += n;
              os.write(buf, 0, n);
            }
          }
          long partKv = bytes - 2 * partLines;
          if (tabs != partLines) {
            problem.append("job ").append(m).append(": ").append(tabs).append(" tabs in ").append(partLines)
                .append(" lines; ");
          }
          if (partKv < share || partKv > share + (1 << 16)) {
            problem.append("job ").append(m).append(": ").append(partKv).append(" bytes of words, asked ")
                .append(share).append("; ");
          }
          lines += partLines;
          kv += partKv;
        }
      }
    }
    return new TextResult(seconds, partCount, lines, kv, problem.toString());
  }

  /** Runs Hadoop's WordCount on {@code input} into {@code out} (a new directory); returns the job's seconds. */
  public double wordCount(java.nio.file.Path input, java.nio.file.Path out, Progress progress) throws Exception {
    Job job = wordCountJob(configuration(), new Path(input.toUri()), new Path(out.toUri()), threads);
    progress.phase("job");
    long t0 = System.nanoTime();
    job.submit();
    double seconds = JobClock.waitFor(t0, job::isComplete, () -> {
      try {
        progress.update((job.mapProgress() * 9 + job.reduceProgress()) / 10);
      } catch (IOException ignored) {
        // progress only
      }
    });
    if (!job.isSuccessful()) {
      throw new IllegalStateException("Hadoop WordCount " + job.getJobID() + " failed: "
          + job.getStatus().getFailureInfo());
    }
    return seconds;
  }

  /**
   * The job {@code org.apache.hadoop.examples.WordCount.main} builds: its TokenizerMapper,
   * IntSumReducer as combiner and reducer, Text/IntWritable output as text lines; with
   * {@code reduces} reduce tasks.
   */
  public static Job wordCountJob(Configuration conf, Path in, Path out, int reduces) throws IOException {
    Job job = Job.getInstance(conf, "word count");
    job.setJarByClass(WordCount.class);
    job.setMapperClass(WordCount.TokenizerMapper.class);
    job.setCombinerClass(WordCount.IntSumReducer.class);
    job.setReducerClass(WordCount.IntSumReducer.class);
    job.setOutputKeyClass(Text.class);
    job.setOutputValueClass(IntWritable.class);
    job.setNumReduceTasks(reduces);
    FileInputFormat.addInputPath(job, in);
    FileOutputFormat.setOutputPath(job, out);
    return job;
  }

  /** Runs {@code QuasiMonteCarlo.estimatePi}; returns {seconds, estimate}. */
  public Object[] pi(int maps, long samples, java.nio.file.Path tmp, Progress progress) throws Exception {
    Configuration conf = configuration();
    progress.phase("job");
    long t0 = System.nanoTime();
    BigDecimal estimate = quietly(() -> QuasiMonteCarlo.estimatePi(maps, samples, new Path(tmp.toUri()), conf));
    return new Object[] {(System.nanoTime() - t0) / 1e9, estimate};
  }

  /** Runs Hadoop code that prints to stdout ("Running 2 maps.", "Starting Job") with stdout set aside. */
  static <T> T quietly(Callable<T> body) throws Exception {
    PrintStream old = System.out;
    ByteArrayOutputStream sink = new ByteArrayOutputStream();
    System.setOut(new PrintStream(sink, true, StandardCharsets.UTF_8));
    try {
      return body.call();
    } finally {
      System.setOut(old);
    }
  }

  /** Deletes a directory tree, best effort. */
  static void deleteTree(java.nio.file.Path dir) {
    if (dir == null || !Files.exists(dir)) {
      return;
    }
    try (Stream<java.nio.file.Path> paths = Files.walk(dir)) {
      paths.sorted(Comparator.reverseOrder()).forEach(f -> f.toFile().delete());
    } catch (IOException | UncheckedIOException ignored) {
      // best effort: a temporary directory
    }
  }
}
