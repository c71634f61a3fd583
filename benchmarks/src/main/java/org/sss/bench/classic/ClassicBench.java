package org.sss.bench.classic;

import java.io.IOException;
import java.io.OutputStream;
import java.io.PrintWriter;
import java.math.BigDecimal;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.HashSet;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.Set;
import org.sss.bench.synthetic.Progress;
import org.sss.bench.synthetic.Sizes;
import org.sss.client.SssClient;
import org.sss.client.cluster.SssCluster;
import org.sss.client.io.BulkIO;
import org.sss.client.job.JobResult;
import org.sss.client.job.ProgressListener;
import org.sss.examples.ExampleIO;
import org.sss.examples.Pi;
import org.sss.examples.RandomTextWriter;
import org.sss.examples.WordCount;

/**
 * Runs the classic benchmark of one plan: RandomTextWriter on Hadoop and SSS (each its own
 * text), WordCount on one common text (Hadoop's RandomTextWriter output concatenated into one
 * file) on Hadoop, SSS and Spark with the outputs compared, and Pi on Hadoop and SSS with the
 * estimates compared. Every engine gets {@code nodes x threadsPerNode} threads.
 */
public final class ClassicBench {
  private final Path clusterFile;
  private final Progress progress;
  private final PrintWriter console;

  public ClassicBench(Path clusterFile, Progress progress, PrintWriter console) {
    this.clusterFile = clusterFile;
    this.progress = progress;
    this.console = console;
  }

  /**
   * One engine's run of one job: seconds of each phase (null when the phase does not apply),
   * whether its output matched, and a note (estimates, words, why it was skipped).
   */
  public record Outcome(String job, String param, String value, String engine, Double start, Double load,
                        Double jobSeconds, boolean verified, String note) {
    public boolean ran() {
      return jobSeconds != null;
    }

    public boolean skipped() {
      return jobSeconds == null && note.startsWith("n/a");
    }
  }

  /** Runs the plan; outcomes in order. */
  public List<Outcome> run(ClassicPlan plan, ClassicReport report) throws Exception {
    List<Outcome> out = new ArrayList<>();
    Path base = plan.workDir() != null ? Files.createDirectories(plan.workDir())
        : Path.of(System.getProperty("java.io.tmpdir"));
    Path work = Files.createTempDirectory(base, "sss-classic-");
    int threads = plan.threads();
    HadoopClassic hadoop = new HadoopClassic(threads, work);
    Lazy cluster = new Lazy(plan);
    try {
      Path text = null;
      String textFrom = null;
      boolean textIsRandom = false;
      if (plan.jobs().contains(ClassicPlan.RANDOMTEXTWRITER)) {
        String param = "textBytes";
        String value = Sizes.format(plan.textBytes());
        for (String engine : plan.engines()) {
          Outcome o;
          progress.run(ClassicPlan.RANDOMTEXTWRITER, value, engine);
          try {
            switch (engine) {
              case "hadoop" -> {
                Path t = work.resolve("text.txt");
                Path dir = work.resolve("hadoop-randomtextwriter");
                HadoopClassic.TextResult r = hadoop.randomTextWriter(plan.textBytes(), dir, t, progress);
                HadoopClassic.deleteTree(dir);
                text = t;
                textFrom = "Hadoop's RandomTextWriter";
                textIsRandom = true;
                o = new Outcome(ClassicPlan.RANDOMTEXTWRITER, param, value, engine, null, null, r.seconds(),
                    r.problem().isEmpty(), String.format(Locale.ROOT, "%d one-map jobs at once (the local runner "
                    + "forces one map per job), %,d lines, %,d bytes of words%s",
                    r.parts(), r.lines(), r.keyValueBytes(), r.problem().isEmpty() ? "" : "; " + r.problem()));
              }
              case "sss" -> {
                boolean dump = text == null && plan.wordcountInput() == null
                    && plan.jobs().contains(ClassicPlan.WORDCOUNT);
                Path t = work.resolve("text.txt");
                try {
                  o = sssRandomTextWriter(plan, cluster.get(), param, value, dump ? t : null);
                } finally {
                  cluster.close();
                }
                if (dump) {
                  text = t;
                  textFrom = "SSS's RandomTextWriter";
                  textIsRandom = true;
                }
              }
              default -> o = new Outcome(ClassicPlan.RANDOMTEXTWRITER, param, value, engine, null, null, null, false,
                  "n/a: Spark has no RandomTextWriter example");
            }
          } catch (Exception e) {
            o = failed(ClassicPlan.RANDOMTEXTWRITER, param, value, engine, e);
          }
          out.add(say(o));
          report.append(o);
        }
      }
      if (plan.jobs().contains(ClassicPlan.WORDCOUNT)) {
        if (plan.wordcountInput() != null) {
          text = plan.wordcountInput();
          textFrom = "the file " + text;
          textIsRandom = false;
        } else if (text == null) {
          progress.run(ClassicPlan.WORDCOUNT, "", "input");
          progress.phase("write text");
          text = work.resolve("text.txt");
          writeText(text, plan.textBytes(), threads);
          textFrom = "SSS's RandomTextWriter generator, written here (no engine ran RandomTextWriter)";
          textIsRandom = true;
        }
        out.addAll(wordCount(plan, cluster, hadoop, work, text, textFrom, textIsRandom, report));
      }
      if (plan.jobs().contains(ClassicPlan.PI)) {
        out.addAll(pi(plan, cluster, hadoop, work, report));
      }
    } finally {
      cluster.close();
      HadoopClassic.deleteTree(work);
    }
    report.setClusterStarts(cluster.starts);
    return out;
  }

  /**
   * SSS's cluster, started for each job's SSS run and stopped right after it, so that nothing
   * of SSS (RocksDB's background work on dropped tables, say) runs while another engine does.
   */
  private final class Lazy implements AutoCloseable {
    private final ClassicPlan plan;
    private SssCluster cluster;
    final List<Double> starts = new ArrayList<>();

    Lazy(ClassicPlan plan) {
      this.plan = plan;
    }

    SssCluster get() throws IOException {
      if (cluster == null) {
        progress.phase("start");
        long t0 = System.nanoTime();
        cluster = clusterFile != null ? SssCluster.remote(clusterFile) : SssCluster.embedded(plan.nodes());
        starts.add((System.nanoTime() - t0) / 1e9);
        try (SssClient c = cluster.client()) {
          if (c.spec().partitionMap().nodes() != plan.nodes()) {
            throw new IllegalArgumentException("the cluster has " + c.spec().partitionMap().nodes()
                + " nodes but the parameters say nodes=" + plan.nodes());
          }
        }
      }
      return cluster;
    }

    @Override
    public void close() {
      if (cluster != null) {
        cluster.close();
        cluster = null;
      }
    }
  }

  private Outcome say(Outcome o) {
    String phases = (o.start() == null ? "" : String.format(Locale.ROOT, "start %.2f s, ", o.start()))
        + (o.load() == null ? "" : String.format(Locale.ROOT, "load %.2f s, ", o.load()))
        + (o.jobSeconds() == null ? "" : String.format(Locale.ROOT, "job %.2f s, ", o.jobSeconds()));
    progress.say(o.job() + " " + o.engine() + ": " + phases
        + (o.ran() ? (o.verified() ? "verified" : "NOT VERIFIED") : "") + (o.note().isEmpty() ? "" : " (" + o.note() + ")"));
    return o;
  }

  private static Outcome failed(String job, String param, String value, String engine, Exception e) {
    String msg = e.getMessage() == null ? e.toString() : e.getMessage().lines().findFirst().orElse("");
    if (Boolean.getBoolean("sss.debug")) {
      e.printStackTrace();
    }
    return new Outcome(job, param, value, engine, null, null, null, false, "failed: " + msg);
  }

  private Outcome sssRandomTextWriter(ClassicPlan plan, SssCluster cluster, String param, String value, Path dumpTo)
      throws Exception {
    int maps = plan.threads();
    String id = Long.toHexString(System.nanoTime());
    String seeds = "classic-rtw-seeds-" + id;
    String table = "classic-rtw-text-" + id;
    try (SssClient client = cluster.client()) {
      try {
        progress.phase("job");
        long t0 = System.nanoTime();
        RandomTextWriter.writeSeeds(client, seeds, maps, plan.textBytes());
        JobResult r = client.submit(RandomTextWriter.job(seeds, table, System.nanoTime(), 0, plan.threadsPerNode()))
            .await(listener());
        double seconds = (System.nanoTime() - t0) / 1e9;
        progress.phase("verify");
        long bytes = r.counter("BYTES_WRITTEN");
        long records = r.counter("RECORDS_WRITTEN");
        long rows = client.count(table);
        StringBuilder problem = new StringBuilder();
        if (rows != records) {
          problem.append(rows).append(" rows but ").append(records).append(" records written; ");
        }
        if (bytes < plan.textBytes() || bytes > plan.textBytes() + (long) maps * (1 << 16)) {
          problem.append(bytes).append(" bytes written, asked ").append(plan.textBytes()).append("; ");
        }
        if (dumpTo != null) {
          RandomTextWriter.writeText(client, table, dumpTo, maps, false);
        }
        return new Outcome(ClassicPlan.RANDOMTEXTWRITER, param, value, "sss", null, null, seconds,
            problem.length() == 0, String.format(Locale.ROOT, "%d maps, %,d lines, %,d bytes with newlines%s", maps,
            records, bytes, problem.length() == 0 ? "" : "; " + problem));
      } finally {
        client.dropTable(seeds, true);
        client.dropTable(table, true);
      }
    }
  }

  private ProgressListener listener() {
    return (stage, stages, kind, done, total, rin, rout, bytes, sec) ->
        progress.update((stage + (total == 0 ? 0 : (double) done / total)) / stages);
  }

  /** Writes about {@code bytes} of RandomTextWriter text with SSS's generator (when no engine wrote any). */
  static void writeText(Path file, long bytes, int maps) throws IOException {
    try (OutputStream os = new java.io.BufferedOutputStream(Files.newOutputStream(file), 1 << 16)) {
      for (int m = 0; m < maps; m++) {
        RandomTextWriter.Generator g = new RandomTextWriter.Generator(1, m);
        for (long left = RandomTextWriter.bytesOfMap(m, maps, bytes); left > 0; ) {
          byte[] line = g.nextLine().getBytes(StandardCharsets.US_ASCII);
          os.write(line);
          os.write('\n');
          left -= line.length + 1;
        }
      }
    }
  }

  private List<Outcome> wordCount(ClassicPlan plan, Lazy cluster, HadoopClassic hadoop, Path work, Path text,
                                  String textFrom, boolean textIsRandom, ClassicReport report) throws Exception {
    String param = "input";
    String value = String.format(Locale.ROOT, "%.1f MiB", Files.size(text) / 1048576.0);
    int threads = plan.threads();
    report.setWordCountInput(textFrom + ", " + String.format(Locale.ROOT, "%,d bytes", Files.size(text)));
    Map<String, List<byte[]>> outputs = new LinkedHashMap<>();
    Map<String, Double[]> times = new LinkedHashMap<>();
    Map<String, String> notes = new LinkedHashMap<>();
    List<Outcome> done = new ArrayList<>();
    for (String engine : plan.engines()) {
      progress.run(ClassicPlan.WORDCOUNT, value, engine);
      try {
        switch (engine) {
          case "hadoop" -> {
            Path dir = work.resolve("hadoop-wordcount");
            double s = hadoop.wordCount(text, dir, progress);
            progress.phase("verify");
            outputs.put(engine, WordCounts.sorted(WordCounts.lines(WordCounts.parts(dir, "part-r-"))));
            times.put(engine, new Double[] {null, null, s});
            notes.put(engine, threads + " map threads, " + threads + " reduce tasks");
            HadoopClassic.deleteTree(dir);
          }
          case "sss" -> {
            String id = Long.toHexString(System.nanoTime());
            String in = "classic-wc-in-" + id;
            String outTable = "classic-wc-out-" + id;
            try (SssClient client = cluster.get().client()) {
              try {
                progress.phase("load");
                long t0 = System.nanoTime();
                long lines = ExampleIO.loadLines(client, in, text);
                double load = (System.nanoTime() - t0) / 1e9;
                progress.phase("job");
                long t1 = System.nanoTime();
                JobResult r = client.submit(WordCount.job(in, outTable, true, plan.threadsPerNode())).await(listener());
                double job = (System.nanoTime() - t1) / 1e9;
                progress.phase("verify");
                Path dump = work.resolve("sss-wordcount.txt");
                BulkIO.dump(client, outTable, dump, n -> { });
                List<byte[]> got = WordCounts.lines(List.of(dump));
                boolean inOrder = WordCounts.isSorted(got);
                outputs.put(engine, WordCounts.sorted(got));
                times.put(engine, new Double[] {null, load, job});
                String stages = stageNote(r);
                notes.put(engine, String.format(Locale.ROOT, "%,d lines loaded; dump %s Hadoop's key order; %s",
                    lines, inOrder ? "already in" : "NOT in", stages));
              } finally {
                client.dropTable(in, true);
                client.dropTable(outTable, true);
              }
            } finally {
              cluster.close();
            }
          }
          default -> {
            Path dir = work.resolve("spark-wordcount");
            Path log = work.resolve("spark.log");
            SparkClassic.Result r = new SparkClassic(SparkClassic.findProject(), plan.sparkJavaOpts())
                .wordCount(text, threads, dir, log, progress);
            progress.phase("verify");
            outputs.put(engine, WordCounts.sorted(WordCounts.lines(WordCounts.parts(dir, "part-"))));
            times.put(engine, new Double[] {r.contextSeconds(), null, r.jobSeconds()});
            notes.put(engine, String.format(Locale.ROOT, "local[%d]; process %.1f s in all", threads,
                r.processSeconds()));
            HadoopClassic.deleteTree(dir);
          }
        }
      } catch (Exception e) {
        Outcome o = failed(ClassicPlan.WORDCOUNT, param, value, engine, e);
        done.add(say(o));
        report.append(o);
      }
    }
    // The reference: Hadoop's own WordCount when it ran; else counted here, one thread.
    List<byte[]> reference = outputs.get("hadoop");
    String refName = "Hadoop's output";
    boolean hadoopAgreed = false;
    for (String e : outputs.keySet()) {
      if (!e.equals("hadoop") && reference != null && WordCounts.difference(reference, outputs.get(e)).isEmpty()) {
        hadoopAgreed = true;
      }
    }
    if (reference == null || !hadoopAgreed) {
      progress.run(ClassicPlan.WORDCOUNT, value, "reference");
      progress.phase("count here");
      List<byte[]> local = WordCounts.reference(text);
      if (reference == null) {
        reference = local;
        refName = "the counts made here";
      } else if (!WordCounts.difference(local, reference).isEmpty()) {
        notes.merge("hadoop", "differs from the counts made here: " + WordCounts.difference(local, reference),
            (a, b) -> a + "; " + b);
      }
    }
    String words = "";
    if (textIsRandom && reference != null) {
      words = WordCounts.unknownWords(reference, new HashSet<>(RandomTextWriter.words()));
    }
    report.setWordCountSummary(String.format(Locale.ROOT, "%,d distinct words, %,d in all", reference.size(),
        WordCounts.total(reference)) + (words.isEmpty() ? "" : "; " + words));
    for (Map.Entry<String, List<byte[]>> e : outputs.entrySet()) {
      String diff = WordCounts.difference(reference, e.getValue());
      boolean ok = diff.isEmpty() && words.isEmpty();
      String note = notes.get(e.getKey()) + "; " + (diff.isEmpty()
          ? String.format(Locale.ROOT, "%,d words, same as %s", e.getValue().size(),
              e.getKey().equals("hadoop") && refName.equals("Hadoop's output") ? "the other engines'" : refName)
          : "differs from " + refName + ": " + diff);
      Double[] t = times.get(e.getKey());
      Outcome o = new Outcome(ClassicPlan.WORDCOUNT, param, value, e.getKey(), t[0], t[1], t[2], ok, note);
      done.add(say(o));
      report.append(o);
    }
    return inEngineOrder(done, plan.engines());
  }

  private static List<Outcome> inEngineOrder(List<Outcome> outcomes, List<String> engines) {
    List<Outcome> s = new ArrayList<>(outcomes);
    s.sort(java.util.Comparator.comparingInt(o -> engines.indexOf(o.engine())));
    return s;
  }

  private static String stageNote(JobResult r) {
    StringBuilder sb = new StringBuilder();
    for (var s : r.stages()) {
      sb.append(sb.length() == 0 ? "" : ", ").append(String.format(Locale.ROOT, "%s %.2f s (%,d in, %,d shuffled)",
          s.kind(), s.seconds(), s.recordsIn(), s.recordsShuffled()));
    }
    return sb.toString();
  }

  private List<Outcome> pi(ClassicPlan plan, Lazy cluster, HadoopClassic hadoop, Path work, ClassicReport report)
      throws IOException {
    String param = "maps x samples";
    String value = plan.piMaps() + " x " + Sizes.formatCount(plan.piSamples());
    Map<String, BigDecimal> estimates = new LinkedHashMap<>();
    Map<String, Double> seconds = new LinkedHashMap<>();
    List<Outcome> done = new ArrayList<>();
    for (String engine : plan.engines()) {
      progress.run(ClassicPlan.PI, value, engine);
      try {
        switch (engine) {
          case "hadoop" -> {
            Object[] r = hadoop.pi(plan.piMaps(), plan.piSamples(), work.resolve("hadoop-pi"), progress);
            seconds.put(engine, (Double) r[0]);
            estimates.put(engine, (BigDecimal) r[1]);
          }
          case "sss" -> {
            String id = Long.toHexString(System.nanoTime());
            try (SssClient client = cluster.get().client()) {
              try {
                progress.phase("job");
                long t0 = System.nanoTime();
                Pi.Result r = Pi.run(client, "classic-pi-in-" + id, "classic-pi-out-" + id, plan.piMaps(),
                    plan.piSamples(), true, plan.threadsPerNode(), listener());
                seconds.put(engine, (System.nanoTime() - t0) / 1e9);
                estimates.put(engine, r.estimate());
              } finally {
                client.dropTable("classic-pi-in-" + id, true);
                client.dropTable("classic-pi-out-" + id, true);
              }
            } finally {
              cluster.close();
            }
          }
          default -> {
            Outcome o = new Outcome(ClassicPlan.PI, param, value, engine, null, null, null, false,
                "n/a: Spark has no quasi-Monte Carlo Pi example");
            done.add(say(o));
            report.append(o);
          }
        }
      } catch (Exception e) {
        Outcome o = failed(ClassicPlan.PI, param, value, engine, e);
        done.add(say(o));
        report.append(o);
      }
    }
    BigDecimal first = estimates.values().stream().findFirst().orElse(null);
    for (Map.Entry<String, BigDecimal> e : estimates.entrySet()) {
      BigDecimal est = e.getValue();
      boolean close = est.subtract(BigDecimal.valueOf(Math.PI)).abs().doubleValue() < 0.01;
      boolean same = est.compareTo(first) == 0;
      StringBuilder note = new StringBuilder("estimate " + est.toPlainString());
      if (estimates.size() > 1) {
        note.append(same ? "; equal to every engine's" : "; differs from " + estimates.keySet().iterator().next()
            + "'s " + first.toPlainString());
      }
      Outcome o = new Outcome(ClassicPlan.PI, param, value, e.getKey(), null, null, seconds.get(e.getKey()),
          close && same, note.toString());
      done.add(say(o));
      report.append(o);
    }
    return inEngineOrder(done, plan.engines());
  }

  /** For tests: the distinct words of RandomTextWriter's list. */
  static Set<String> words() {
    return new HashSet<>(RandomTextWriter.words());
  }
}
