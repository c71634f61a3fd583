package org.sss.bench.synthetic;

import java.io.PrintWriter;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.Callable;
import org.sss.bench.ResultsDir;
import org.sss.bench.classic.ClassicBench;
import org.sss.bench.classic.ClassicPlan;
import org.sss.bench.classic.ClassicReport;
import org.sss.client.cli.CommandExtension;
import org.sss.client.cluster.SssCluster;
import org.sss.core.cluster.ClusterSpec;
import picocli.CommandLine;
import picocli.CommandLine.Command;
import picocli.CommandLine.Option;
import picocli.CommandLine.Parameters;

/**
 * {@code sss bench PARAMS.properties [...] [--engines sss,hadoop] [--out DIR]}: the synthetic
 * read/write/shuffle benchmark of the SSS paper, on SSS and on Hadoop MapReduce.
 */
@Command(name = "bench", mixinStandardHelpOptions = true,
    description = {"Runs the synthetic and classic benchmarks on SSS, Hadoop MapReduce and Spark.",
        "The synthetic workloads are the SSS paper's Table 2 (SSS and Hadoop); the classic jobs (RandomTextWriter,"
            + " WordCount, Pi) run on SSS, Hadoop and Spark (workload=classic files). Each PARAMS file is a properties"
            + " file with the paper's parameter names (see benchmarks/params/).",
        "Without --cluster, SSS runs on an embedded cluster of 'nodes' nodes started untimed: a synthetic run keeps"
            + " it for every later run with that node count, as a deployed cluster is; a classic run starts one per"
            + " job. With --cluster, synthetic runs use its node count (and say so); classic runs refuse another node"
            + " count.",
        "Every point runs 'repeats' timed times per engine (median and range reported), after 'warmups' untimed runs"
            + " of each series' first point."})
public final class BenchCommand implements Callable<Integer> {
  @Parameters(paramLabel = "PARAMS", arity = "1..*", description = "parameter files (.properties)")
  List<Path> files;

  @Option(names = "--engines", paramLabel = "LIST",
      description = "engines to run, overriding the files (sss,hadoop; classic files also spark)")
  String engines;

  @Option(names = "--replication", paramLabel = "R",
      description = "copies of each stored pair on SSS's embedded cluster, overriding the files' replication "
          + "(synthetic workloads; a running cluster's own number wins)")
  Integer replication;

  @Option(names = "--out", paramLabel = "DIR",
      description = "write results.csv, summary.csv, report.md and plots here (default: a new directory under"
          + " $TMPDIR/sss-results, named at the end)")
  Path out;

  @CommandLine.Spec
  CommandLine.Model.CommandSpec spec;

  /** Registers {@code bench} with the sss command line. */
  public static final class Extension implements CommandExtension {
    @Override
    public String name() {
      return "bench";
    }

    @Override
    public Object command() {
      return new BenchCommand();
    }
  }

  @Override
  public Integer call() throws Exception {
    List<SweepPlan.Workload> workloads = new ArrayList<>();
    List<ClassicPlan> classic = new ArrayList<>();
    for (Path f : files) {
      if (ClassicPlan.isClassic(f)) {
        classic.add(ClassicPlan.load(f));
      } else {
        workloads.addAll(SweepPlan.load(f));
      }
    }
    if (replication != null) {
      if (!classic.isEmpty()) {
        throw new CommandLine.ParameterException(spec.commandLine(),
            "--replication applies to the synthetic workloads; the classic files run on one copy");
      }
      for (int i = 0; i < workloads.size(); i++) {
        SweepPlan.Workload w = workloads.get(i);
        int nodes = w.points().get(0).params().nodes();
        if (replication < 1 || replication > nodes) {
          throw new CommandLine.ParameterException(spec.commandLine(), "--replication must be between 1 and "
              + w.name() + "'s nodes (" + nodes + "): each copy of a partition sits on a node of its own");
        }
        workloads.set(i, w.withReplication(replication));
      }
    }
    if (engines != null) {
      if (!classic.isEmpty()) {
        List<String> e = ClassicPlan.engines(engines);
        classic.replaceAll(p -> p.withEngines(e));
      }
      if (!workloads.isEmpty()) {
        // with classic files too, Spark (a classic-only engine) is dropped for the synthetic workloads
        String synthetic = classic.isEmpty() ? engines
            : String.join(",", SweepPlan.list(engines).stream().filter(x -> !x.equals("spark")).toList());
        List<String> e = SweepPlan.engines(synthetic);
        workloads.replaceAll(w -> w.withEngines(e));
      }
    }
    Path clusterFile = clusterFile();
    quietHadoop();
    PrintWriter console = spec.commandLine().getOut();
    if (clusterFile != null) {
      ClusterSpec given = ClusterSpec.load(clusterFile);
      int n = given.nodeCount();
      for (int i = 0; i < workloads.size(); i++) {
        SweepPlan.Workload w = workloads.get(i);
        if (w.points().stream().anyMatch(pt -> pt.params().nodes() != n)) {
          console.println(w.name() + ": running on the given cluster's " + n + " nodes instead of the file's nodes="
              + w.points().get(0).params().nodes());
          w = w.withNodes(n);
        }
        if (w.replication() != given.replication()) {
          console.println(w.name() + ": running on the given cluster's " + given.replication() + " copies instead of "
              + "the file's replication=" + w.replication());
          w = w.withReplication(given.replication());
        }
        workloads.set(i, w);
      }
    }
    long bad = 0;
    // a run always leaves its report, plots and CSVs: in --out, else in a new directory it names at the end
    Path outDir = ResultsDir.orFresh(out, "bench");
    String verdict = null;
    if (!workloads.isEmpty()) {
      Bench bench = new Bench(clusterFile, Progress.console(), console);
      Report report = new Report(outDir);
      List<Record> records = bench.run(workloads, report);
      report.finish(workloads, records, commandLine(), Report.machine());
      verdict = Report.verdict(workloads, records);
      bad += records.stream().filter(r -> r.result() != null && !r.verified()
          || r.result() == null && !r.note().startsWith("skipped")).count();
    }
    if (!classic.isEmpty()) {
      ClassicReport report = new ClassicReport(outDir, workloads.isEmpty());
      List<String> sections = new ArrayList<>();
      for (ClassicPlan plan : classic) {
        List<ClassicBench.Outcome> outcomes = new ClassicBench(clusterFile, Progress.console(), console)
            .run(plan, report);
        console.println();
        console.println(plan.name() + ": " + plan.describe() + "; seconds: " + plan.describeRuns());
        console.print(ClassicReport.table(outcomes, false));
        console.println();
        console.flush();
        sections.add(report.section(plan, outcomes));
        bad += outcomes.stream().filter(o -> o.ran() ? !o.verified() : !o.skipped()).count();
      }
      report.finish(workloads.isEmpty() ? "report.md" : "classic.md", commandLine(),
          Report.machine() + "spark: 4.2.0 (spark-core_2.13, local mode, its own JVM from benchmarks/spark)\n",
          sections);
    }
    console.println("results in " + outDir.toAbsolutePath());
    if (bad > 0) {
      console.println(bad + " run(s) failed or did not verify");
    }
    if (verdict != null) {
      console.println(verdict);
    }
    console.flush();
    return bad > 0 ? 1 : 0;
  }

  private Path clusterFile() {
    for (CommandLine.Model.CommandSpec s = spec; s != null; s = s.parent()) {
      CommandLine.Model.OptionSpec o = s.findOption("--cluster");
      if (o != null && o.getValue() != null) {
        return o.getValue();
      }
    }
    return null;
  }

  private String commandLine() {
    StringBuilder sb = new StringBuilder("bin/sss");
    Path cf = clusterFile();
    if (cf != null) {
      sb.append(" --cluster ").append(cf);
    }
    sb.append(" bench");
    for (Path f : files) {
      sb.append(' ').append(f);
    }
    if (engines != null) {
      sb.append(" --engines ").append(engines);
    }
    if (replication != null) {
      sb.append(" --replication ").append(replication);
    }
    if (out != null) {
      sb.append(" --out ").append(out);
    }
    return sb.toString();
  }

  /** Hadoop's client logs warnings about things that do not matter here (no job jar, no native code). */
  static void quietHadoop() {
    try {
      org.slf4j.Logger l = org.slf4j.LoggerFactory.getLogger("org.apache.hadoop");
      if (l instanceof ch.qos.logback.classic.Logger lb && lb.getEffectiveLevel().levelInt
          >= ch.qos.logback.classic.Level.WARN.levelInt) {
        lb.setLevel(ch.qos.logback.classic.Level.ERROR);
      }
    } catch (Throwable ignored) {
      // another logging backend: leave it
    }
  }

  /** The run loop, separate from the command line for tests. */
  public static final class Bench {
    private final Path clusterFile;
    /**
     * Embedded clusters by node count, started before their first run and kept, as a deployed
     * cluster is: a job's time is then the job's, not a cluster start's (opening RocksDB, first
     * connections between nodes, new threads). Hadoop's local runner has no daemons to keep.
     */
    private final Map<String, SssCluster> embedded = new HashMap<>();
    private final Progress progress;
    private final PrintWriter console;

    public Bench(Path clusterFile, Progress progress, PrintWriter console) {
      this.clusterFile = clusterFile;
      this.progress = progress;
      this.console = console;
    }

    /**
     * Runs every workload: for each point and engine, {@code repeats} timed runs; before a
     * series' (engine and combiner setting) first timed run in a workload, {@code warmups}
     * untimed runs of that same point, recorded as warm-ups. So no timed figure pays for a
     * cold JVM (class loading, JIT compilation), cold caches or first connections: SSS's
     * embedded cluster and Hadoop's local runner both live in this JVM, and each has run the
     * workload's code before its first timed run.
     */
    public List<Record> run(List<SweepPlan.Workload> workloads, Report report) throws Exception {
      List<Record> records = new ArrayList<>();
      SssCluster remote = clusterFile == null ? null : SssCluster.remote(clusterFile);
      try {
        for (SweepPlan.Workload w : workloads) {
          List<Record> mine = new ArrayList<>();
          Set<String> warmed = new HashSet<>();
          for (SweepPlan.Point p : w.points()) {
            String point = (p.value().isEmpty() ? "" : p.param() + "=" + p.value())
                + (p.params().combinerEnabled() ? " combiner" : "");
            for (String engine : w.engines()) {
              if (engine.equals("hadoop") && p.params().partitionMethod() != SyntheticParams.PartitionMethod.AVERAGE) {
                Record r = new Record(p, engine, false, 0, null, "skipped: Hadoop cannot place reducers, "
                    + "partitionMethod=" + p.params().partitionMethod().label() + " runs on SSS only");
                mine.add(r);
                progress.say(w.name() + " " + point + " hadoop: " + r.note());
                continue;
              }
              String series = engine + (p.params().combinerEnabled() ? "+combiner" : "");
              int warmups = warmed.add(series) ? w.warmups() : 0;
              for (int i = 0; i < warmups + w.repeats(); i++) {
                boolean warmup = i < warmups;
                int run = warmup ? i : i - warmups;
                String label = warmup ? "warm-up" + (warmups > 1 ? " " + (run + 1) : "")
                    : w.repeats() > 1 ? "#" + (run + 1) : "";
                progress.run(w.name(), point + (label.isEmpty() ? "" : " " + label), engine);
                Record r = runOne(w, p, engine, warmup, run, remote);
                String what = w.name() + " " + point + " " + engine + (label.isEmpty() ? "" : " " + label);
                if (r.result() != null) {
                  RunResult res = r.result();
                  progress.say(String.format("%s: load %.2f s, job %.2f s, %s%s", what, res.loadSeconds(),
                      res.jobSeconds(), res.verified() ? "verified" : "NOT VERIFIED: " + res.problem(),
                      warmup ? " (warm-up, untimed)" : ""));
                } else {
                  progress.say(what + " FAILED: " + r.note().substring("failed: ".length()));
                }
                mine.add(r);
                if (report != null) {
                  report.append(r);
                }
              }
            }
          }
          records.addAll(mine);
          if (console != null) {
            console.println();
            console.println(Report.title(w));
            console.print(Report.table(w, mine, false));
            console.println();
            console.flush();
          }
        }
      } finally {
        if (remote != null) {
          remote.close();
        }
        for (SssCluster c : embedded.values()) {
          c.close();
        }
        embedded.clear();
      }
      return records;
    }

    private Record runOne(SweepPlan.Workload w, SweepPlan.Point p, String engine, boolean warmup, int run,
                          SssCluster remote) {
      try {
        RunResult res = engine.equals("sss") ? runSss(p.params(), w.replication(), remote) : runHadoop(p.params(), w);
        return new Record(p, engine, warmup, run, res, res.verified() ? "" : res.problem());
      } catch (Exception e) {
        String msg = e.getMessage() == null ? e.toString() : e.getMessage().lines().findFirst().orElse("");
        if (Boolean.getBoolean("sss.debug")) {
          e.printStackTrace();
        }
        return new Record(p, engine, warmup, run, null, "failed: " + msg);
      }
    }

    private RunResult runSss(SyntheticParams p, int replication, SssCluster remote) throws Exception {
      if (remote != null) {
        return new SssSyntheticRunner(remote, true).run(p, progress);
      }
      String shape = p.nodes() + "x" + replication;
      SssCluster c = embedded.get(shape);
      if (c == null) {
        progress.phase("start");
        long t0 = System.nanoTime();
        c = SssCluster.embedded(p.nodes(), p.nodes() * ClusterSpec.DEFAULT_PARTITIONS_PER_NODE,
            replication);
        embedded.put(shape, c);
        progress.say(String.format("sss: embedded cluster of %d nodes keeping %d cop%s started in %.2f s (untimed); it "
            + "serves every later run of that shape", p.nodes(), replication, replication == 1 ? "y" : "ies",
            (System.nanoTime() - t0) / 1e9));
      }
      try {
        return new SssSyntheticRunner(c, false).run(p, progress);
      } catch (Exception e) {
        // a failed run may leave the cluster broken (a node down, tables behind): the next run starts a new one
        embedded.remove(shape);
        c.close();
        throw e;
      }
    }

    private RunResult runHadoop(SyntheticParams p, SweepPlan.Workload w) throws Exception {
      return new HadoopSyntheticRunner(w.hadoopConf()).run(p, progress);
    }
  }
}
