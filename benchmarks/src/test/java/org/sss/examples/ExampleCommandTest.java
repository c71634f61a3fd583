package org.sss.examples;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.io.PrintWriter;
import java.io.StringWriter;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Random;
import java.util.StringTokenizer;
import java.util.TreeMap;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.ExtendWith;
import org.junit.jupiter.api.io.TempDir;
import org.sss.client.SssClient;
import org.sss.client.cli.SssCommand;
import picocli.CommandLine;

/** The {@code sss example} commands, run through the real command line. */
@ExtendWith(SharedClusters.class)
class ExampleCommandTest {
  @TempDir
  Path dir;

  private final StringWriter err = new StringWriter();

  private int sss(String... args) {
    CommandLine cl = SssCommand.commandLine();
    cl.setErr(new PrintWriter(err, true));
    return cl.execute(args);
  }

  private Path clusterFile() throws Exception {
    Path f = dir.resolve("cluster.properties");
    SharedClusters.get(3).spec().save(f);
    return f;
  }

  @Test
  void wordcount_onAnEmbeddedCluster_writesWordTabCount() throws Exception {
    Random rnd = new Random(5);
    StringBuilder text = new StringBuilder();
    for (int i = 0; i < 2000; i++) {
      for (int w = rnd.nextInt(8); w > 0; w--) {
        text.append("w").append(rnd.nextInt(150)).append(' ');
      }
      text.append('\n');
    }
    Path in = dir.resolve("in.txt");
    Files.writeString(in, text);
    Path out = dir.resolve("counts.txt");
    int status = sss("--nodes", "2", "example", "wordcount", in.toString(), out.toString());
    assertEquals(0, status, err.toString());
    Map<String, Long> expected = new TreeMap<>();
    StringTokenizer t = new StringTokenizer(text.toString());
    while (t.hasMoreTokens()) {
      expected.merge(t.nextToken(), 1L, Long::sum);
    }
    List<String> expectedLines = new ArrayList<>();
    expected.forEach((w, c) -> expectedLines.add(w + "\t" + c));
    assertEquals(expectedLines, Files.readAllLines(out, StandardCharsets.UTF_8));
  }

  @Test
  void unwritableOut_isRefusedInOneLineBeforeAnyTableOrJob() throws Exception {
    Path in = dir.resolve("in.txt");
    Files.writeString(in, "a b\n");
    Path notADirectory = dir.resolve("plain-file");
    Files.writeString(notADirectory, "x");
    try (SssClient client = SharedClusters.get(3).client()) {
      long tablesBefore = client.listTables().size();
      for (String out : List.of(notADirectory + "/counts.txt", dir.resolve("a-directory").toString())) {
        Files.createDirectories(dir.resolve("a-directory").resolve(ExampleIO.PART_FILE)); // a part file that is a directory
        err.getBuffer().setLength(0);
        int status = sss("example", "wordcount", "--cluster", clusterFile().toString(), in.toString(), out);
        assertEquals(1, status, err.toString());
        List<String> lines = err.toString().lines().toList();
        assertEquals(1, lines.size(), err.toString());
        assertTrue(lines.get(0).startsWith("sss example wordcount: cannot write " + out + ": "), lines.get(0));
        assertEquals(tablesBefore, client.listTables().size(), "nothing was loaded or run");
      }
    }
  }

  @Test
  void wordcount_ofADirectory_onARunningCluster_intoADirectory() throws Exception {
    Path docs = Files.createDirectories(dir.resolve("docs"));
    Files.writeString(docs.resolve("a.txt"), "the cat\nthe dog\n");
    Files.writeString(docs.resolve("b.txt"), "a dog\n");
    Path out = dir.resolve("out");
    int status = sss("example", "wordcount", "--cluster", clusterFile().toString(), "--no-combiner",
        docs.toString(), out + "/");
    assertEquals(0, status, err.toString());
    assertEquals(List.of("a\t1", "cat\t1", "dog\t2", "the\t2"),
        Files.readAllLines(out.resolve(ExampleIO.PART_FILE)));
    try (SssClient client = SharedClusters.get(3).client()) {
      assertTrue(client.listTables().stream().noneMatch(x -> x.name().startsWith("example-")),
          "the example's tables are dropped");
    }
  }

  @Test
  void everyExample_runsFromTheCommandLine() throws Exception {
    String cluster = clusterFile().toString();
    Path text = dir.resolve("text.txt");
    Files.writeString(text, "b 2\na 1\nb 2\nab 12\n");

    Path grep = dir.resolve("grep.txt");
    assertEquals(0, sss("--cluster", cluster, "example", "grep", text.toString(), grep.toString(), "[a-z]"), err.toString());
    assertEquals(List.of("b\t3", "a\t2"), Files.readAllLines(grep).stream()
        .map(l -> l.split("\t")[1] + "\t" + l.split("\t")[0]).toList());

    Path sorted = dir.resolve("sorted.txt");
    assertEquals(0, sss("--cluster", cluster, "example", "sort", text.toString(), sorted.toString()), err.toString());
    assertEquals(List.of("a 1", "ab 12", "b 2", "b 2"), Files.readAllLines(sorted));

    java.io.ByteArrayOutputStream piOut = new java.io.ByteArrayOutputStream();
    java.io.PrintStream savedOut = System.out;
    System.setOut(new java.io.PrintStream(piOut, true, StandardCharsets.UTF_8));
    try {
      assertEquals(0, sss("--cluster", cluster, "example", "pi", "3", "1000"), err.toString());
    } finally {
      System.setOut(savedOut);
    }
    List<String> piLines = piOut.toString(StandardCharsets.UTF_8).lines().toList();
    assertTrue(piLines.contains("Number of Maps  = 3"), piLines.toString());
    assertTrue(piLines.contains("Samples per Map = 1000"), piLines.toString());
    assertTrue(piLines.contains("Estimated value of Pi is " + piOfHaltonPoints(3 * 1000)), piLines.toString());

    Path random = dir.resolve("random");
    assertEquals(0, sss("--cluster", cluster, "example", "randomtextwriter", random + "/", "--bytes", "20k",
        "--maps", "3", "--seed", "7"), err.toString());
    long size = 0;
    int parts = 0;
    try (var files = Files.list(random)) {
      for (Path p : files.toList()) {
        if (p.getFileName().toString().startsWith("part-m-")) {
          size += Files.size(p);
          parts++;
          for (String line : Files.readAllLines(p)) {
            // the line as Hadoop's writes it (key words, a tab, value words), with no key of ours before it
            assertTrue(line.matches("[^\\t\\d]+\t[^\\t\\d]+"), "a line of words, no key: " + line);
          }
        }
      }
    }
    assertTrue(parts >= 3, "a part file per map task");
    assertTrue(Files.exists(random.resolve("_SUCCESS")));
    assertTrue(size >= 20 * 1024 && size < 20 * 1024 + 3 * 2000, "size " + size);

    Path docs = Files.createDirectories(dir.resolve("docs"));
    Files.writeString(docs.resolve("x"), "apple pie");
    Files.writeString(docs.resolve("y"), "apple tart");
    Path index = dir.resolve("index.txt");
    assertEquals(0, sss("--cluster", cluster, "example", "invertedindex", docs.toString(), index.toString()), err.toString());
    assertEquals(List.of("apple\tx\ty", "pie\tx", "tart\ty"), Files.readAllLines(index));

    Path baskets = dir.resolve("baskets.txt");
    Files.writeString(baskets, "milk bread\nmilk bread eggs\nbread eggs\nmilk\n");
    Path frequent = dir.resolve("frequent.txt");
    assertEquals(0, sss("--cluster", cluster, "example", "apriori", baskets.toString(), frequent.toString(),
        "--min-support", "0.5"), err.toString());
    assertEquals(List.of("bread\t3", "bread eggs\t2", "bread milk\t2", "eggs\t2", "milk\t3"), Files.readAllLines(frequent));
  }

  /**
   * 4 x (points inside the circle) / n over the points 1..n of the Halton sequence in bases 2 and
   * 3, printed to 20 decimal places as Hadoop's pi prints it: a coordinate is the index written
   * in its base with the digits mirrored behind the point.
   */
  static String piOfHaltonPoints(long n) {
    long inside = 0;
    for (long i = 1; i <= n; i++) {
      double x = mirrored(i, 2) - 0.5;
      double y = mirrored(i, 3) - 0.5;
      if (x * x + y * y <= 0.25) {
        inside++;
      }
    }
    return new java.math.BigDecimal(4 * inside).setScale(20)
        .divide(java.math.BigDecimal.valueOf(n), java.math.RoundingMode.HALF_UP).toPlainString();
  }

  private static double mirrored(long index, int base) {
    String digits = Long.toString(index, base);
    double x = 0;
    for (int i = 0; i < digits.length(); i++) {
      x += Character.digit(digits.charAt(i), base) * Math.pow(base, i - digits.length());
    }
    return x;
  }

  @Test
  void errors_printOneLineAndExitNonZero() throws Exception {
    int status = sss("--cluster", clusterFile().toString(), "example", "wordcount",
        dir.resolve("missing.txt").toString(), dir.resolve("out.txt").toString());
    assertEquals(1, status);
    String message = err.toString().strip();
    assertEquals(1, message.lines().count(), message);
    assertTrue(message.contains("no such file or directory"), message);

    err.getBuffer().setLength(0);
    assertEquals(1, sss("--cluster", clusterFile().toString(), "example", "grep", "x", "y", "(unclosed"));
    assertTrue(err.toString().strip().contains("invalid regex"), err.toString());

    err.getBuffer().setLength(0);
    assertEquals(2, sss("example", "pi", "3"));
    assertTrue(err.toString().contains("sss example pi"), err.toString());
  }
}
