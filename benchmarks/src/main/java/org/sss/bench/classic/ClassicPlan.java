package org.sss.bench.classic;

import java.io.IOException;
import java.io.Reader;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Properties;
import java.util.Set;
import java.util.TreeSet;
import org.sss.bench.synthetic.Sizes;
import org.sss.client.cluster.HugePages;

/**
 * The parameters of the classic benchmark: the jobs of the Hadoop-on-VMs paper
 * (RandomTextWriter, WordCount on its output, Pi) on SSS, Hadoop and Spark side by side.
 *
 * <h2>File format</h2>
 * A Java properties file marked {@code workload=classic} (or naming only classic jobs in
 * {@code workloads=randomtextwriter,wordcount,pi}); keys:
 * <ul>
 *   <li>{@code workloads}: the jobs to run, in this order (default all three);
 *   <li>{@code nodes}, {@code threadsPerNode}: SSS's embedded cluster; Hadoop's local job runner and
 *       Spark's {@code local[N]} get {@code nodes x threadsPerNode} threads;
 *   <li>{@code engines}: any of {@code sss,hadoop,spark} (Spark runs WordCount only: it has no
 *       RandomTextWriter or Pi example);
 *   <li>{@code classic.textBytes}: the bytes RandomTextWriter writes (binary suffixes: 64MiB, 1GiB);
 *   <li>{@code classic.workDir}: where the text and outputs go (default: the system temp directory);
 *   <li>{@code wordcount.input}: a text file to count instead of RandomTextWriter's output;
 *   <li>{@code pi.maps}, {@code pi.samples}: Pi's maps and samples per map;
 *   <li>{@code repeats}: timed runs of every job on every engine (default 1; tables give the
 *       median and the range);
 *   <li>{@code warmups}: untimed runs of every job on every engine before its timed runs
 *       (default 1), in the same JVM (Spark: in its one JVM and context);
 *   <li>{@code spark.javaOpts}: the Spark JVM's options (default {@code -Xmx4g -Xmn256m}, bin/sss's
 *       heap, with {@code -XX:+UseTransparentHugePages} where the kernel gives huge pages on
 *       request, as bin/sss asks for them: {@link HugePages}).
 * </ul>
 */
public record ClassicPlan(String name, Path source, int nodes, int threadsPerNode, List<String> jobs,
                          List<String> engines, long textBytes, Path workDir, Path wordcountInput, int piMaps,
                          long piSamples, String sparkJavaOpts, int warmups, int repeats) {
  public static final String RANDOMTEXTWRITER = "randomtextwriter";
  public static final String WORDCOUNT = "wordcount";
  public static final String PI = "pi";
  public static final List<String> JOBS = List.of(RANDOMTEXTWRITER, WORDCOUNT, PI);
  public static final List<String> ENGINES = List.of("sss", "hadoop", "spark");
  static final Set<String> KNOWN = new TreeSet<>(List.of("workload", "workloads", "nodes", "threadsPerNode",
      "engines", "classic.textBytes", "classic.workDir", "wordcount.input", "pi.maps", "pi.samples",
      "spark.javaOpts", "warmups", "repeats"));

  /** Threads every engine gets. */
  public int threads() {
    return nodes * threadsPerNode;
  }

  public ClassicPlan withEngines(List<String> e) {
    return new ClassicPlan(name, source, nodes, threadsPerNode, jobs, e, textBytes, workDir, wordcountInput, piMaps,
        piSamples, sparkJavaOpts, warmups, repeats);
  }

  /** True when the file is a classic benchmark's (rather than a synthetic one's). */
  public static boolean isClassic(Path file) throws IOException {
    Map<String, String> kv = read(file);
    if ("classic".equals(kv.get("workload"))) {
      return true;
    }
    if (!kv.containsKey("workloads")) {
      return false;
    }
    List<String> names = list(kv.get("workloads"));
    return !names.isEmpty() && JOBS.containsAll(names);
  }

  static Map<String, String> read(Path file) throws IOException {
    Properties p = new Properties();
    try (Reader r = Files.newBufferedReader(file, StandardCharsets.UTF_8)) {
      p.load(r);
    }
    Map<String, String> all = new LinkedHashMap<>();
    for (String k : new TreeSet<>(p.stringPropertyNames())) {
      all.put(k, p.getProperty(k).trim());
    }
    return all;
  }

  public static ClassicPlan load(Path file) throws IOException {
    String stem = file.getFileName().toString().replaceFirst("\\.properties$", "");
    try {
      return parse(read(file), stem, file.toAbsolutePath());
    } catch (IllegalArgumentException e) {
      throw new IllegalArgumentException(file + ": " + e.getMessage(), e);
    }
  }

  /** Parses the keys of one file; relative paths resolve against the file's directory. */
  public static ClassicPlan parse(Map<String, String> kv, String name, Path source) {
    Set<String> unknown = new TreeSet<>(kv.keySet());
    unknown.removeAll(KNOWN);
    if (!unknown.isEmpty()) {
      throw new IllegalArgumentException("unknown parameters " + unknown + " (known: " + KNOWN + ")");
    }
    if (kv.containsKey("workload") && !kv.get("workload").equals("classic")) {
      throw new IllegalArgumentException("workload must be 'classic' in a classic benchmark file, got '"
          + kv.get("workload") + "'");
    }
    List<String> jobs = kv.containsKey("workloads") ? list(kv.get("workloads")) : JOBS;
    for (String j : jobs) {
      if (!JOBS.contains(j)) {
        throw new IllegalArgumentException("unknown job '" + j + "' in workloads (known: " + JOBS + ")");
      }
    }
    if (jobs.isEmpty()) {
      throw new IllegalArgumentException("workloads is empty");
    }
    Path dir = source == null || source.getParent() == null ? Path.of(".") : source.getParent();
    int nodes = intValue(kv, "nodes", 1);
    int threads = intValue(kv, "threadsPerNode", 2);
    long textBytes = Sizes.parse("classic.textBytes", kv.getOrDefault("classic.textBytes", "1GiB"));
    int piMaps = intValue(kv, "pi.maps", 8);
    long piSamples = Sizes.parse("pi.samples", kv.getOrDefault("pi.samples", "10000000"));
    if (nodes < 1 || threads < 1) {
      throw new IllegalArgumentException("nodes and threadsPerNode must be at least 1");
    }
    if (textBytes < 1) {
      throw new IllegalArgumentException("classic.textBytes must be at least 1");
    }
    if (piMaps < 1 || piSamples < 1) {
      throw new IllegalArgumentException("pi.maps and pi.samples must be at least 1");
    }
    int warmups = intValue(kv, "warmups", 1);
    int repeats = intValue(kv, "repeats", 1);
    if (warmups < 0 || repeats < 1) {
      throw new IllegalArgumentException("warmups must be at least 0 and repeats at least 1, got " + warmups + " and "
          + repeats);
    }
    Path workDir = kv.containsKey("classic.workDir") ? dir.resolve(kv.get("classic.workDir")) : null;
    Path input = kv.containsKey("wordcount.input") ? dir.resolve(kv.get("wordcount.input")) : null;
    return new ClassicPlan(name, source, nodes, threads, List.copyOf(jobs),
        engines(kv.getOrDefault("engines", "sss,hadoop,spark")), textBytes, workDir, input, piMaps, piSamples,
        kv.getOrDefault("spark.javaOpts", defaultSparkJavaOpts()), warmups, repeats);
  }

  /** bin/sss's heap ({@code -Xmx4g -Xmn256m}), and huge pages where bin/sss's own JVM asks for them. */
  static String defaultSparkJavaOpts() {
    String hugePages = HugePages.jvmOption();
    return hugePages == null ? "-Xmx4g -Xmn256m" : "-Xmx4g -Xmn256m " + hugePages;
  }

  /** Checks an engine list. */
  public static List<String> engines(String text) {
    List<String> out = list(text);
    for (String e : out) {
      if (!ENGINES.contains(e)) {
        throw new IllegalArgumentException("unknown engine '" + e + "' (known: " + String.join(", ", ENGINES) + ")");
      }
    }
    if (out.isEmpty()) {
      throw new IllegalArgumentException("engines is empty");
    }
    return out;
  }

  private static int intValue(Map<String, String> kv, String key, int dflt) {
    return kv.containsKey(key) ? Math.toIntExact(Sizes.parse(key, kv.get(key))) : dflt;
  }

  static List<String> list(String s) {
    List<String> out = new ArrayList<>();
    for (String part : s.split(",")) {
      if (!part.isBlank()) {
        out.add(part.trim());
      }
    }
    return out;
  }

  /** Runs of each job on each engine, warm-ups first. */
  public int runs() {
    return warmups + repeats;
  }

  /** A one-line description. */
  public String describe() {
    return String.format("nodes=%d threads/node=%d (every engine: %d threads), text %s, pi %d maps x %,d samples",
        nodes, threadsPerNode, threads(), Sizes.format(textBytes), piMaps, piSamples);
  }

  /** How many runs each figure is. */
  public String describeRuns() {
    return (repeats == 1 ? "1 timed run" : "median of " + repeats + " timed runs (range: fastest-slowest)")
        + " per job and engine, after " + (warmups == 0 ? "no warm-up run"
        : warmups + " untimed warm-up run" + (warmups == 1 ? "" : "s") + " of the same job on the same engine");
  }
}
