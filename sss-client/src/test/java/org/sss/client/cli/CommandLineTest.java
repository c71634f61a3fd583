package org.sss.client.cli;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNotEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.io.ByteArrayOutputStream;
import java.io.IOException;
import java.io.PrintStream;
import java.io.PrintWriter;
import java.io.StringWriter;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.TimeUnit;
import java.util.stream.Stream;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.TestInstance;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.io.TempDir;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.MethodSource;
import org.sss.client.cluster.LocalProcessCluster;
import org.sss.client.cluster.SssCluster;
import org.sss.core.cluster.ClusterSpec;
import org.sss.core.cluster.NodeAddress;
import picocli.CommandLine;

/**
 * The {@code sss} command line, run in-process against a running cluster through its cluster
 * file, as a user would run it: exit status, standard output, standard error.
 */
@TestInstance(TestInstance.Lifecycle.PER_CLASS)
@Timeout(value = 60, unit = TimeUnit.SECONDS)
class CommandLineTest {
  @TempDir
  static Path work;

  SssCluster cluster;
  String clusterFile;

  @BeforeAll
  void start() throws IOException {
    cluster = SssCluster.embedded(3);
    Path file = work.resolve("cluster.properties");
    cluster.spec().save(file);
    clusterFile = file.toString();
  }

  @AfterAll
  void stop() {
    if (cluster != null) {
      cluster.close();
    }
  }

  /** What one command did. {@code err} holds both picocli's error writer and System.err. */
  record Run(int status, String out, String err) {
    List<String> errLines() {
      return err.lines().toList();
    }

    @Override
    public String toString() {
      return "status " + status + "\n--- stdout\n" + out + "--- stderr\n" + err;
    }
  }

  static synchronized Run sss(String... args) {
    StringWriter out = new StringWriter();
    StringWriter err = new StringWriter();
    ByteArrayOutputStream sysOut = new ByteArrayOutputStream();
    ByteArrayOutputStream sysErr = new ByteArrayOutputStream();
    PrintStream savedOut = System.out;
    PrintStream savedErr = System.err;
    int status;
    System.setOut(new PrintStream(sysOut, true, StandardCharsets.UTF_8));
    System.setErr(new PrintStream(sysErr, true, StandardCharsets.UTF_8));
    try {
      // Built after System.out is redirected: picocli's default execution strategy remembers
      // the System.out of its construction and, when that differs from the current one at
      // execute(), replaces the writer given to setOut with it.
      CommandLine cl = SssCommand.commandLine(args); // as main builds it: the named command only
      cl.setOut(new PrintWriter(out, true));
      cl.setErr(new PrintWriter(err, true));
      status = cl.execute(args);
    } finally {
      System.out.flush();
      System.err.flush();
      System.setOut(savedOut);
      System.setErr(savedErr);
    }
    return new Run(status, out + sysOut.toString(StandardCharsets.UTF_8),
        err + sysErr.toString(StandardCharsets.UTF_8));
  }

  /** Runs {@code sss --cluster FILE args...}. */
  Run onCluster(String... args) {
    List<String> all = new ArrayList<>(List.of("--cluster", clusterFile));
    all.addAll(List.of(args));
    return sss(all.toArray(String[]::new));
  }

  Run ok(String... args) {
    Run r = onCluster(args);
    assertEquals(0, r.status(), () -> String.join(" ", args) + " failed: " + r);
    return r;
  }

  /** Every command path: "", "table", "table create", ... */
  static Stream<String> commandPaths() {
    List<String> out = new ArrayList<>();
    collect(SssCommand.commandLine(), "", out);
    return out.stream();
  }

  private static void collect(CommandLine cl, String path, List<String> out) {
    out.add(path);
    cl.getSubcommands().forEach((name, sub) -> {
      if (!name.equals("help")) {
        collect(sub, (path + " " + name).trim(), out);
      }
    });
  }

  @ParameterizedTest(name = "sss {0} --help")
  @MethodSource("commandPaths")
  void help_atEveryLevel_printsUsageAndReturnsZero(String path) {
    List<String> args = new ArrayList<>(path.isEmpty() ? List.of() : List.of(path.split(" ")));
    args.add("--help");
    Run r = sss(args.toArray(String[]::new));
    assertEquals(0, r.status(), r::toString);
    assertTrue(r.out().contains("Usage:"), r::toString);
    assertEquals("", r.err(), "nothing on stderr");
  }

  @Test
  void helpSubcommandAndVersion_returnZero() {
    Run help = sss("help");
    assertEquals(0, help.status(), help::toString);
    assertTrue(help.out().contains("Usage:"));
    Run helpTable = sss("help", "table");
    assertEquals(0, helpTable.status());
    assertTrue(helpTable.out().contains("create"), helpTable::toString);
    Run version = sss("--version");
    assertEquals(0, version.status());
    assertTrue(version.out().contains("sss "), version::toString);
  }

  @Test
  void unknownSubcommandOrMissingArguments_returnTwoWithAUsageHint() {
    for (String[] args : List.of(new String[] {"frobnicate"}, new String[] {"table", "frobnicate"},
        new String[] {"--cluster", "x", "get"}, new String[] {"count", "a", "b"},
        new String[] {"table", "create"}, new String[] {"--no-such-option"}, new String[0])) {
      Run r = sss(args);
      assertEquals(2, r.status(), () -> String.join(" ", args) + ": " + r);
      assertEquals(1, r.errLines().size(), () -> "one line on stderr: " + r);
      assertTrue(r.err().contains("--help"), r::toString);
    }
  }

  @Test
  void tableCreateListStatsDrop_roundTrip() {
    assertEquals("created cli-words\n", ok("table", "create", "cli-words", "--key", "string", "--value", "long").out());
    Run again = onCluster("table", "create", "cli-words");
    assertEquals(1, again.status(), again::toString);
    assertEquals(1, again.errLines().size(), again::toString);
    assertTrue(again.err().contains("already exists"), again::toString);
    ok("table", "create", "cli-words", "--if-absent");
    ok("table", "create", "cli-zstd", "--key", "long", "--value", "bytes", "--compression", "zstd", "--no-wal");

    String list = ok("table", "list").out();
    assertTrue(list.contains("cli-words\tkey=string value=long compression=lz4 wal=on pairs~0"), list);
    assertTrue(list.contains("cli-zstd\tkey=long value=bytes compression=zstd wal=off"), list);
    assertTrue(list.indexOf("cli-words") < list.indexOf("cli-zstd"), "sorted");

    String stats = ok("table", "stats", "cli-zstd").out();
    assertTrue(stats.startsWith("cli-zstd\tkey=long value=bytes compression=zstd wal=off"), stats);

    Run badType = onCluster("table", "create", "cli-bad", "--key", "float");
    assertEquals(1, badType.status());
    assertEquals(1, badType.errLines().size(), badType::toString);
    assertTrue(badType.err().contains("unknown data type"), badType::toString);

    assertEquals("dropped cli-zstd\n", ok("table", "drop", "cli-zstd").out());
    assertFalse(ok("table", "list").out().contains("cli-zstd"));
    ok("table", "drop", "cli-zstd", "--if-exists");
    ok("table", "drop", "cli-words");
  }

  @Test
  void putGetScanCount_typedByTheTable() {
    ok("table", "create", "fruit", "--key", "string", "--value", "long");
    for (String[] kv : List.of(new String[] {"banana", "2"}, new String[] {"apple", "3"},
        new String[] {"apricot", "-7"}, new String[] {"cherry", "9223372036854775807"},
        new String[] {"äpfel", "1"})) {
      ok("put", "fruit", kv[0], kv[1]);
    }
    assertEquals("3\n", ok("get", "fruit", "apple").out());
    assertEquals("-7\n", ok("get", "fruit", "apricot").out());
    assertEquals("5\n", ok("count", "fruit").out());

    assertEquals("apple\t3\napricot\t-7\nbanana\t2\ncherry\t9223372036854775807\näpfel\t1\n",
        ok("scan", "fruit").out());
    assertEquals("apple\t3\napricot\t-7\n", ok("scan", "fruit", "--prefix", "ap").out());
    assertEquals("apple\t3\n", ok("scan", "fruit", "--prefix", "apple").out());
    assertEquals("apple\t3\napricot\t-7\n", ok("scan", "fruit", "--limit", "2").out());
    assertEquals("", ok("scan", "fruit", "--prefix", "zzz").out());

    // the option may also follow the subcommand
    Run after = sss("count", "fruit", "--cluster", clusterFile);
    assertEquals(0, after.status(), after::toString);
    assertEquals("5\n", after.out());

    Run absent = onCluster("get", "fruit", "durian");
    assertEquals(1, absent.status());
    assertEquals(List.of("sss get: no key 'durian' in table 'fruit'"), absent.errLines());
    assertEquals("", absent.out());

    Run notALong = onCluster("put", "fruit", "fig", "many");
    assertEquals(1, notALong.status());
    assertEquals(1, notALong.errLines().size(), notALong::toString);
    assertTrue(notALong.err().contains("not a long"), notALong::toString);
    assertEquals("5\n", ok("count", "fruit").out());
    ok("table", "drop", "fruit");
  }

  /**
   * --prefix matches the escaped encoding of string and bytes keys; a double (or opaque) key is
   * not that encoding, so a prefix there silently matched nothing (or the wrong keys).
   */
  @Test
  void scanPrefix_onDoubleKeys_isRefused() {
    ok("table", "create", "temps", "--key", "double", "--value", "double");
    ok("put", "temps", "1.5", "2.5");
    Run prefixed = onCluster("scan", "temps", "--prefix", "1");
    assertEquals(1, prefixed.status(), prefixed::toString);
    assertTrue(prefixed.err().contains("--prefix needs string or bytes keys; this table has double keys"),
        prefixed::toString);
    assertEquals("1.5\t2.5\n", ok("scan", "temps").out());
    ok("table", "drop", "temps");
  }

  @Test
  void loadAndDump_textFileAndDirectory() throws IOException {
    Path text = work.resolve("poem.txt");
    Files.writeString(text, "the first line\n\ttabbed\n\nünïcödé\nlast line without newline");
    Run load = ok("load", "poem", text.toString());
    assertEquals("", load.out());
    assertTrue(load.err().contains("load poem: 5 pairs"), load::toString);
    assertEquals("5\n", ok("count", "poem").out());
    assertEquals("ünïcödé\n", ok("get", "poem", "24").out()); // keys: where each line starts
    Path dump = work.resolve("out/poem.dump");
    ok("dump", "poem", dump.toString());
    assertEquals("0\tthe first line\n15\t\ttabbed\n23\t\n24\tünïcödé\n36\tlast line without newline\n",
        Files.readString(dump));
    // into a directory: part files written by the nodes, the same lines between them
    Path parts = work.resolve("out/poem-parts");
    ok("dump", "poem", parts + "/");
    List<String> lines = new ArrayList<>();
    try (var files = Files.list(parts)) {
      for (Path p : files.sorted().toList()) {
        if (p.getFileName().toString().startsWith("part-m-")) {
          lines.addAll(Files.readAllLines(p));
        } else {
          assertEquals("_SUCCESS", p.getFileName().toString());
        }
      }
    }
    lines.sort(null);
    List<String> expected = new ArrayList<>(Files.readAllLines(dump));
    expected.sort(null);
    assertEquals(expected, lines);
    assertTrue(onCluster("dump", "poem", parts.toString()).err().contains("already holds"), "a second dump is refused");
    ok("dump", "poem", parts.toString(), "--overwrite");
    // loading into an existing table: refused unless the user says how
    Path shorter = work.resolve("short.txt");
    Files.writeString(shorter, "one\ntwo\n");
    Run again = onCluster("load", "poem", shorter.toString());
    assertEquals(1, again.status(), again::toString);
    assertEquals(1, again.errLines().size(), again::toString);
    assertTrue(again.err().contains("table 'poem' exists (about "), again::toString);
    assertTrue(again.err().contains("nothing was loaded: --append adds to it"), again::toString);
    assertEquals("5\n", ok("count", "poem").out());
    ok("load", "poem", shorter.toString(), "--append");
    assertEquals("6\n", ok("count", "poem").out(), "the line at 0 replaced, one at 4 added, the others kept");
    assertEquals("one\n", ok("get", "poem", "0").out());
    assertEquals("two\n", ok("get", "poem", "4").out());
    assertEquals("ünïcödé\n", ok("get", "poem", "24").out());
    assertTrue(ok("table", "stats", "poem").out().contains("compression=lz4"), "a loaded table's default");
    assertEquals("poem: " + cluster.spec().partitionMap().partitions() + " partitions of one copy each: nothing to"
        + " compare\n", ok("table", "verify", "poem", "--repair").out(), "one copy: no copy is read, none repaired");
    Run keeps = onCluster("load", "poem", shorter.toString(), "--append", "--compression", "none");
    assertEquals(1, keeps.status(), keeps::toString);
    assertTrue(keeps.err().contains("table 'poem' exists and keeps its compression (lz4); nothing was loaded"),
        keeps::toString);
    assertEquals("6\n", ok("count", "poem").out());
    ok("load", "poem", shorter.toString(), "--replace", "--compression", "none");
    assertEquals("2\n", ok("count", "poem").out(), "the old table replaced");
    assertTrue(ok("table", "stats", "poem").out().contains("compression=none"), "replaced as the load said");
    Run unknown = onCluster("load", "other", shorter.toString(), "--compression", "snappy");
    assertNotEquals(0, unknown.status(), unknown::toString);
    assertTrue(unknown.err().contains("unknown compression 'snappy'"), unknown::toString);
    Run both = onCluster("load", "poem", shorter.toString(), "--append", "--replace");
    assertEquals(2, both.status(), both::toString);

    Path dir = work.resolve("tree");
    Files.createDirectories(dir.resolve("sub"));
    Files.writeString(dir.resolve("a.txt"), "alpha");
    Files.writeString(dir.resolve("sub/b.txt"), "beta\n");
    Files.write(dir.resolve("bin"), new byte[] {0, (byte) 0xFF, 1});
    Files.writeString(dir.resolve("_SUCCESS"), "");
    // lines: the files' text end to end in path order (a.txt, bin, sub/b.txt; _SUCCESS left out)
    ok("load", "lines", dir.toString());
    assertEquals("3\n", ok("count", "lines").out(), "a line each, none running on into the next file");
    assertEquals("alpha\n", ok("get", "lines", "0").out());
    assertEquals("beta\n", ok("get", "lines", "8").out(), "after a.txt's 5 bytes and bin's 3");
    ok("load", "lines", dir.toString(), "--replace"); // the nodes read the files: a replace is whole
    assertEquals("3\n", ok("count", "lines").out());
    ok("table", "drop", "lines");
    // whole files: a pair each
    Run wholeReplace = onCluster("load", "tree", dir.toString(), "--whole-files", "--replace");
    assertEquals(1, wholeReplace.status(), wholeReplace::toString);
    assertTrue(wholeReplace.err().contains("--replace and --value do not apply"), wholeReplace::toString);
    ok("load", "tree", dir.toString(), "--whole-files", "--compression", "zstd");
    assertEquals("3\n", ok("count", "tree").out(), "_SUCCESS left out, as by a load of the lines");
    assertTrue(ok("table", "stats", "tree").out().contains("compression=zstd"), "a directory's table as said");
    assertEquals("alpha\n", ok("get", "tree", "a.txt").out());
    assertEquals("a.txt\talpha\nbin\t0x00ff01\nsub/b.txt\tbeta\n\n", ok("scan", "tree").out());
    assertEquals("sub/b.txt\tbeta\n\n", ok("scan", "tree", "--prefix", "sub/").out());

    Run missing = onCluster("load", "nothing", work.resolve("no-such-file").toString());
    assertEquals(1, missing.status());
    assertEquals(1, missing.errLines().size(), missing::toString);
    assertTrue(missing.err().contains("no such file"), missing::toString);

    ok("table", "drop", "poem");
    ok("table", "drop", "tree");
  }

  @Test
  void unknownTable_everyCommandPrintsOneLineOnStderrAndFails() {
    Path out = work.resolve("never.dump");
    for (String[] args : List.of(new String[] {"count", "nosuch"}, new String[] {"get", "nosuch", "k"},
        new String[] {"put", "nosuch", "k", "v"}, new String[] {"scan", "nosuch"},
        new String[] {"dump", "nosuch", out.toString()}, new String[] {"table", "stats", "nosuch"},
        new String[] {"table", "drop", "nosuch"})) {
      Run r = onCluster(args);
      assertNotEquals(0, r.status(), () -> String.join(" ", args) + ": " + r);
      assertEquals(1, r.errLines().size(), () -> String.join(" ", args) + ": one line on stderr: " + r);
      assertTrue(r.err().contains("nosuch"), () -> "names the table: " + r);
      assertEquals("", r.out(), () -> "nothing on stdout: " + r);
    }
    assertFalse(Files.exists(out), "no dump file for a missing table");
  }

  @Test
  void withoutClusterFile_dataCommandsRefuse_forTheirDataWouldEndWithTheCommand() throws IOException {
    Path text = work.resolve("lost.txt");
    Files.writeString(text, "a line\n");
    for (String[] args : List.of(new String[] {"load", "lost", text.toString()}, new String[] {"put", "t", "1", "v"},
        new String[] {"get", "t", "1"}, new String[] {"count", "t"}, new String[] {"scan", "t"},
        new String[] {"dump", "t", work.resolve("t.dump").toString()}, new String[] {"table", "list"},
        new String[] {"table", "create", "t"})) {
      Run r = sss(args);
      assertEquals(1, r.status(), () -> String.join(" ", args) + ": " + r);
      List<String> said = r.errLines();
      assertEquals(1, said.size(), () -> String.join(" ", args) + ": one line: " + r);
      assertTrue(said.get(0).contains(args[0] + " needs a running cluster (--cluster FILE)")
          && said.get(0).contains("bin/sss cluster start"), r::toString);
    }
    Run ping = sss("--nodes", "1", "ping");
    assertEquals(0, ping.status(), () -> "ping still checks an embedded cluster: " + ping);
  }

  @Test
  void clusterStartAndStop_localProcesses_servesCommandsInBetween() throws IOException {
    Path dir = work.resolve("local-cluster");
    try {
      Run start = sss("cluster", "start", "--dir", dir.toString(), "--nodes", "2", "--partitions", "6",
          "--heap", "128m");
      assertEquals(0, start.status(), start::toString);
      assertTrue(start.out().contains("node 0  127.0.0.1:"), start::toString);
      assertTrue(start.out().contains("node 1  127.0.0.1:"), start::toString);
      String file = dir.resolve("cluster.properties").toString();
      assertTrue(start.out().contains("cluster file: " + file), start::toString);

      Run again = sss("cluster", "start", "--dir", dir.toString());
      assertEquals(0, again.status(), () -> "starting a running cluster is a no-op: " + again);

      assertEquals(0, sss("--cluster", file, "table", "create", "t", "--key", "long").status());
      assertEquals(0, sss("--cluster", file, "put", "t", "42", "answer").status());
      Run get = sss("--cluster", file, "get", "t", "42");
      assertEquals("answer\n", get.out(), get::toString);

      Run stop = sss("cluster", "stop", "--dir", dir.toString());
      assertEquals(0, stop.status(), stop::toString);
      assertEquals(List.of("node 0: stopped, 1 table(s) flushed", "node 1: stopped, 1 table(s) flushed", "stopped"),
          stop.out().lines().toList(), "each node flushed its table 't' and exited");
      Run down = sss("--cluster", file, "count", "t");
      assertEquals(1, down.status(), () -> "a stopped cluster cannot answer: " + down);
      assertEquals(1, down.errLines().size(), down::toString);
    } finally {
      if (Files.exists(dir.resolve("cluster.properties"))) {
        LocalProcessCluster.attach(dir).stopAll();
      }
    }
  }

  @Test
  void clusterFile_whereItMeansNothing_isNeitherListedNorTaken() {
    for (String path : List.of("server", "cluster start", "cluster stop")) {
      List<String> help = new ArrayList<>(List.of(path.split(" ")));
      help.add("--help");
      Run r = sss(help.toArray(String[]::new));
      assertFalse(r.out().contains("--cluster"), "sss " + path + " --help lists --cluster: " + r);
    }
    assertTrue(sss("count", "--help").out().contains("--cluster"), "data commands keep it");
    Run after = sss("cluster", "stop", "--cluster", clusterFile, "--dir", work.toString());
    assertEquals(2, after.status(), after::toString);
    assertTrue(after.err().contains("Unknown option"), after::toString);
    Run before = sss("--cluster", clusterFile, "server", "--config", "none.properties");
    assertEquals(2, before.status(), before::toString);
    assertTrue(before.err().startsWith("sss server: --cluster means nothing to server"), before::toString);
  }

  @Test
  void nodes_farBeyondTheMachine_refusedInOneLineBeforeAnythingStarts() throws Exception {
    // in a JVM of its own with a temporary directory of its own: other tests' embedded clusters
    // (another test JVM may run beside this one) make directories in the shared one meanwhile
    Path tmp = Files.createDirectories(work.resolve("tmp-of-refused"));
    String java = Path.of(System.getProperty("java.home"), "bin", "java").toString();
    Path errFile = work.resolve("refused.err");
    Process p = new ProcessBuilder(java, "-Xmx256m", "-Djava.io.tmpdir=" + tmp, "-cp",
        System.getProperty("java.class.path"), SssCommand.class.getName(), "--nodes", "1000000", "ping")
        .redirectOutput(ProcessBuilder.Redirect.DISCARD).redirectError(errFile.toFile()).start();
    boolean ended = p.waitFor(60, TimeUnit.SECONDS);
    p.destroyForcibly();
    String err = Files.readString(errFile, StandardCharsets.UTF_8);
    assertTrue(ended, "the refused command ends: " + err);
    assertEquals(1, p.exitValue(), err);
    assertEquals(1, err.lines().count(), err);
    assertTrue(err.contains("open files") && err.contains("nodes fit"), err);
    try (Stream<Path> s = Files.list(tmp)) {
      assertEquals(List.of(), s.filter(f -> f.getFileName().toString().startsWith("sss-embedded-")).toList(),
          "a refused embedded cluster left a directory behind");
    }
    Path dir = work.resolve("too-many");
    Run processes = sss("cluster", "start", "--nodes", "100000", "--heap", "64m", "--dir", dir.toString());
    assertEquals(1, processes.status(), processes::toString);
    assertEquals(1, processes.errLines().size(), processes::toString);
    assertTrue(processes.err().contains("of memory") && processes.err().contains("servers fit"), processes::toString);
    assertFalse(Files.exists(dir), "the refused start made its directory");
  }

  @Test
  void embeddedCluster_oneNodeByDefault_moreWithNodes() {
    Run alone = sss("ping");
    assertEquals(0, alone.status(), alone::toString);
    assertEquals(1, alone.out().lines().filter(l -> l.contains(" ok (")).count(), alone::toString);
    Run three = sss("--nodes", "3", "ping");
    assertEquals(0, three.status(), three::toString);
    assertEquals(3, three.out().lines().filter(l -> l.contains(" ok (")).count(), three::toString);
  }

  @Test
  void ping_everyNodeOrOne_printsOneOkLineEach() {
    Run all = ok("ping");
    List<String> lines = all.out().lines().toList();
    assertEquals(3, lines.size(), all::toString);
    for (int n = 0; n < 3; n++) {
      String prefix = cluster.spec().node(n) + " ok (";
      assertTrue(lines.get(n).startsWith(prefix) && lines.get(n).endsWith(" ms)"), lines.get(n));
    }
    Run one = ok("ping", "--node", "1");
    assertEquals(1, one.out().lines().count(), one::toString);
    assertTrue(one.out().startsWith(cluster.spec().node(1) + " ok ("), one::toString);
  }

  @Test
  void ping_wrongSecret_orANodeThatDoesNotListen_failsWithOneLineNamingTheNode() throws IOException {
    ClusterSpec spec = cluster.spec();
    Path wrongSecret = work.resolve("wrong-secret.properties");
    new ClusterSpec(spec.nodes(), spec.partitionMap(), "not-the-secret", false).save(wrongSecret);
    Run refused = sss("--cluster", wrongSecret.toString(), "ping");
    assertEquals(1, refused.status(), refused::toString);
    // the embedded nodes log to the same stderr: the command's own lines are those it prefixes
    List<String> said = refused.errLines().stream().filter(l -> l.startsWith("sss ")).toList();
    assertEquals(1, said.size(), refused::toString);
    assertTrue(said.get(0).startsWith("sss ping: " + spec.node(0)), refused::toString);
    assertTrue(said.get(0).contains("wrong cluster secret"), refused::toString);
    assertEquals("", refused.out(), "no node is reported ok");

    // node 2 moved to a port that is bound (so no one else takes it) but does not listen
    try (java.net.Socket holder = new java.net.Socket()) {
      holder.bind(new java.net.InetSocketAddress("127.0.0.1", 0));
      List<NodeAddress> nodes = new ArrayList<>(spec.nodes());
      nodes.set(2, new NodeAddress(2, "127.0.0.1", holder.getLocalPort()));
      Path oneDown = work.resolve("one-down.properties");
      new ClusterSpec(nodes, spec.partitionMap(), spec.secret(), false).save(oneDown);
      // node 1 too: every node is tried, the ones that answer are reported, the others named on one line
      Run two;
      try (java.net.Socket holder1 = new java.net.Socket()) {
        holder1.bind(new java.net.InetSocketAddress("127.0.0.1", 0));
        nodes.set(1, new NodeAddress(1, "127.0.0.1", holder1.getLocalPort()));
        Path twoDown = work.resolve("two-down.properties");
        new ClusterSpec(nodes, spec.partitionMap(), spec.secret(), false).save(twoDown);
        two = sss("--cluster", twoDown.toString(), "ping");
      }
      assertEquals(1, two.status(), two::toString);
      assertEquals(List.of(spec.node(0).toString()), two.out().lines().map(l -> l.substring(0, l.indexOf(" ok ("))).toList(),
          () -> "out=" + two.out() + " err=" + two.err());
      List<String> twoSaid = two.errLines().stream().filter(l -> l.startsWith("sss ")).toList();
      assertEquals(1, twoSaid.size(), two::toString);
      assertTrue(twoSaid.get(0).contains("node 1 (") && twoSaid.get(0).contains("; and 1 more: ")
          && twoSaid.get(0).contains("node 2 ("), two::toString);
      nodes.set(1, spec.node(1));

      Run down = sss("--cluster", oneDown.toString(), "ping");
      assertEquals(1, down.status(), down::toString);
      assertEquals(2, down.out().lines().count(), "nodes 0 and 1 answer before node 2 fails: " + down);
      List<String> downSaid = down.errLines().stream().filter(l -> l.startsWith("sss ")).toList();
      assertEquals(1, downSaid.size(), down::toString);
      assertTrue(downSaid.get(0).startsWith("sss ping: cannot connect to node 2 (127.0.0.1:"
          + holder.getLocalPort() + ")"), down::toString);
      Run others = sss("--cluster", oneDown.toString(), "ping", "--node", "1");
      assertEquals(0, others.status(), others::toString);
    }
  }

  @Test
  void missingOrBrokenClusterFile_failsWithOneLine() throws IOException {
    Run missing = sss("--cluster", work.resolve("nope.properties").toString(), "count", "t");
    assertEquals(1, missing.status());
    assertEquals(1, missing.errLines().size(), missing::toString);

    Path broken = work.resolve("broken.properties");
    Files.writeString(broken, "node.0=localhost:notaport\n");
    Run bad = sss("--cluster", broken.toString(), "table", "list");
    assertEquals(1, bad.status());
    assertEquals(1, bad.errLines().size(), bad::toString);
    assertTrue(bad.err().contains("bad port"), bad::toString);
  }
}
