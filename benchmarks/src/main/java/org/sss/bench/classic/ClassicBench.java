package org.sss.bench.classic;

import java.io.BufferedOutputStream;
import java.io.IOException;
import java.io.OutputStream;
import java.io.PrintWriter;
import java.math.BigDecimal;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardCopyOption;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.HashSet;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.Set;
import org.sss.bench.synthetic.JobClock;
import org.sss.bench.synthetic.Progress;
import org.sss.bench.synthetic.Sizes;
import org.sss.client.SssClient;
import org.sss.client.cluster.SssCluster;
import org.sss.client.io.BulkIO;
import org.sss.client.job.JobResult;
import org.sss.client.job.ProgressListener;
import org.sss.core.io.TextOutputDir;
import org.sss.examples.Pi;
import org.sss.examples.RandomTextWriter;
import org.sss.examples.WordCount;

/**
 * Runs the classic benchmark of one plan: RandomTextWriter on Hadoop and SSS (each its own
 * text), WordCount on one common text (Hadoop's RandomTextWriter output concatenated into one
 * file) on Hadoop, SSS and Spark with the outputs compared, and Pi on Hadoop and SSS with the
 * estimates compared. Every engine gets {@code nodes x threadsPerNode} threads.
 *
 * <p>Each job runs on each engine {@code warmups} untimed times, then {@code repeats} timed
 * times, back to back in the same JVM (Spark: in its one JVM and context; SSS: on one cluster,
 * started before the job's first SSS run and stopped after its last), and every run is
 * verified, warm-ups too.
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
   * One run of one job on one engine: whether it was a warm-up (untimed, in no median), its
   * number among the warm-ups or the timed runs (0-based), seconds of each phase (null when the
   * phase does not apply), whether its output matched, and a note (estimates, words, why it was
   * skipped). {@code fileToFile} is WordCount from its input file to an output file: Hadoop's and
   * Spark's job itself, SSS's job over the file's splits with its output dumped to a file.
   */
  public record Outcome(String job, String param, String value, String engine, boolean warmup, int run, Double start,
                        Double load, Double jobSeconds, Double fileToFile, boolean verified, String note) {
    /** An outcome with no file-to-file figure. */
    public Outcome(String job, String param, String value, String engine, boolean warmup, int run, Double start,
                   Double load, Double jobSeconds, boolean verified, String note) {
      this(job, param, value, engine, warmup, run, start, load, jobSeconds, null, verified, note);
    }

    public boolean ran() {
      return jobSeconds != null;
    }

    public boolean skipped() {
      return jobSeconds == null && note.startsWith("n/a");
    }

    public boolean timed() {
      return !warmup;
    }

    /** "warmup" or "timed", as results.csv says. */
    public String kind() {
      return warmup ? "warmup" : "timed";
    }
  }

  /** Run {@code i} of a plan's runs of one job on one engine: warm-ups first. */
  private record Run(boolean warmup, int index, String label) {
    static Run of(ClassicPlan plan, int i) {
      boolean warmup = i < plan.warmups();
      int index = warmup ? i : i - plan.warmups();
      String label = warmup ? "warm-up" + (plan.warmups() > 1 ? " " + (index + 1) : "")
          : plan.repeats() > 1 ? "#" + (index + 1) : "";
      return new Run(warmup, index, label);
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
          if (engine.equals("spark")) {
            Outcome o = new Outcome(ClassicPlan.RANDOMTEXTWRITER, param, value, engine, false, 0, null, null, null,
                false, "n/a: Spark has no RandomTextWriter example");
            out.add(say(o));
            report.append(o);
            continue;
          }
          try {
            for (int i = 0; i < plan.runs(); i++) {
              Run run = Run.of(plan, i);
              progress.run(ClassicPlan.RANDOMTEXTWRITER, value + (run.label().isEmpty() ? "" : " " + run.label()),
                  engine);
              Outcome o;
              try {
                if (engine.equals("hadoop")) {
                  // each run writes its own text; the last good one is WordCount's input
                  Path next = work.resolve("text-next.txt");
                  Path dir = work.resolve("hadoop-randomtextwriter");
                  HadoopClassic.TextResult r = hadoop.randomTextWriter(plan.textBytes(), dir, next, progress);
                  HadoopClassic.deleteTree(dir);
                  text = Files.move(next, work.resolve("text.txt"), StandardCopyOption.REPLACE_EXISTING);
                  textFrom = "Hadoop's RandomTextWriter";
                  textIsRandom = true;
                  o = new Outcome(ClassicPlan.RANDOMTEXTWRITER, param, value, engine, run.warmup(), run.index(), null,
                      null, r.seconds(), r.problem().isEmpty(), String.format(Locale.ROOT, "%d one-map jobs at once "
                      + "(the local runner forces one map per job), %,d lines, %,d bytes of words%s",
                      r.parts(), r.lines(), r.keyValueBytes(), r.problem().isEmpty() ? "" : "; " + r.problem()));
                } else {
                  boolean dump = i == plan.runs() - 1 && text == null && plan.wordcountInput() == null
                      && plan.jobs().contains(ClassicPlan.WORDCOUNT);
                  Path t = work.resolve("text.txt");
                  o = sssRandomTextWriter(plan, cluster.get(), work, param, value, run, dump ? t : null);
                  if (dump) {
                    text = t;
                    textFrom = "SSS's RandomTextWriter";
                    textIsRandom = true;
                  }
                }
              } catch (Exception e) {
                o = failed(ClassicPlan.RANDOMTEXTWRITER, param, value, engine, run, e);
              }
              out.add(say(o));
              report.append(o);
            }
          } finally {
            cluster.close();
          }
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
   * SSS's cluster, started before a job's first SSS run and stopped after its last, so that
   * nothing of SSS (RocksDB's background work on dropped tables, say) runs while another engine
   * does.
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
        + (o.jobSeconds() == null ? "" : String.format(Locale.ROOT, "job %.2f s, ", o.jobSeconds()))
        + (o.fileToFile() == null ? "" : String.format(Locale.ROOT, "file to file %.2f s, ", o.fileToFile()));
    String run = o.warmup() ? " warm-up " + (o.run() + 1) : o.ran() || o.note().startsWith("failed")
        ? " #" + (o.run() + 1) : "";
    progress.say(o.job() + " " + o.engine() + run + ": " + phases
        + (o.ran() ? (o.verified() ? "verified" : "NOT VERIFIED") : "") + (o.note().isEmpty() ? "" : " (" + o.note()
        + ")") + (o.warmup() ? " (warm-up, untimed)" : ""));
    return o;
  }

  private static Outcome failed(String job, String param, String value, String engine, Run run, Exception e) {
    String msg = e.getMessage() == null ? e.toString() : e.getMessage().lines().findFirst().orElse("");
    if (Boolean.getBoolean("sss.debug")) {
      e.printStackTrace();
    }
    return new Outcome(job, param, value, engine, run.warmup(), run.index(), null, null, null, false, "failed: " + msg);
  }

  /**
   * One SSS RandomTextWriter run: its map tasks write their lines straight into part files, as
   * Hadoop's map-only job writes its output ({@link RandomTextWriter#jobToFiles}); the files are
   * read back untimed to check the job's own counts of lines and bytes.
   */
  private Outcome sssRandomTextWriter(ClassicPlan plan, SssCluster cluster, Path work, String param, String value,
                                      Run run, Path dumpTo) throws Exception {
    int maps = plan.threads();
    String id = Long.toHexString(System.nanoTime());
    String seeds = "classic-rtw-seeds-" + id;
    Path dir = work.resolve("sss-randomtextwriter-" + id);
    try (SssClient client = cluster.client()) {
      try {
        progress.phase("job");
        long t0 = System.nanoTime();
        RandomTextWriter.writeSeeds(client, seeds, maps, plan.textBytes());
        JobClock.Timed<JobResult> timed = JobClock.sss(t0, client,
            RandomTextWriter.jobToFiles(seeds, dir, System.nanoTime(), 0, plan.threadsPerNode()), listener());
        JobResult r = timed.value();
        double seconds = timed.seconds();
        progress.phase("verify");
        long bytes = r.counter("BYTES_WRITTEN");
        long records = r.counter("RECORDS_WRITTEN");
        List<Path> parts;
        try (var files = Files.list(dir)) {
          parts = files.filter(f -> f.getFileName().toString().startsWith("part-")).sorted().toList();
        }
        long lines = 0;
        long fileBytes = 0;
        for (Path part : parts) {
          fileBytes += Files.size(part);
          byte[] buf = new byte[1 << 20];
          try (var in = Files.newInputStream(part)) {
            for (int n = in.read(buf); n > 0; n = in.read(buf)) {
              for (int i = 0; i < n; i++) {
                lines += buf[i] == '\n' ? 1 : 0;
              }
            }
          }
        }
        StringBuilder problem = new StringBuilder();
        if (lines != records || fileBytes != bytes) {
          problem.append(lines).append(" lines of ").append(fileBytes).append(" bytes in the files, but the job wrote ")
              .append(records).append(" of ").append(bytes).append("; ");
        }
        if (!Files.exists(dir.resolve(TextOutputDir.SUCCESS))) {
          problem.append("no _SUCCESS; ");
        }
        if (bytes < plan.textBytes() || bytes > plan.textBytes() + (long) maps * (1 << 16)) {
          problem.append(bytes).append(" bytes written, asked ").append(plan.textBytes()).append("; ");
        }
        if (dumpTo != null) {
          try (var out = Files.newOutputStream(dumpTo)) {
            for (Path part : parts) {
              Files.copy(part, out);
            }
          }
        }
        return new Outcome(ClassicPlan.RANDOMTEXTWRITER, param, value, "sss", run.warmup(), run.index(), null, null,
            seconds, problem.length() == 0, String.format(Locale.ROOT, "%d maps writing part files, %,d lines, %,d bytes"
            + " with newlines%s", maps, records, bytes, problem.length() == 0 ? "" : "; " + problem));
      } finally {
        client.dropTable(seeds, true);
        HadoopClassic.deleteTree(dir);
      }
    }
  }

  private ProgressListener listener() {
    return (stage, stages, kind, done, total, rin, rout, bytes, sec) ->
        progress.update((stage + (total == 0 ? 0 : (double) done / total)) / stages);
  }

  /**
   * Writes about {@code bytes} of RandomTextWriter text with SSS's generator (when no engine
   * wrote any, and for the store benchmark's text rows); returns the lines written.
   */
  public static long writeText(Path file, long bytes, int maps) throws IOException {
    long lines = 0;
    try (OutputStream os = new BufferedOutputStream(Files.newOutputStream(file), 1 << 16)) {
      for (int m = 0; m < maps; m++) {
        RandomTextWriter.Generator g = new RandomTextWriter.Generator(1, m);
        for (long left = RandomTextWriter.bytesOfMap(m, maps, bytes); left > 0; ) {
          byte[] line = g.nextLineBytes();
          os.write(line);
          os.write('\n');
          left -= line.length + 1;
          lines++;
        }
      }
    }
    return lines;
  }

  /**
   * One WordCount run, before the outputs are compared across engines: its times, whether its
   * output differed from the engine's first run's (empty when the same), and the engine's note.
   */
  private record WordCountRun(Run run, Double start, Double load, double job, Double fileToFile, String differsFromFirst,
                              String note) {}

  /** Every run's outputs of one engine, compared with its first run's as they come. */
  private static final class EngineOutputs {
    List<byte[]> first;
    final List<WordCountRun> runs = new ArrayList<>();

    /** Keeps the first output; returns how a later one differs from it (empty when the same). */
    String add(List<byte[]> output) {
      if (first == null) {
        first = output;
        return "";
      }
      String diff = WordCounts.difference(first, output);
      return diff.isEmpty() ? "" : "differs from this engine's first run: " + diff;
    }
  }

  private List<Outcome> wordCount(ClassicPlan plan, Lazy cluster, HadoopClassic hadoop, Path work, Path text,
                                  String textFrom, boolean textIsRandom, ClassicReport report) throws Exception {
    String param = "input";
    String value = String.format(Locale.ROOT, "%.1f MiB", Files.size(text) / 1048576.0);
    int threads = plan.threads();
    report.setWordCountInput(textFrom + ", " + String.format(Locale.ROOT, "%,d bytes", Files.size(text)));
    Map<String, EngineOutputs> outputs = new LinkedHashMap<>();
    List<Outcome> done = new ArrayList<>();
    for (String engine : plan.engines()) {
      EngineOutputs mine = new EngineOutputs();
      try {
        switch (engine) {
          case "hadoop" -> {
            for (int i = 0; i < plan.runs(); i++) {
              Run run = Run.of(plan, i);
              progress.run(ClassicPlan.WORDCOUNT, value + (run.label().isEmpty() ? "" : " " + run.label()), engine);
              Path dir = work.resolve("hadoop-wordcount");
              double s = hadoop.wordCount(text, dir, progress);
              progress.phase("verify");
              String diff = mine.add(WordCounts.sorted(WordCounts.lines(WordCounts.parts(dir, "part-r-"))));
              mine.runs.add(new WordCountRun(run, null, null, s, s, diff, threads + " map threads, " + threads
                  + " reduce tasks"));
              HadoopClassic.deleteTree(dir);
            }
          }
          case "sss" -> {
            try {
              SssCluster c = cluster.get();
              for (int i = 0; i < plan.runs(); i++) {
                Run run = Run.of(plan, i);
                progress.run(ClassicPlan.WORDCOUNT, value + (run.label().isEmpty() ? "" : " " + run.label()), engine);
                mine.runs.add(sssWordCount(plan, c, work, text, run, mine));
              }
            } finally {
              cluster.close();
            }
          }
          default -> {
            progress.run(ClassicPlan.WORDCOUNT, value, engine);
            Path dir = work.resolve("spark-wordcount");
            Path log = work.resolve("spark.log");
            List<SparkClassic.Result> rs = new SparkClassic(SparkClassic.findProject(), plan.sparkJavaOpts())
                .wordCount(text, threads, dir, log, progress, plan.warmups(), plan.repeats());
            progress.phase("verify");
            for (SparkClassic.Result r : rs) {
              String diff = mine.add(WordCounts.sorted(WordCounts.lines(WordCounts.parts(r.output(), "part-"))));
              Run run = Run.of(plan, r.warmup() ? r.run() : plan.warmups() + r.run());
              mine.runs.add(new WordCountRun(run, r.contextSeconds(), null, r.jobSeconds(), r.jobSeconds(), diff,
                  String.format(Locale.ROOT, "local[%d]; one JVM and context for all %d runs, context started in "
                  + "%.2f s once; process %.1f s in all", threads, rs.size(), r.contextSeconds(), r.processSeconds())));
            }
            HadoopClassic.deleteTree(dir);
          }
        }
      } catch (Exception e) {
        Run failedRun = Run.of(plan, Math.min(mine.runs.size(), plan.runs() - 1));
        Outcome o = failed(ClassicPlan.WORDCOUNT, param, value, engine, failedRun, e);
        done.add(say(o));
        report.append(o);
      }
      if (mine.first != null) {
        outputs.put(engine, mine);
      }
    }
    // The reference: Hadoop's own WordCount when it ran; else counted here, one thread.
    List<byte[]> reference = outputs.containsKey("hadoop") ? outputs.get("hadoop").first : null;
    String refName = "Hadoop's output";
    boolean hadoopAgreed = false;
    for (Map.Entry<String, EngineOutputs> e : outputs.entrySet()) {
      if (!e.getKey().equals("hadoop") && reference != null
          && WordCounts.difference(reference, e.getValue().first).isEmpty()) {
        hadoopAgreed = true;
      }
    }
    String hadoopNote = "";
    if (reference == null || !hadoopAgreed) {
      progress.run(ClassicPlan.WORDCOUNT, value, "reference");
      progress.phase("count here");
      List<byte[]> local = WordCounts.reference(text);
      if (reference == null) {
        reference = local;
        refName = "the counts made here";
      } else if (!WordCounts.difference(local, reference).isEmpty()) {
        hadoopNote = "; differs from the counts made here: " + WordCounts.difference(local, reference);
      }
    }
    String words = "";
    if (textIsRandom && reference != null) {
      words = WordCounts.unknownWords(reference, new HashSet<>(RandomTextWriter.words()));
    }
    if (reference != null) {
      report.setWordCountSummary(String.format(Locale.ROOT, "%,d distinct words, %,d in all", reference.size(),
          WordCounts.total(reference)) + (words.isEmpty() ? "" : "; " + words));
    }
    for (Map.Entry<String, EngineOutputs> e : outputs.entrySet()) {
      String engine = e.getKey();
      List<byte[]> first = e.getValue().first;
      String diff = WordCounts.difference(reference, first);
      for (WordCountRun r : e.getValue().runs) {
        boolean ok = diff.isEmpty() && r.differsFromFirst().isEmpty() && words.isEmpty();
        String note = r.note() + (engine.equals("hadoop") ? hadoopNote : "") + "; " + (diff.isEmpty()
            ? String.format(Locale.ROOT, "%,d words, same as %s", first.size(),
                engine.equals("hadoop") && refName.equals("Hadoop's output") ? "the other engines'" : refName)
            : "differs from " + refName + ": " + diff)
            + (r.differsFromFirst().isEmpty() ? "" : "; " + r.differsFromFirst());
        Outcome o = new Outcome(ClassicPlan.WORDCOUNT, param, value, engine, r.run().warmup(), r.run().index(),
            r.start(), r.load(), r.job(), r.fileToFile(), ok, note);
        done.add(say(o));
        report.append(o);
      }
    }
    return inEngineOrder(done, plan.engines());
  }

  /**
   * One SSS WordCount run: the file loaded into a table (load), then the job (job), then its
   * output dumped; then, timed as one, the job over the file's splits and its output dumped to a
   * file (file to file: the path {@code bin/sss example wordcount IN OUT} takes, with the plan's
   * threads per node), compared with the first.
   */
  private WordCountRun sssWordCount(ClassicPlan plan, SssCluster cluster, Path work, Path text, Run run,
                                    EngineOutputs mine) throws Exception {
    String id = Long.toHexString(System.nanoTime());
    String in = "classic-wc-in-" + id;
    String outTable = "classic-wc-out-" + id;
    String fromFile = "classic-wc-file-" + id;
    try (SssClient client = cluster.client()) {
      try {
        progress.phase("load");
        long t0 = System.nanoTime();
        long lines = BulkIO.load(client, in, text, n -> { });
        double load = (System.nanoTime() - t0) / 1e9;
        progress.phase("job");
        JobClock.Timed<JobResult> timed = JobClock.sss(client,
            WordCount.job(in, outTable, true, plan.threadsPerNode()), listener());
        progress.phase("verify");
        Path dump = work.resolve("sss-wordcount.txt");
        BulkIO.dump(client, outTable, dump, n -> { });
        List<byte[]> got = WordCounts.lines(List.of(dump));
        boolean inOrder = WordCounts.isSorted(got);
        String diff = mine.add(WordCounts.sorted(got));
        Files.deleteIfExists(dump);
        progress.phase("file to file");
        Path fileOut = work.resolve("sss-wordcount-from-file.txt");
        Double fileToFile = null;
        String fileNote = "";
        try {
          long t1 = System.nanoTime();
          JobClock.sss(client, WordCount.jobOverFiles(text, fromFile, true, plan.threadsPerNode()), listener());
          BulkIO.dump(client, fromFile, fileOut, n -> { });
          fileToFile = (System.nanoTime() - t1) / 1e9;
          progress.phase("verify");
          String fileDiff = WordCounts.difference(WordCounts.sorted(got),
              WordCounts.sorted(WordCounts.lines(List.of(fileOut))));
          diff = diff.isEmpty() && !fileDiff.isEmpty() ? "file to file differs from the stored table's: " + fileDiff : diff;
        } catch (Exception e) { // the stored run's figure stands; this one is left out
          fileNote = "; file to file failed: " + e.getMessage();
        } finally {
          Files.deleteIfExists(fileOut);
        }
        return new WordCountRun(run, null, load, timed.seconds(), fileToFile, diff, String.format(Locale.ROOT,
            "%,d lines loaded; dump %s Hadoop's key order; %s", lines, inOrder ? "already in" : "NOT in",
            stageNote(timed.value())) + fileNote);
      } finally {
        for (String table : List.of(in, outTable, fromFile)) {
          try {
            client.dropTable(table, true);
          } catch (RuntimeException e) {
            progress.say("could not drop " + table + ": " + e.getMessage());
          }
        }
      }
    }
  }

  private static List<Outcome> inEngineOrder(List<Outcome> outcomes, List<String> engines) {
    List<Outcome> s = new ArrayList<>(outcomes);
    s.sort(Comparator.comparingInt(o -> engines.indexOf(o.engine())));
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

  /** One Pi run's time and estimate. */
  private record PiRun(String engine, Run run, double seconds, BigDecimal estimate) {}

  private List<Outcome> pi(ClassicPlan plan, Lazy cluster, HadoopClassic hadoop, Path work, ClassicReport report)
      throws IOException {
    String param = "maps x samples";
    String value = plan.piMaps() + " x " + Sizes.formatCount(plan.piSamples());
    List<PiRun> runs = new ArrayList<>();
    List<Outcome> done = new ArrayList<>();
    for (String engine : plan.engines()) {
      if (engine.equals("spark")) {
        Outcome o = new Outcome(ClassicPlan.PI, param, value, engine, false, 0, null, null, null, false,
            "n/a: Spark has no quasi-Monte Carlo Pi example");
        done.add(say(o));
        report.append(o);
        continue;
      }
      try {
        for (int i = 0; i < plan.runs(); i++) {
          Run run = Run.of(plan, i);
          progress.run(ClassicPlan.PI, value + (run.label().isEmpty() ? "" : " " + run.label()), engine);
          try {
            if (engine.equals("hadoop")) {
              Object[] r = hadoop.pi(plan.piMaps(), plan.piSamples(), work.resolve("hadoop-pi-" + i), progress);
              runs.add(new PiRun(engine, run, (Double) r[0], (BigDecimal) r[1]));
            } else {
              String id = Long.toHexString(System.nanoTime());
              try (SssClient client = cluster.get().client()) {
                try {
                  progress.phase("job");
                  long t0 = System.nanoTime();
                  Pi.Result r = Pi.run(client, "classic-pi-in-" + id, "classic-pi-out-" + id, plan.piMaps(),
                      plan.piSamples(), true, plan.threadsPerNode(), listener());
                  runs.add(new PiRun(engine, run, (System.nanoTime() - t0) / 1e9, r.estimate()));
                } finally {
                  client.dropTable("classic-pi-in-" + id, true);
                  client.dropTable("classic-pi-out-" + id, true);
                }
              }
            }
          } catch (Exception e) {
            Outcome o = failed(ClassicPlan.PI, param, value, engine, run, e);
            done.add(say(o));
            report.append(o);
          }
        }
      } finally {
        cluster.close();
      }
    }
    PiRun first = runs.isEmpty() ? null : runs.get(0);
    for (PiRun r : runs) {
      BigDecimal est = r.estimate();
      boolean close = est.subtract(BigDecimal.valueOf(Math.PI)).abs().doubleValue() < 0.01;
      boolean same = est.compareTo(first.estimate()) == 0;
      StringBuilder note = new StringBuilder("estimate " + est.toPlainString());
      if (runs.size() > 1) {
        note.append(same ? "; equal to every run's" : "; differs from " + first.engine() + "'s first run's "
            + first.estimate().toPlainString());
      }
      Outcome o = new Outcome(ClassicPlan.PI, param, value, r.engine(), r.run().warmup(), r.run().index(), null, null,
          r.seconds(), close && same, note.toString());
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
