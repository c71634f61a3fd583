package org.sss.client.job;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.io.ByteArrayOutputStream;
import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Random;
import java.util.StringTokenizer;
import java.util.TreeMap;
import java.util.stream.Stream;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;
import org.sss.client.BulkWriter;
import org.sss.client.SssClient;
import org.sss.client.TableSpec;
import org.sss.client.cluster.SssCluster;
import org.sss.client.io.BulkIO;
import org.sss.core.api.Emitter;
import org.sss.core.api.Mapper;
import org.sss.core.api.Reducer;
import org.sss.core.api.Serdes;
import org.sss.core.io.TextOutputDir;
import org.sss.core.keys.KeyCodec;
import org.sss.core.keys.PairTypes;
import org.sss.core.proto.DataType;
import org.sss.core.proto.ErrorCode;

/**
 * Jobs whose output is text part files written by the nodes ({@link Job.Builder#outputText}),
 * and the parallel dump, which is such a job: checked against plain models of what went in.
 */
class TextOutputTest {
  static SssCluster cluster;
  static SssClient client;
  @TempDir
  static Path dir;

  @BeforeAll
  static void start() throws IOException {
    cluster = SssCluster.embedded(3);
    client = cluster.client();
  }

  @AfterAll
  static void stop() {
    client.close();
    cluster.close();
  }

  /** Splits a line at whitespace. */
  public static final class Words implements Mapper<Long, String, String, Long> {
    @Override
    public void map(Long offset, String line, Emitter<String, Long> out) {
      StringTokenizer t = new StringTokenizer(line);
      while (t.hasMoreTokens()) {
        out.emit(t.nextToken(), 1L);
      }
    }
  }

  /** Sums counts. */
  public static final class Sum implements Reducer<String, Long, String, Long> {
    @Override
    public void reduce(String word, Iterable<Long> counts, Emitter<String, Long> out) {
      long s = 0;
      for (long c : counts) {
        s += c;
      }
      out.emit(word, s);
    }
  }

  @Test
  void wordCountIntoFiles_givesTheModelsCounts_eachReducePartInKeyOrder() throws IOException {
    Random rnd = new Random(3);
    Map<String, Long> model = new HashMap<>();
    StringBuilder text = new StringBuilder();
    for (int line = 0; line < 20_000; line++) {
      for (int w = rnd.nextInt(9); w > 0; w--) {
        String word = "w" + rnd.nextInt(3000) + (rnd.nextInt(20) == 0 ? "é" : "");
        model.merge(word, 1L, Long::sum);
        text.append(word).append(' ');
      }
      text.append('\n');
    }
    Path in = dir.resolve("words.txt");
    Files.writeString(in, text);
    Path out = dir.resolve("counts");
    Job job = Job.named("wc-files").inputText(in).map(Words.class, Serdes.STRING, Serdes.LONG).combine(Sum.class)
        .reduce(Sum.class, Serdes.STRING, Serdes.LONG).outputText(out).build();
    JobResult result = client.submit(job).await();

    assertTrue(Files.exists(out.resolve(TextOutputDir.SUCCESS)));
    StageSummary reduce = result.stages().get(1);
    assertEquals(model.size(), reduce.recordsShuffled(), "the lines written, as the stage's written pairs");
    long bytes = 0;
    for (Path part : parts(out)) {
      bytes += Files.size(part);
    }
    assertEquals(bytes, reduce.bytesShuffled(), "the bytes written, as the stage's written bytes");
    assertFalse(Files.exists(out.resolve(TextOutputDir.TEMPORARY)), "the attempt's directory is gone");
    Map<String, Long> got = new HashMap<>();
    List<Path> parts = parts(out);
    assertTrue(parts.size() > 1, "one part per reduce task, written on every node");
    for (Path part : parts) {
      assertTrue(part.getFileName().toString().matches("part-r-\\d{5}"), part.toString());
      byte[] previous = null;
      for (String line : Files.readAllLines(part, StandardCharsets.UTF_8)) {
        String[] kv = line.split("\t", -1);
        assertEquals(2, kv.length, line);
        assertEquals(null, got.put(kv[0], Long.parseLong(kv[1])), "a word in two lines: " + kv[0]);
        byte[] key = KeyCodec.encodeString(kv[0]);
        assertTrue(previous == null || Arrays.compareUnsigned(previous, key) < 0, "not in key order in " + part);
        previous = key;
      }
    }
    assertEquals(model, got);
  }

  @Test
  void dumpParts_ofAMultiValuedTable_isEveryPairAsTheClientsDumpPrintsIt() throws IOException {
    TableSpec options = TableSpec.of(PairTypes.of(DataType.LONG, DataType.STRING)).multiValued(true);
    client.createTable("mv", options, false);
    Random rnd = new Random(5);
    List<String> model = new ArrayList<>(); // "key\tvalue" of every pair, values as raw bytes in ISO-8859-1
    try (BulkWriter w = client.writer("mv", options.types())) {
      for (int i = 0; i < 30_000; i++) {
        long key = rnd.nextInt(10_000) - 5_000;
        byte[] value = new byte[rnd.nextInt(40)];
        for (int b = 0; b < value.length; b++) {
          value[b] = (byte) (rnd.nextInt(10) == 0 ? 0x80 + rnd.nextInt(0x7f) : 'a' + rnd.nextInt(26)); // not all UTF-8
        }
        w.put(KeyCodec.encodeLong(key), value);
        model.add(key + "\t" + new String(value, StandardCharsets.ISO_8859_1));
      }
    }
    Path out = dir.resolve("mv-dump");
    assertEquals(model.size(), BulkIO.dumpParts(client, "mv", out, false, ProgressListener.none(), n -> { }));

    List<String> got = new ArrayList<>();
    for (Path part : parts(out)) {
      assertTrue(part.getFileName().toString().matches("part-m-\\d{5}"), part.toString());
      long previous = Long.MIN_VALUE;
      for (String line : Files.readAllLines(part, StandardCharsets.ISO_8859_1)) {
        long key = Long.parseLong(line.substring(0, line.indexOf('\t')));
        assertTrue(previous <= key, "not in key order in " + part);
        previous = key;
        got.add(line);
      }
    }
    assertEquals(sorted(model), sorted(got));
    Path single = dir.resolve("mv.txt");
    BulkIO.dump(client, "mv", single, n -> { });
    assertEquals(sorted(Files.readAllLines(single, StandardCharsets.ISO_8859_1)), sorted(got),
        "the same lines as the client's dump");
  }

  @Test
  void aDirectoryThatHoldsFiles_isRefusedUnlessOverwrite_andAFailedJobLeavesNothing() throws IOException {
    ensureNums();
    Path used = Files.createDirectories(dir.resolve("used"));
    Files.writeString(used.resolve("keep.txt"), "mine");
    JobFailedException refused = assertThrows(JobFailedException.class, () -> client.submit(modTen(used, false)).await());
    assertEquals(ErrorCode.TABLE_EXISTS, refused.code());
    assertTrue(refused.getMessage().contains("keep.txt"), refused.getMessage());
    assertEquals(List.of(used.resolve("keep.txt")), list(used), "nothing changed");

    Path fresh = dir.resolve("never");
    Job failing = Job.named("fails").input("nums", Serdes.LONG, Serdes.STRING)
        .map(TestJobs.FailsOnRecord.class, Serdes.LONG, Serdes.LONG).outputText(fresh).build();
    JobFailedException failed = assertThrows(JobFailedException.class, () -> client.submit(failing).await());
    assertEquals(ErrorCode.USER_CODE_FAILED, failed.code());
    assertFalse(Files.exists(fresh), "a failed job removes the directory it made, its part files with it");

    client.submit(modTen(used, true)).await();
    assertFalse(Files.exists(used.resolve("keep.txt")), "overwrite replaced the directory's contents");
    assertTrue(Files.exists(used.resolve(TextOutputDir.SUCCESS)));
    Map<Long, Long> counts = new TreeMap<>();
    for (Path part : parts(used)) {
      for (String line : Files.readAllLines(part)) {
        String[] kv = line.split("\t");
        counts.merge(Long.parseLong(kv[0]), Long.parseLong(kv[1]), Long::sum);
      }
    }
    Map<Long, Long> expected = new TreeMap<>();
    for (long i = 0; i < 5000; i++) {
      expected.put(i % 10, 500L);
    }
    assertEquals(expected, counts);
  }

  @Test
  void aFileWrittenIntoTheDirectoryWhileTheJobRuns_failsTheCommit_andIsKept() throws Exception {
    ensureNums();
    Path out = dir.resolve("raced");
    Job slow = Job.named("slow").input("nums", Serdes.LONG, Serdes.STRING).map(TestJobs.Slow.class, Serdes.LONG, Serdes.LONG)
        .outputText(out).build();
    RunningJob running = client.submit(slow);
    long deadline = System.nanoTime() + 10_000_000_000L;
    while (!Files.isDirectory(out) && System.nanoTime() < deadline) {
      Thread.sleep(5);
    }
    Path mine = out.resolve("part-m-00003");
    Files.writeString(mine, "someone else's");
    JobFailedException e = assertThrows(JobFailedException.class, running::await);
    assertEquals(ErrorCode.TABLE_EXISTS, e.code(), e.getMessage());
    assertEquals("someone else's", Files.readString(mine));
    assertEquals(List.of(out.resolve(TextOutputDir.TEMPORARY), mine), list(out), "no part moved, no _SUCCESS");
    long lines = 0;
    try (Stream<Path> kept = Files.walk(out.resolve(TextOutputDir.TEMPORARY))) {
      for (Path p : kept.filter(Files::isRegularFile).toList()) {
        lines += Files.readAllLines(p).size();
      }
    }
    assertEquals(5000, lines, "the finished job's parts are kept below _temporary, every line");
  }

  @Test
  void anOpaqueTable_isDumpedByTheClientIntoOnePart_withTheSameRules() throws IOException {
    TableSpec options = TableSpec.of(PairTypes.of(DataType.OPAQUE, DataType.OPAQUE));
    client.createTable("opaque", options, false);
    try (BulkWriter w = client.writer("opaque", options.types())) {
      for (int i = 0; i < 500; i++) {
        w.put(new byte[] {(byte) i, (byte) (i >> 8), 7}, new byte[] {(byte) (i * 31), 0, '\n'});
      }
    }
    Path single = dir.resolve("opaque.txt");
    BulkIO.dump(client, "opaque", single, n -> { });
    Path out = Files.createDirectories(dir.resolve("opaque-parts"));
    Files.writeString(out.resolve("old.txt"), "old");
    assertThrows(JobFailedException.class, () -> BulkIO.dumpParts(client, "opaque", out, false, ProgressListener.none(), n -> { }));
    assertEquals(List.of(out.resolve("old.txt")), list(out), "refused without overwrite, nothing changed");
    assertEquals(500, BulkIO.dumpParts(client, "opaque", out, true, ProgressListener.none(), n -> { }));
    assertEquals(List.of(out.resolve(TextOutputDir.SUCCESS), out.resolve("part-r-00000")), list(out));
    assertArrayEquals(Files.readAllBytes(single), Files.readAllBytes(out.resolve("part-r-00000")));
  }

  private static synchronized void ensureNums() {
    if (client.listTables().stream().anyMatch(t -> t.name().equals("nums"))) {
      return;
    }
    client.createTable("nums", BulkIO.textTable(), false);
    try (BulkWriter w = client.writer("nums", BulkIO.textTable().types())) {
      for (long i = 0; i < 5000; i++) {
        w.put(KeyCodec.encodeLong(i), ("v" + i).getBytes(StandardCharsets.UTF_8));
      }
    }
  }

  private static Job modTen(Path out, boolean overwrite) {
    Job.Builder b = Job.named("modten").input("nums", Serdes.LONG, Serdes.STRING)
        .map(TestJobs.ModTen.class, Serdes.LONG, Serdes.LONG).reduce(TestJobs.SumLongs.class, Serdes.LONG, Serdes.LONG)
        .outputText(out);
    return (overwrite ? b.overwrite() : b).build();
  }

  /** The part files of an output directory (its other entries: only _SUCCESS). */
  private static List<Path> parts(Path out) throws IOException {
    List<Path> parts = new ArrayList<>();
    for (Path p : list(out)) {
      String name = p.getFileName().toString();
      if (name.startsWith("part-")) {
        parts.add(p);
      } else {
        assertEquals(TextOutputDir.SUCCESS, name, "unexpected entry in " + out);
      }
    }
    return parts;
  }

  private static List<Path> list(Path d) throws IOException {
    try (Stream<Path> s = Files.list(d)) {
      return s.sorted().toList();
    }
  }

  private static List<String> sorted(List<String> lines) {
    List<String> s = new ArrayList<>(lines);
    s.sort(null);
    return s;
  }
}
