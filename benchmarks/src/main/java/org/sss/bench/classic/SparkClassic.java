package org.sss.bench.classic;

import java.io.BufferedReader;
import java.io.File;
import java.io.IOException;
import java.io.InputStreamReader;
import java.net.URISyntaxException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import java.util.stream.Stream;
import org.sss.bench.synthetic.Progress;

/**
 * Spark's WordCount, run as a separate JVM from the nested Maven project {@code benchmarks/spark}
 * (Spark's Scala, Jackson, Netty and shaded Hadoop stay off this JVM's class path). The project
 * is built on first use with {@code mvn -q -f benchmarks/spark/pom.xml package -DskipTests}, and
 * again when its sources are newer than its jar. All of a job's runs (warm-ups, then timed runs)
 * run in one JVM and one Spark context, so that the timed runs find Spark's code loaded and
 * compiled, as the other engines' do.
 */
public final class SparkClassic {
  static final String MAIN = "org.sss.bench.spark.SparkWordCount";
  private static final Pattern RESULT = Pattern.compile("SPARK_RESULT context=([0-9.]+) job=([0-9.]+).*? run=(\\S+).*");

  private final Path project;
  private final String javaOpts;

  /** @param project the {@code benchmarks/spark} directory; @param javaOpts the Spark JVM's options */
  public SparkClassic(Path project, String javaOpts) {
    this.project = project;
    this.javaOpts = javaOpts;
  }

  /** {@code benchmarks/spark}: {@code -Dsss.spark.project}, else found from this class's jar or classes directory. */
  public static Path findProject() {
    String p = System.getProperty("sss.spark.project");
    if (p != null) {
      return Path.of(p);
    }
    try {
      var src = SparkClassic.class.getProtectionDomain().getCodeSource();
      if (src != null) {
        // benchmarks/target/benchmarks-*.jar or benchmarks/target/classes
        Path benchmarks = Path.of(src.getLocation().toURI()).getParent().getParent();
        Path candidate = benchmarks.resolve("spark");
        if (Files.isRegularFile(candidate.resolve("pom.xml"))) {
          return candidate;
        }
      }
    } catch (URISyntaxException | RuntimeException ignored) {
      // fall through
    }
    return Path.of("benchmarks", "spark");
  }

  /**
   * What one run took, and where it wrote.
   *
   * @param contextSeconds the context's start, once per JVM (the same figure for every run)
   * @param processSeconds the whole Spark JVM's wall time, all runs included
   */
  public record Result(boolean warmup, int run, double contextSeconds, double jobSeconds, double processSeconds,
                       Path output) {}

  /** The runner jar, built first when missing or older than its sources. */
  Path runnerJar(Progress progress) throws IOException, InterruptedException {
    Path jar = jar();
    if (jar != null && Files.isDirectory(project.resolve("target/lib")) && !stale(jar)) {
      return jar;
    }
    if (!Files.isRegularFile(project.resolve("pom.xml"))) {
      throw new IOException("no Spark runner project at " + project.toAbsolutePath() + " (set -Dsss.spark.project)");
    }
    progress.say("spark: building " + project.resolve("pom.xml") + " (first use)...");
    Process mvn = new ProcessBuilder("mvn", "-q", "-B", "-f", project.resolve("pom.xml").toString(), "package",
        "-DskipTests").redirectErrorStream(true).redirectOutput(ProcessBuilder.Redirect.INHERIT).start();
    if (mvn.waitFor() != 0) {
      throw new IOException("building the Spark runner failed: mvn -f " + project.resolve("pom.xml") + " package");
    }
    jar = jar();
    if (jar == null) {
      throw new IOException("the Spark runner build made no jar in " + project.resolve("target"));
    }
    return jar;
  }

  /** True when the pom or a source file is newer than the jar. */
  private boolean stale(Path jar) throws IOException {
    long built = Files.getLastModifiedTime(jar).toMillis();
    if (Files.getLastModifiedTime(project.resolve("pom.xml")).toMillis() > built) {
      return true;
    }
    Path src = project.resolve("src");
    if (!Files.isDirectory(src)) {
      return false;
    }
    try (Stream<Path> files = Files.walk(src)) {
      return files.filter(Files::isRegularFile).anyMatch(f -> {
        try {
          return Files.getLastModifiedTime(f).toMillis() > built;
        } catch (IOException e) {
          return true;
        }
      });
    }
  }

  private Path jar() throws IOException {
    Path target = project.resolve("target");
    if (!Files.isDirectory(target)) {
      return null;
    }
    try (Stream<Path> s = Files.list(target)) {
      return s.filter(f -> f.getFileName().toString().matches("sss-bench-spark-.*\\.jar")).findFirst().orElse(null);
    }
  }

  /**
   * Runs WordCount on {@code input} with {@code local[threads]}: {@code warmups} untimed runs,
   * then {@code repeats} timed runs, in one JVM, into {@code out/warmup-N} and {@code out/run-N}
   * ({@code out} must not exist).
   */
  public List<Result> wordCount(Path input, int threads, Path out, Path log, Progress progress, int warmups,
                                int repeats) throws Exception {
    Path jar = runnerJar(progress);
    List<String> cmd = new ArrayList<>();
    cmd.add(Path.of(System.getProperty("java.home"), "bin", "java").toString());
    for (String o : javaOpts.trim().split("\\s+")) {
      if (!o.isEmpty()) {
        cmd.add(o);
      }
    }
    cmd.add("-cp");
    cmd.add(jar + File.pathSeparator + project.resolve("target/lib") + File.separator + "*");
    cmd.add(MAIN);
    cmd.add(input.toAbsolutePath().toString());
    cmd.add(Integer.toString(threads));
    cmd.add(out.toAbsolutePath().toString());
    cmd.add(Integer.toString(warmups));
    cmd.add(Integer.toString(repeats));
    ProcessBuilder pb = new ProcessBuilder(cmd).redirectError(log.toFile());
    pb.environment().put("SPARK_LOCAL_IP", "127.0.0.1");
    progress.phase(warmups > 0 ? "warm-up and job" : "job");
    long t0 = System.nanoTime();
    Process p = pb.start();
    List<Result> runs = new ArrayList<>();
    StringBuilder stdout = new StringBuilder();
    try (BufferedReader br = new BufferedReader(new InputStreamReader(p.getInputStream(), StandardCharsets.UTF_8))) {
      for (String line = br.readLine(); line != null; line = br.readLine()) {
        stdout.append(line).append('\n');
        Matcher m = RESULT.matcher(line.trim());
        if (m.matches()) {
          String run = m.group(3);
          boolean warmup = run.startsWith("warmup-");
          int n = Integer.parseInt(warmup ? run.substring("warmup-".length()) : run) - 1;
          runs.add(new Result(warmup, n, Double.parseDouble(m.group(1)), Double.parseDouble(m.group(2)), 0,
              out.resolve(warmup ? run : "run-" + run)));
          progress.update((double) runs.size() / (warmups + repeats));
        }
      }
    }
    int rc = p.waitFor();
    double wall = (System.nanoTime() - t0) / 1e9;
    if (rc != 0 || runs.size() != warmups + repeats) {
      String err = Files.exists(log) ? tail(Files.readString(log, StandardCharsets.UTF_8), 15) : "";
      throw new IllegalStateException("Spark WordCount failed (exit " + rc + ", " + runs.size() + " of "
          + (warmups + repeats) + " runs reported): " + stdout.toString().strip() + (err.isEmpty() ? "" : "\n" + err));
    }
    return runs.stream().map(r -> new Result(r.warmup(), r.run(), r.contextSeconds(), r.jobSeconds(), wall,
        r.output())).toList();
  }

  static String tail(String s, int lines) {
    List<String> all = s.lines().toList();
    return String.join("\n", all.subList(Math.max(0, all.size() - lines), all.size()));
  }
}
