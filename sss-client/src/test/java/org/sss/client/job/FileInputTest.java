package org.sss.client.job;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.io.ByteArrayOutputStream;
import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import java.util.Map;
import java.util.Random;
import java.util.TreeMap;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;
import org.sss.client.ScanOptions;
import org.sss.client.SssClient;
import org.sss.client.TableScan;
import org.sss.client.cluster.SssCluster;
import org.sss.client.TableSpec;
import org.sss.client.io.BulkIO;
import org.sss.core.api.Emitter;
import org.sss.core.api.Mapper;
import org.sss.core.api.Pair;
import org.sss.core.api.Serdes;
import org.sss.core.proto.ErrorCode;

/**
 * Jobs over text files read on the nodes (a split per map task), checked against a plain model
 * of the files' lines, and {@code load}, which is such a job.
 */
class FileInputTest {
  static SssCluster cluster;
  static SssClient client;
  @TempDir
  static Path dir;
  /** The model of the big file: offset of each line's first byte to the line. */
  static final Map<Long, String> LINES = new TreeMap<>();
  static Path big;

  @BeforeAll
  static void start() throws IOException {
    cluster = SssCluster.embedded(3);
    client = cluster.client();
    // about 30 MB: four splits over three nodes, cut wherever they fall
    Random rnd = new Random(7);
    ByteArrayOutputStream text = new ByteArrayOutputStream();
    while (text.size() < 30_000_000) {
      StringBuilder line = new StringBuilder();
      int words = rnd.nextInt(20) == 0 ? 20_000 : rnd.nextInt(12); // some long lines, some empty
      for (int w = 0; w < words; w++) {
        line.append(w == 0 ? "" : " ").append("w").append(rnd.nextInt(5000)).append(rnd.nextInt(50) == 0 ? "é" : "");
      }
      LINES.put((long) text.size(), line.toString());
      text.writeBytes(line.toString().getBytes(StandardCharsets.UTF_8));
      text.writeBytes(rnd.nextBoolean() ? new byte[] {'\n'} : new byte[] {'\r', '\n'});
    }
    big = dir.resolve("big.txt");
    Files.write(big, text.toByteArray());
  }

  @AfterAll
  static void stop() {
    client.close();
    cluster.close();
  }

  static Map<Long, String> read(String table) {
    Map<Long, String> out = new TreeMap<>();
    try (TableScan s = client.scan(table, ScanOptions.inKeyOrder())) {
      while (s.hasNext()) {
        Pair p = s.next();
        out.put(Serdes.LONG.decodeKey(p.key()), Serdes.STRING.decodeValue(p.value()));
      }
    }
    return out;
  }

  @Test
  void identityOverASplitFile_givesEveryLineOnceKeyedByItsOffset() {
    JobResult r = client.submit(Job.named("copy").inputText(big).map(Mapper.Identity.class, Serdes.LONG, Serdes.STRING)
        .output("copy").overwrite().build()).await();
    assertEquals(LINES.size(), r.stages().get(0).recordsIn());
    assertEquals(LINES, read("copy"));
    client.dropTable("copy", true);
  }

  @Test
  void load_readsTheFileOnTheNodes_andReplaceSwapsTheTableWhole() throws IOException {
    assertEquals(LINES.size(), BulkIO.load(client, "loaded", big, n -> { }));
    assertEquals(LINES, read("loaded"));
    Path small = dir.resolve("small.txt");
    Files.writeString(small, "one\ntwo\n");
    assertEquals(2, BulkIO.load(client, "loaded", small, org.sss.core.proto.DataType.STRING,
        TableSpec.Compression.NONE, true, n -> { }, ProgressListener.none()));
    assertEquals(Map.of(0L, "one", 4L, "two"), read("loaded"));
    assertEquals(TableSpec.Compression.NONE, client.tableStats("loaded").spec().compression(),
        "the replaced table compressed as the load said");
    client.dropTable("loaded", true);
  }

  @Test
  void load_keepsEveryByteOfLinesThatAreNotUtf8() throws IOException {
    Path latin1 = dir.resolve("latin1.txt");
    byte[] line = {'c', 'a', 'f', (byte) 0xE9, ' ', (byte) 0xFF, (byte) 0xFE};
    byte[] text = new byte[line.length + 3];
    System.arraycopy(line, 0, text, 0, line.length);
    text[line.length] = '\n';
    text[line.length + 1] = 'x';
    text[line.length + 2] = '\n';
    Files.write(latin1, text);
    assertEquals(2, BulkIO.load(client, "latin1", latin1, n -> { }));
    org.junit.jupiter.api.Assertions.assertArrayEquals(line,
        client.get("latin1", Serdes.LONG.encodeKey(0L)).orElseThrow(), "stored as read, not decoded");
    client.dropTable("latin1", true);
  }

  /**
   * The model of a directory's load: each visible file's lines (Hadoop's rule: a line ends at
   * {@code \n}, {@code \r\n} or a lone {@code \r}, or at the file's end) keyed by the offset
   * of their first byte in the files' concatenation in path order.
   */
  static Map<Long, String> concatenatedLines(Path root) throws IOException {
    Map<Long, String> lines = new TreeMap<>();
    long base = 0;
    List<Path> files;
    try (var walk = Files.walk(root)) {
      files = walk.filter(Files::isRegularFile)
          .filter(f -> !f.getFileName().toString().startsWith(".") && !f.getFileName().toString().startsWith("_"))
          .sorted().toList();
    }
    for (Path f : files) {
      byte[] b = Files.readAllBytes(f);
      int i = 0;
      while (i < b.length) {
        int start = i;
        while (i < b.length && b[i] != '\n' && b[i] != '\r') {
          i++;
        }
        lines.put(base + start, new String(b, start, i - start, StandardCharsets.UTF_8));
        if (i < b.length) {
          i += b[i] == '\r' && i + 1 < b.length && b[i + 1] == '\n' ? 2 : 1;
        }
      }
      base += b.length;
    }
    return lines;
  }

  /** Equal maps, or a failure naming the first key that differs (the maps are too big to print). */
  static void assertSameLines(Map<Long, String> expected, Map<Long, String> actual) {
    if (!expected.equals(actual)) {
      Long first = null;
      for (Long k : new java.util.TreeSet<>(java.util.stream.Stream.concat(expected.keySet().stream(),
          actual.keySet().stream()).toList())) {
        if (!java.util.Objects.equals(expected.get(k), actual.get(k))) {
          first = k;
          break;
        }
      }
      String e = String.valueOf(expected.get(first));
      String a = String.valueOf(actual.get(first));
      org.junit.jupiter.api.Assertions.fail(expected.size() + " lines expected, " + actual.size() + " stored; first"
          + " difference at key " + first + ": expected " + e.substring(0, Math.min(60, e.length())) + ", stored "
          + a.substring(0, Math.min(60, a.length())));
    }
  }

  @Test
  void loadOfADirectory_keysLinesByOffsetInTheFilesConcatenation_onTheNodesAndFromTheClient(@TempDir Path own)
      throws IOException {
    Path tree = own.resolve("tree");
    Files.createDirectories(tree.resolve("b"));
    Files.copy(big, tree.resolve("a.txt")); // 30 MB: split inside the file, splits of other files beside it
    Files.writeString(tree.resolve("b/c.txt"), "x\r\ny\rz"); // a lone CR, no end on the last line
    Files.writeString(tree.resolve("b/d.txt"), "\n\nlast\n");
    Files.writeString(tree.resolve("b/empty.txt"), "");
    byte[] head = new byte[9_000_000];
    System.arraycopy(Files.readAllBytes(big), 1_000_003, head, 0, head.length); // starts inside a line
    Files.write(tree.resolve("e.txt"), head);
    Files.writeString(tree.resolve(".hidden"), "not loaded\n");
    Files.writeString(tree.resolve("_SUCCESS"), "not loaded\n");
    Map<Long, String> expected = concatenatedLines(tree);
    assertTrue(expected.size() > LINES.size() + 4, "the model has every file's lines, none lost to another's key");

    assertEquals(expected.size(), BulkIO.load(client, "dir-nodes", tree, n -> { }));
    assertSameLines(expected, read("dir-nodes"));
    // the client's path (lines sent from here: appended to an existing table) keys them alike
    client.createTable("dir-client", BulkIO.textTable(), false);
    assertEquals(expected.size(), BulkIO.load(client, "dir-client", tree, n -> { }));
    assertSameLines(expected, read("dir-client"));
    // named relative to the working directory, with a "." and a ".." in it, the same lines
    Path relative = Path.of(".").resolve(Path.of("").toAbsolutePath().relativize(tree.resolve("b/..")));
    assertEquals(expected.size(), BulkIO.load(client, "dir-relative", relative, n -> { }));
    assertSameLines(expected, read("dir-relative"));
    // a directory of one file loads as that file does
    Path one = own.resolve("one");
    Files.createDirectories(one);
    Files.copy(big, one.resolve("only.txt"));
    BulkIO.load(client, "dir-one", one, n -> { });
    assertSameLines(LINES, read("dir-one"));
    for (String t : List.of("dir-nodes", "dir-client", "dir-relative", "dir-one")) {
      client.dropTable(t, true);
    }
  }

  @Test
  void aPathGoingUpAfterALink_isReadWhereThisMachineResolvesIt(@TempDir Path own) throws IOException {
    Files.createDirectories(own.resolve("other/inner"));
    Files.createDirectories(own.resolve("other/data"));
    Files.createDirectories(own.resolve("lk/data"));
    Files.writeString(own.resolve("other/data/r.txt"), "where the link leads\n");
    Files.writeString(own.resolve("lk/data/w.txt"), "beside the link\n");
    Files.createSymbolicLink(own.resolve("lk/evil"), own.resolve("other/inner"));
    Path path = own.resolve("lk/evil/../data"); // other/data, as the file system resolves it
    BulkIO.load(client, "up-after-link", path, n -> { });
    assertEquals(Map.of(0L, "where the link leads"), read("up-after-link"));
    client.dropTable("up-after-link", true);
  }

  /** (offset, line) to (line, 1). */
  public static final class LineAsKey implements Mapper<Long, String, String, Long> {
    @Override
    public void map(Long offset, String line, Emitter<String, Long> out) {
      out.emit(line, 1L);
    }
  }

  @Test
  void directory_everyVisibleFile_hiddenAndUnderscoreNamesLeftOut() throws IOException {
    Path in = dir.resolve("tree");
    Files.createDirectories(in.resolve("sub"));
    Files.writeString(in.resolve("a.txt"), "x\ny\nx");
    Files.writeString(in.resolve("sub/b.txt"), "y\r\nz\n");
    Files.writeString(in.resolve("empty.txt"), "");
    Files.writeString(in.resolve(".hidden"), "hidden\n");
    Files.writeString(in.resolve("_SUCCESS"), "marker\n");
    client.submit(Job.named("lines").inputText(in).map(LineAsKey.class, Serdes.STRING, Serdes.LONG)
        .reduce(TestJobs.CountValues.class, Serdes.STRING, Serdes.LONG).output("line-counts").overwrite().build()).await();
    Map<String, Long> counts = new TreeMap<>();
    try (TableScan s = client.scan("line-counts", ScanOptions.inKeyOrder())) {
      while (s.hasNext()) {
        Pair p = s.next();
        counts.put(Serdes.STRING.decodeKey(p.key()), Serdes.LONG.decodeValue(p.value()));
      }
    }
    assertEquals(Map.of("x", 2L, "y", 2L, "z", 1L), counts);
    client.dropTable("line-counts", true);
  }

  @Test
  void emptyFile_givesAnEmptyOutput_andAMissingOneFailsNamingIt() throws IOException {
    Path empty = dir.resolve("empty.txt");
    Files.writeString(empty, "");
    JobResult r = client.submit(Job.named("empty").inputText(empty).map(Mapper.Identity.class, Serdes.LONG, Serdes.STRING)
        .output("from-empty").build()).await();
    assertEquals(0, r.stages().get(0).recordsIn());
    assertEquals(0, client.count("from-empty"));
    client.dropTable("from-empty", true);

    Path missing = dir.resolve("no-such.txt");
    JobFailedException e = assertThrows(JobFailedException.class, () -> client.submit(Job.named("missing")
        .inputText(missing).map(Mapper.Identity.class, Serdes.LONG, Serdes.STRING).output("never").build()).await());
    assertEquals(ErrorCode.NO_SUCH_FILE, e.code());
    assertTrue(e.getMessage().contains(missing.toString()), e.getMessage());
    assertTrue(client.listTables().stream().noneMatch(t -> t.name().equals("never")));
  }
}
