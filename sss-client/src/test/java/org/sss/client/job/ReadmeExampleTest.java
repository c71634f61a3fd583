package org.sss.client.job;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.TreeMap;
import java.util.concurrent.TimeUnit;
import java.util.jar.JarEntry;
import java.util.jar.JarOutputStream;
import java.util.stream.Stream;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;
import org.sss.client.SssClient;
import org.sss.client.TableScan;
import org.sss.client.ScanOptions;
import org.sss.client.cli.SssCommand;
import org.sss.client.cluster.LocalProcessCluster;
import org.sss.core.api.Serdes;

/**
 * The README's Java job is the sample project's {@code MyJob.java} ({@code docs/sample-job}),
 * word for word, and it works as a user would run it: built by Maven from the sample's own
 * {@code pom.xml} against SSS's installed artifacts, run from its own {@code main} in its own
 * JVM against a cluster of server processes, with the table "lines" loaded by {@code sss load}.
 * Its counts, and its counter, are checked against a plain count of the same file in this test.
 */
class ReadmeExampleTest {
  private static final Path ROOT = Path.of(System.getProperty("user.dir")).getParent();
  private static final Path SAMPLE = ROOT.resolve("docs/sample-job");
  private static final Path EXAMPLE = SAMPLE.resolve("src/main/java/com/example/MyJob.java");

  @TempDir
  Path dir;

  @Test
  void readme_showsTheExampleFile() throws IOException {
    String readme = Files.readString(ROOT.resolve("README.md"));
    String file = Files.readString(EXAMPLE);
    assertTrue(readme.contains("```java\n" + file + "```\n"),
        "README.md's Java block must be docs/sample-job/src/main/java/com/example/MyJob.java, whole");
  }

  @Test
  void sampleProject_builtByMaven_countsEveryWordOfTheReadme() throws Exception {
    Path jar = buildSample();
    // the command the README's "Using it" starts its cluster with (two copies of each partition)
    assertEquals(0, SssCommand.commandLine().execute("cluster", "start", "--nodes", "3", "--dir",
        dir.resolve("cluster").toString(), "--heap", "512m"));
    LocalProcessCluster cluster = LocalProcessCluster.attach(dir.resolve("cluster"));
    try {
      assertEquals(2, cluster.spec().replication(), "cluster start's default");
      Path text = ROOT.resolve("README.md");
      assertEquals(0, SssCommand.commandLine().execute("--cluster", cluster.clusterFile().toString(),
          "load", "lines", text.toString()));
      Process p = new ProcessBuilder(javaBinary(), "-cp", jar + java.io.File.pathSeparator
          + System.getProperty("java.class.path"), "com.example.MyJob", cluster.clusterFile().toString())
          .redirectErrorStream(true).redirectOutput(dir.resolve("job.log").toFile()).start();
      assertTrue(p.waitFor(120, TimeUnit.SECONDS), "the job ends");
      String log = Files.readString(dir.resolve("job.log"));
      assertEquals(0, p.exitValue(), log);
      Map<String, Long> expected = countWords(Files.readAllLines(text, StandardCharsets.UTF_8));
      long words = expected.values().stream().mapToLong(Long::longValue).sum();
      assertTrue(log.contains("counted " + words + " words, " + expected.size() + " distinct"), log);
      assertEquals(expected, stored(cluster));
    } finally {
      cluster.stopAll();
    }
  }

  /** The example's tokenizing, written out plainly: lower case, split at anything not a letter or digit. */
  private static Map<String, Long> countWords(List<String> lines) {
    Map<String, Long> counts = new TreeMap<>();
    for (String line : lines) {
      StringBuilder word = new StringBuilder();
      String lower = line.toLowerCase(Locale.ROOT) + " ";
      for (int i = 0; i < lower.length(); ) {
        int c = lower.codePointAt(i);
        if (Character.isLetter(c) || Character.isDigit(c)) {
          word.appendCodePoint(c);
        } else if (word.length() > 0) {
          counts.merge(word.toString(), 1L, Long::sum);
          word.setLength(0);
        }
        i += Character.charCount(c);
      }
    }
    return counts;
  }

  private static Map<String, Long> stored(LocalProcessCluster cluster) {
    Map<String, Long> counts = new TreeMap<>();
    try (SssClient client = SssClient.connect(cluster.spec());
         TableScan scan = client.scan("counts", ScanOptions.anyOrder())) {
      while (scan.hasNext()) {
        var pair = scan.next();
        counts.put(Serdes.STRING.decodeKey(pair.key()), Serdes.LONG.decodeValue(pair.value()));
      }
    }
    return counts;
  }

  /**
   * Builds the sample as its README says, with {@code mvn package} in a copy of its directory.
   * SSS's artifacts are first installed into the local repository as {@code mvn install} would,
   * from this build's classes: the tests run before any JAR is packaged.
   */
  private Path buildSample() throws Exception {
    Path jars = dir.resolve("artifacts");
    Files.createDirectories(jars);
    mvn(ROOT, "install:install-file", "-Dfile=" + ROOT.resolve("pom.xml"), "-DpomFile=" + ROOT.resolve("pom.xml"));
    for (String module : List.of("sss-core", "sss-client")) {
      Path jar = jars.resolve(module + ".jar");
      jarOf(ROOT.resolve(module).resolve("target/classes"), jar);
      mvn(ROOT, "install:install-file", "-Dfile=" + jar, "-DpomFile=" + ROOT.resolve(module).resolve("pom.xml"));
    }
    Path copy = dir.resolve("sample-job");
    try (Stream<Path> walk = Files.walk(SAMPLE)) {
      for (Path f : walk.filter(f -> !SAMPLE.relativize(f).startsWith("target")).toList()) {
        Path to = copy.resolve(SAMPLE.relativize(f).toString());
        if (Files.isDirectory(f)) {
          Files.createDirectories(to);
        } else {
          Files.copy(f, to);
        }
      }
    }
    mvn(copy, "package");
    Path jar = copy.resolve("target/sample-job-1.0.jar");
    assertTrue(Files.isRegularFile(jar), "mvn package made " + jar);
    return jar;
  }

  /**
   * Runs Maven in {@code where}: offline first, since what it needs is usually in the local
   * repository already, then online (Maven Central) when it is not, as on a fresh machine where
   * the install or jar plugins were never fetched.
   */
  private void mvn(Path where, String... args) throws Exception {
    Path log = Files.createTempFile(dir, "mvn-", ".log");
    if (runMaven(where, log, true, args) == 0) {
      return;
    }
    int online = runMaven(where, log, false, args);
    assertEquals(0, online, () -> "mvn " + String.join(" ", args) + " in " + where + " failed:\n" + readQuietly(log));
  }

  private static int runMaven(Path where, Path log, boolean offline, String... args) throws Exception {
    List<String> cmd = new ArrayList<>(List.of("mvn", "-B", "-q", "-nsu"));
    if (offline) {
      cmd.add("-o");
    }
    cmd.addAll(List.of(args));
    Process p = new ProcessBuilder(cmd).directory(where.toFile()).redirectErrorStream(true)
        .redirectOutput(log.toFile()).start();
    assertTrue(p.waitFor(300, TimeUnit.SECONDS), "mvn " + String.join(" ", args) + " ends");
    return p.exitValue();
  }

  private static String readQuietly(Path log) {
    try {
      return Files.readString(log);
    } catch (IOException e) {
      return "(" + e + ")";
    }
  }

  private static void jarOf(Path classes, Path jar) throws IOException {
    List<Path> files = new ArrayList<>();
    try (Stream<Path> walk = Files.walk(classes)) {
      walk.filter(Files::isRegularFile).forEach(files::add);
    }
    try (JarOutputStream out = new JarOutputStream(Files.newOutputStream(jar))) {
      for (Path f : files) {
        out.putNextEntry(new JarEntry(classes.relativize(f).toString().replace('\\', '/')));
        Files.copy(f, out);
        out.closeEntry();
      }
    }
  }

  private static String javaBinary() {
    return Path.of(System.getProperty("java.home"), "bin", "java").toString();
  }
}
