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
import javax.tools.JavaCompiler;
import javax.tools.ToolProvider;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;
import org.sss.client.SssClient;
import org.sss.client.TableScan;
import org.sss.client.ScanOptions;
import org.sss.client.cli.SssCommand;
import org.sss.client.cluster.LocalProcessCluster;
import org.sss.core.api.Serdes;

/**
 * The README's Java job is {@code docs/examples/MyJob.java}, word for word, and it works as a
 * user would run it: compiled into a JAR of its own, run from its own {@code main} in its own
 * JVM against a cluster of server processes, with the table "lines" loaded by {@code sss load}.
 * Its counts are checked against a plain count of the same file in this test.
 */
class ReadmeExampleTest {
  private static final Path ROOT = Path.of(System.getProperty("user.dir")).getParent();
  private static final Path EXAMPLE = ROOT.resolve("docs/examples/MyJob.java");

  @TempDir
  Path dir;

  @Test
  void readme_showsTheExampleFile() throws IOException {
    String readme = Files.readString(ROOT.resolve("README.md"));
    String file = Files.readString(EXAMPLE);
    assertTrue(readme.contains("```java\n" + file + "```\n"),
        "README.md's Java block must be docs/examples/MyJob.java, whole");
  }

  @Test
  void example_compiledIntoItsOwnJar_countsEveryWordOfTheReadme() throws Exception {
    Path jar = compile();
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
      assertTrue(log.contains("counted " + expected.size() + " distinct words"), log);
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

  private Path compile() throws IOException {
    Path src = dir.resolve("src/com/example");
    Files.createDirectories(src);
    Files.copy(EXAMPLE, src.resolve("MyJob.java"));
    Path classes = dir.resolve("classes");
    Files.createDirectories(classes);
    JavaCompiler javac = ToolProvider.getSystemJavaCompiler();
    int rc = javac.run(null, null, null, "-d", classes.toString(), "-cp", System.getProperty("java.class.path"),
        src.resolve("MyJob.java").toString());
    assertEquals(0, rc, "compiling docs/examples/MyJob.java");
    Path jar = dir.resolve("my-job.jar");
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
    return jar;
  }

  private static String javaBinary() {
    return Path.of(System.getProperty("java.home"), "bin", "java").toString();
  }
}
