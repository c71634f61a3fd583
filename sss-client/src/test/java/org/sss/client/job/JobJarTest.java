package org.sss.client.job;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.io.ByteArrayOutputStream;
import java.io.IOException;
import java.io.OutputStream;
import java.io.PrintStream;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import java.util.jar.JarEntry;
import java.util.jar.JarOutputStream;
import java.util.stream.Stream;
import javax.tools.JavaCompiler;
import javax.tools.ToolProvider;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;
import org.sss.client.BulkWriter;
import org.sss.client.SssClient;
import org.sss.client.cli.SssCommand;
import org.sss.client.cluster.LocalProcessCluster;
import org.sss.client.io.BulkIO;
import org.sss.core.api.Serdes;

/**
 * Job JARs shipped to a 3-process cluster through {@code sss run --jar}: the classes exist only
 * in the JARs (compiled here), and two JARs with different versions of one class run one after
 * the other, each with its own version.
 */
class JobJarTest {
  @TempDir
  static Path dir;
  static LocalProcessCluster cluster;

  static final String SOURCE = """
      package demo;
      import org.sss.client.SssClient;
      import org.sss.client.job.Job;
      import org.sss.core.api.*;
      public class VersionJob {
        public static class Tag implements Mapper<Long, String, String, String> {
          public void map(Long k, String v, Emitter<String, String> out) {
            if ("%1$s".equals("BOOM")) throw new IllegalStateException("boom in the user's mapper");
            out.emit("version", "%1$s");
          }
        }
        public static class First implements Reducer<String, String, String, String> {
          public void reduce(String k, Iterable<String> vs, Emitter<String, String> out) {
            out.emit(k, vs.iterator().next());
          }
        }
        public static void main(String[] args) throws Exception {
          try (SssClient c = SssClient.fromEnvironment()) {
            c.submit(Job.named("version").input(args[0], Serdes.LONG, Serdes.STRING)
                .map(Tag.class, Serdes.STRING, Serdes.STRING)
                .reduce(First.class, Serdes.STRING, Serdes.STRING)
                .output(args[1]).overwrite().build()).await();
          }
        }
      }
      """;

  @BeforeAll
  static void start() throws Exception {
    cluster = LocalProcessCluster.start(dir.resolve("cluster"), 3, 0, "512m");
    try (SssClient client = SssClient.connect(cluster.spec())) {
      client.createTable("rows", BulkIO.textTable(), false);
      try (BulkWriter w = client.writer("rows", BulkIO.textTable().types())) {
        for (long i = 1; i <= 100; i++) {
          w.put(Serdes.LONG.encodeKey(i), Serdes.STRING.encodeValue("r" + i));
        }
      }
    }
  }

  @AfterAll
  static void stop() {
    cluster.stopAll();
  }

  static Path jar(String version) throws IOException {
    Path src = dir.resolve("src-" + version + "/demo");
    Files.createDirectories(src);
    Files.writeString(src.resolve("VersionJob.java"), SOURCE.formatted(version));
    Path classes = dir.resolve("classes-" + version);
    Files.createDirectories(classes);
    JavaCompiler javac = ToolProvider.getSystemJavaCompiler();
    int rc = javac.run(null, null, null, "-d", classes.toString(), "-cp", System.getProperty("java.class.path"),
        src.resolve("VersionJob.java").toString());
    assertEquals(0, rc, "compiling the job");
    Path jar = dir.resolve("job-" + version + ".jar");
    try (JarOutputStream out = new JarOutputStream(Files.newOutputStream(jar));
         Stream<Path> files = Files.walk(classes)) {
      for (Path f : (Iterable<Path>) files.filter(Files::isRegularFile)::iterator) {
        out.putNextEntry(new JarEntry(classes.relativize(f).toString().replace('\\', '/')));
        Files.copy(f, out);
        out.closeEntry();
      }
    }
    return jar;
  }

  static int sss(String... args) {
    PrintStream saved = System.out;
    try {
      System.setOut(new PrintStream(OutputStream.nullOutputStream()));
      return SssCommand.commandLine().execute(args);
    } finally {
      System.setOut(saved);
    }
  }

  static String version(String table) throws IOException {
    try (SssClient client = SssClient.connect(cluster.spec())) {
      return Serdes.STRING.decodeValue(client.get(table, Serdes.STRING.encodeKey("version")).orElseThrow());
    }
  }

  @Test
  void run_twoVersionsOfOneClass_eachRunsItsOwn() throws Exception {
    String clusterFile = cluster.clusterFile().toString();
    assertEquals(0, sss("--cluster", clusterFile, "run", "--jar", jar("V1").toString(),
        "--class", "demo.VersionJob", "rows", "out-v1"));
    assertEquals(0, sss("--cluster", clusterFile, "run", "--jar", jar("V2").toString(),
        "--class", "demo.VersionJob", "rows", "out-v2"));
    assertEquals("V1", version("out-v1"));
    assertEquals("V2", version("out-v2"));
    for (int node = 0; node < 3; node++) {
      try (Stream<Path> cached = Files.list(dir.resolve("cluster/node-" + node + "/data/jars"))) {
        assertEquals(2, cached.filter(p -> p.toString().endsWith(".jar")).count(), "node " + node + " caches both JARs");
      }
    }
  }

  @Test
  void run_userCodeThrows_printsTheUsersWholeStackTrace() throws Exception {
    ByteArrayOutputStream err = new ByteArrayOutputStream();
    var cl = SssCommand.commandLine();
    cl.setErr(new java.io.PrintWriter(new java.io.OutputStreamWriter(err, StandardCharsets.UTF_8), true));
    int rc = cl.execute("--cluster", cluster.clusterFile().toString(), "run", "--jar", jar("BOOM").toString(),
        "--class", "demo.VersionJob", "rows", "out-boom");
    assertEquals(1, rc);
    String text = err.toString(StandardCharsets.UTF_8);
    assertTrue(text.startsWith("sss run: "), text);
    assertTrue(text.contains("boom in the user's mapper"), text);
    assertTrue(text.contains("demo.VersionJob$Tag.map(VersionJob.java:"), "the user's frame, without -Dsss.debug: " + text);
  }

  @Test
  void run_missingClass_failsWithOneLine() throws Exception {
    ByteArrayOutputStream err = new ByteArrayOutputStream();
    var cl = SssCommand.commandLine();
    cl.setErr(new java.io.PrintWriter(new java.io.OutputStreamWriter(err, StandardCharsets.UTF_8), true));
    int rc = cl.execute("--cluster", cluster.clusterFile().toString(), "run", "--jar", jar("V3").toString(),
        "--class", "demo.Nope");
    assertEquals(1, rc, "a failure (not a usage error)");
    String text = err.toString(StandardCharsets.UTF_8).trim();
    assertEquals(1, text.lines().count(), text);
    Path v3 = dir.resolve("job-V3.jar");
    assertEquals("sss run: class demo.Nope is not in " + v3, text);
    // the command left nothing behind: no cluster property for later programs, no job's table
    assertThrows(IllegalStateException.class, SssClient::fromEnvironment);
    assertEquals(null, System.getProperty("sss.job.jar"));
    try (SssClient client = SssClient.connect(cluster.spec())) {
      List<String> tables = client.listTables().stream().map(t -> t.name()).toList();
      assertTrue(tables.contains("rows"), tables.toString());
      assertTrue(tables.stream().allMatch(t -> t.equals("rows") || t.startsWith("out-v")), tables.toString());
    }
  }
}
