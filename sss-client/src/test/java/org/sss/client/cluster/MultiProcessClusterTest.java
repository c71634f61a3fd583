package org.sss.client.cluster;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNotEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.io.ByteArrayOutputStream;
import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.Random;
import java.util.TreeMap;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicLong;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.MethodOrderer;
import org.junit.jupiter.api.Order;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.TestInstance;
import org.junit.jupiter.api.TestMethodOrder;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.io.TempDir;
import org.sss.client.SssClient;
import org.sss.client.TableSpec;
import org.sss.client.TableStatus;
import org.sss.client.it.LeakDetection;
import org.sss.client.io.BulkIO;
import org.sss.core.keys.KeyCodec;
import org.sss.core.proto.DataType;
import org.sss.core.transport.Buffers;

/**
 * A cluster of three real server processes: a text file goes in through {@link BulkIO#load},
 * comes back out through {@link BulkIO#dump} byte for byte, and survives a restart of every
 * process. The steps run in order and share the cluster.
 */
@TestInstance(TestInstance.Lifecycle.PER_CLASS)
@TestMethodOrder(MethodOrderer.OrderAnnotation.class)
@Timeout(value = 120, unit = TimeUnit.SECONDS)
class MultiProcessClusterTest {
  static final String HEAP = "256m";
  static final int LINES = 100_000;

  @TempDir
  static Path work;

  Path dir;
  LocalProcessCluster cluster;
  Path input;
  byte[] expectedDump;
  LeakDetection leakDetection;

  @BeforeAll
  void start() throws IOException {
    leakDetection = LeakDetection.sampled();
    dir = work.resolve("cluster");
    cluster = LocalProcessCluster.start(dir, 3, 0, HEAP);
    input = work.resolve("input.txt");
    expectedDump = writeInput(input, LINES);
  }

  @AfterAll
  void stop() {
    if (cluster != null) {
      cluster.stopAll();
    }
    if (leakDetection != null) {
      leakDetection.close();
    }
  }

  /**
   * Writes a text file of {@code lines} lines (ASCII, tabs, empty lines, multi-byte UTF-8, a
   * long line, no newline after the last) and returns the dump it should produce.
   */
  /** The keys of lines 1000 and 2000, long ones. */
  static long line1000;
  static long line2000;

  static byte[] writeInput(Path file, int lines) throws IOException {
    Random r = new Random(1);
    String[] words = {"alpha", "beta", "gamma", "déjà vu", "日本語", "emoji \uD83D\uDE00", "tab\there", "", " "};
    ByteArrayOutputStream text = new ByteArrayOutputStream();
    ByteArrayOutputStream dump = new ByteArrayOutputStream();
    for (int i = 1; i <= lines; i++) {
      StringBuilder line = new StringBuilder();
      if (i % 1000 == 0) {
        line.append("x".repeat(10_000));
      } else if (i % 97 != 0) {
        int n = 1 + r.nextInt(8);
        for (int w = 0; w < n; w++) {
          line.append(words[r.nextInt(words.length)]).append(' ').append(r.nextInt(1000));
        }
      } // else: an empty line
      byte[] bytes = line.toString().getBytes(StandardCharsets.UTF_8);
      long offset = text.size(); // a line's key: where its first byte is
      if (i == 1000) {
        line1000 = offset;
      } else if (i == 2000) {
        line2000 = offset;
      }
      text.write(bytes);
      if (i < lines) {
        text.write('\n');
      }
      dump.write((offset + "\t").getBytes(StandardCharsets.UTF_8));
      dump.write(bytes);
      dump.write('\n');
    }
    Files.write(file, text.toByteArray());
    return dump.toByteArray();
  }

  @Test
  @Order(1)
  void load_textFileOfManyLines_countEqualsLineCount() throws IOException {
    AtomicLong progress = new AtomicLong();
    try (SssClient client = cluster.client()) {
      long loaded = BulkIO.load(client, "text", input, progress::addAndGet);
      assertEquals(LINES, loaded);
      assertEquals(LINES, client.count("text"));
      TableSpec o = client.tableStats("text").spec();
      assertEquals(List.of(DataType.LONG, DataType.STRING, false), List.of(o.types().key(), o.types().value(),
          o.multiValued()));
    }
    assertEquals(0, progress.get(), "the nodes read the file: the client sent nothing");
  }

  @Test
  @Order(2)
  void dump_afterLoad_isTheInputKeyedByByteOffsetWithTabs() throws IOException {
    Path out = work.resolve("dump-1.txt");
    try (SssClient client = cluster.client()) {
      assertEquals(LINES, BulkIO.dump(client, "text", out, n -> { }));
    }
    assertDumpEquals(expectedDump, Files.readAllBytes(out));
  }

  @Test
  @Order(3)
  void load_crLfAndLoneCrLineEnds_splitLikeHadoop() throws IOException {
    Path crlf = work.resolve("crlf.txt");
    Files.write(crlf, "one\r\ntwo\rthree\n\r\nfive\r".getBytes(StandardCharsets.UTF_8));
    Path out = work.resolve("crlf-dump.txt");
    try (SssClient client = cluster.client()) {
      assertEquals(5, BulkIO.load(client, "crlf", crlf, n -> { }));
      BulkIO.dump(client, "crlf", out, n -> { });
    }
    assertEquals("0\tone\n5\ttwo\n9\tthree\n15\t\n17\tfive\n", Files.readString(out));
  }

  @Test
  @Order(4)
  void restartWholeCluster_dataAndTableOptionsSurvive() throws IOException {
    List<Long> pidsBefore = pids();
    SssClient longLived = cluster.client();
    assertEquals(LINES, longLived.count("text"));
    cluster.stopAll();
    for (int i = 0; i < 3; i++) {
      assertTrue(cluster.pid(i).isEmpty(), "node " + i + " stopped");
    }
    cluster = LocalProcessCluster.start(dir, 3, 0, HEAP);
    List<Long> pidsAfter = pids();
    for (int i = 0; i < 3; i++) {
      assertNotEquals(pidsBefore.get(i), pidsAfter.get(i), "node " + i + " is a new process");
    }

    // a client connected before the restart reconnects to the new processes
    try (longLived) {
      assertEquals(LINES, longLived.count("text"));
      assertArrayEquals("x".repeat(10_000).getBytes(StandardCharsets.UTF_8),
          longLived.get("text", KeyCodec.encodeLong(line2000)).orElseThrow());
    }

    Path out = work.resolve("dump-2.txt");
    try (SssClient client = cluster.client()) {
      assertEquals(LINES, client.count("text"));
      TableStatus info = client.tableStats("text");
      assertEquals(List.of(DataType.LONG, DataType.STRING), List.of(info.spec().types().key(),
          info.spec().types().value()));
      assertEquals(List.of("crlf", "text"), client.listTables().stream().map(TableStatus::name).toList());
      Optional<byte[]> longLine = client.get("text", KeyCodec.encodeLong(line1000));
      assertArrayEquals("x".repeat(10_000).getBytes(StandardCharsets.UTF_8), longLine.orElseThrow());
      assertTrue(client.get("text", KeyCodec.encodeLong(line1000 + 1)).isEmpty(), "no line starts there");
      BulkIO.dump(client, "text", out, n -> { });
    }
    assertDumpEquals(expectedDump, Files.readAllBytes(out));
  }

  @Test
  @Order(5)
  void serverLogs_afterCleanRunsAndRestart_holdNoErrors() throws IOException {
    Map<Integer, List<String>> errors = new TreeMap<>();
    for (int i = 0; i < 3; i++) {
      for (String line : Files.readAllLines(dir.resolve("node-" + i).resolve("server.log"))) {
        if (line.contains(" ERROR ") || line.contains("Exception")) {
          errors.computeIfAbsent(i, k -> new ArrayList<>()).add(line);
        }
      }
    }
    assertEquals(Map.of(), errors);
  }

  /**
   * The servers were started with {@code Buffers.JVM_OPTIONS}: their buffer chunks come unzeroed
   * (a server without them warns, which the tests' log level shows).
   */
  @Test
  @Order(6)
  void serverLogs_sayNothingOfZeroedChunks() throws IOException {
    for (int i = 0; i < 3; i++) {
      List<String> lines = Files.readAllLines(dir.resolve("node-" + i).resolve("server.log"));
      assertTrue(lines.stream().noneMatch(l -> l.contains("chunks are zeroed")), "node " + i + ": " + lines);
    }
  }

  /**
   * Each server runs with the options every SSS server gets and those of SSS_SERVER_JAVA_OPTS,
   * which the build sets for its tests (the root pom's surefire configuration).
   */
  @Test
  @Order(7)
  void servers_runWithTheBuffersOptions_andThoseOfTheEnvironment() throws IOException {
    String extra = System.getenv("SSS_SERVER_JAVA_OPTS");
    assertTrue(extra != null && !extra.isBlank(), "the build sets SSS_SERVER_JAVA_OPTS for the tests");
    for (long pid : pids()) {
      List<String> args = List.of(new String(Files.readAllBytes(Path.of("/proc", Long.toString(pid), "cmdline")),
          StandardCharsets.UTF_8).split("\0"));
      assertTrue(args.containsAll(Buffers.JVM_OPTIONS), args.toString());
      assertTrue(args.containsAll(LocalProcessCluster.extraServerOptions(extra)), args.toString());
      assertTrue(args.indexOf(extra.strip().split("\\s+")[0]) < args.indexOf("-cp"), "JVM options come before the class path");
    }
    assertEquals(List.of(), LocalProcessCluster.extraServerOptions("  "));
    assertEquals(List.of("-Da=1", "-Xlog:gc"), LocalProcessCluster.extraServerOptions(" -Da=1   -Xlog:gc "));
  }

  private List<Long> pids() {
    List<Long> out = new ArrayList<>();
    for (int i = 0; i < 3; i++) {
      out.add(cluster.pid(i).orElseThrow(() -> new AssertionError("a node is not running")));
    }
    return out;
  }

  static void assertDumpEquals(byte[] expected, byte[] actual) {
    if (!java.util.Arrays.equals(expected, actual)) {
      int i = java.util.Arrays.mismatch(expected, actual);
      int from = Math.max(0, i - 60);
      String e = new String(expected, from, Math.min(expected.length, i + 60) - from, StandardCharsets.UTF_8);
      String a = new String(actual, from, Math.max(0, Math.min(actual.length, i + 60) - from), StandardCharsets.UTF_8);
      assertEquals(e, a, "dump differs at byte " + i + " (expected " + expected.length + " bytes, got "
          + actual.length + ")");
    }
  }
}
