package org.sss.launcher;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.io.File;
import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardCopyOption;
import java.nio.file.attribute.PosixFilePermissions;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;
import java.util.jar.JarEntry;
import java.util.jar.JarOutputStream;
import java.util.stream.Stream;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.io.TempDir;

/**
 * The real {@code bin/sss} script, run as a user runs it, on a copy of the distribution it
 * expects ({@code SSS_HOME/benchmarks/target/benchmarks-*.jar} and {@code .../target/lib/*.jar})
 * made from this test's own class path: the project's modules as jars, every dependency by its
 * file name. Nothing is built by Maven here: the script's first-use build runs a stand-in
 * {@code mvn} on the PATH, which records how it was called and puts the distribution in place.
 */
@Timeout(value = 180, unit = TimeUnit.SECONDS)
class LauncherScriptTest {
  static final Path SCRIPT = Path.of("..", "bin", "sss").toAbsolutePath().normalize();

  /** SSS_HOME with the script and a distribution. */
  @TempDir
  static Path home;
  /** A directory for the stand-in mvn. */
  @TempDir
  static Path tools;

  @TempDir
  Path dir;

  @BeforeAll
  static void distribution() throws IOException {
    copyScript(home);
    Path target = Files.createDirectories(home.resolve("benchmarks/target"));
    Path lib = Files.createDirectories(target.resolve("lib"));
    for (String entry : System.getProperty("java.class.path").split(File.pathSeparator)) {
      Path p = Path.of(entry);
      String name = p.getFileName().toString();
      if (Files.isDirectory(p) && name.equals("classes") && p.getParent().getFileName().toString().equals("target")) {
        String module = p.getParent().getParent().getFileName().toString();
        Path jar = module.equals("benchmarks") ? target.resolve("benchmarks-0.1.0-SNAPSHOT.jar")
            : lib.resolve(module + "-0.1.0-SNAPSHOT.jar");
        jarOf(p, jar);
      } else if (name.endsWith(".jar") && !testOnly(name)) {
        Files.createSymbolicLink(lib.resolve(name), p.toAbsolutePath());
      }
    }
    assertTrue(Files.exists(target.resolve("benchmarks-0.1.0-SNAPSHOT.jar")), "the benchmarks module's classes");
    for (String module : List.of("sss-core", "sss-kvs", "sss-server", "sss-client")) {
      assertTrue(Files.exists(lib.resolve(module + "-0.1.0-SNAPSHOT.jar")), module);
    }
  }

  static boolean testOnly(String jar) {
    return Stream.of("junit-", "opentest4j-", "apiguardian-", "surefire-", "common-java5-", "common-junit")
        .anyMatch(jar::startsWith);
  }

  static void copyScript(Path sssHome) throws IOException {
    Path bin = Files.createDirectories(sssHome.resolve("bin"));
    Files.copy(SCRIPT, bin.resolve("sss"), StandardCopyOption.REPLACE_EXISTING);
    Files.setPosixFilePermissions(bin.resolve("sss"), PosixFilePermissions.fromString("rwxr-xr-x"));
  }

  static void jarOf(Path classes, Path jar) throws IOException {
    try (JarOutputStream out = new JarOutputStream(Files.newOutputStream(jar));
         Stream<Path> files = Files.walk(classes)) {
      for (Path f : (Iterable<Path>) files.filter(Files::isRegularFile).sorted()::iterator) {
        out.putNextEntry(new JarEntry(classes.relativize(f).toString().replace(File.separatorChar, '/')));
        Files.copy(f, out);
        out.closeEntry();
      }
    }
  }

  /** What one run of the script did. */
  record Run(int status, String out, String err) {
    @Override
    public String toString() {
      return "status " + status + "\n--- stdout\n" + out + "--- stderr\n" + err;
    }
  }

  /** Runs {@code sssHome/bin/sss args...} with a PATH whose mvn is {@code mvn} (a script body). */
  static Run script(Path sssHome, Map<String, String> env, String... args) throws Exception {
    List<String> cmd = new ArrayList<>(List.of(sssHome.resolve("bin/sss").toString()));
    cmd.addAll(List.of(args));
    ProcessBuilder pb = new ProcessBuilder(cmd).directory(sssHome.toFile());
    pb.environment().put("JAVA_HOME", System.getProperty("java.home"));
    pb.environment().put("SSS_JAVA_OPTS", "-Xmx256m");
    pb.environment().put("PATH", tools + File.pathSeparator + System.getenv("PATH"));
    pb.environment().remove("SSS_REBUILD");
    pb.environment().put("SSS_CDS", "0"); // the class-data archive has a test of its own
    pb.environment().remove("ROCKSDB_MUSL_LIBC");
    pb.environment().putAll(env);
    Process p = pb.start();
    CompletableFuture<byte[]> err = CompletableFuture.supplyAsync(() -> {
      try {
        return p.getErrorStream().readAllBytes();
      } catch (IOException e) {
        throw new java.io.UncheckedIOException(e);
      }
    });
    String out = new String(p.getInputStream().readAllBytes(), StandardCharsets.UTF_8);
    assertTrue(p.waitFor(150, TimeUnit.SECONDS), "bin/sss " + String.join(" ", args) + " did not end");
    return new Run(p.exitValue(), out, new String(err.get(), StandardCharsets.UTF_8));
  }

  /** A stand-in mvn: records "$PWD|$*" in {@code calls}, then runs {@code then}. */
  static void standInMaven(Path calls, String then) throws IOException {
    Path mvn = tools.resolve("mvn");
    Files.writeString(mvn, "#!/usr/bin/env bash\necho \"$PWD|$*\" >> '" + calls + "'\n" + then + "\n");
    Files.setPosixFilePermissions(mvn, PosixFilePermissions.fromString("rwxr-xr-x"));
  }

  @Test
  void help_andVersion_runTheCommandLine_withoutBuilding() throws Exception {
    Path calls = dir.resolve("mvn-calls");
    standInMaven(calls, "exit 99");
    Run help = script(home, Map.of(), "--help");
    assertEquals(0, help.status(), help::toString);
    assertTrue(help.out().startsWith("Usage: sss "), help::toString);
    for (String command : List.of("cluster", "server", "ping", "run", "example", "bench", "bench-engine")) {
      assertTrue(help.out().lines().anyMatch(l -> l.strip().startsWith(command + " ")), command + " in " + help);
    }
    Run version = script(home, Map.of(), "--version");
    assertEquals(0, version.status(), version::toString);
    assertEquals("sss 0.1.0\n", version.out());
    assertFalse(help.err().contains("building the jars") || version.err().contains("building the jars"));
    assertFalse(Files.exists(calls), "the jars are there: no build");

    Run usage = script(home, Map.of(), "no-such-command");
    assertEquals(2, usage.status(), usage::toString);
    assertTrue(usage.err().contains("(see sss --help)"), usage::toString);
  }

  @Test
  void firstUse_buildsWithMaven_inSssHome_thenRunsWhatWasBuilt() throws Exception {
    Path fresh = dir.resolve("fresh");
    copyScript(fresh);
    Path calls = dir.resolve("mvn-calls");
    // the stand-in "build" puts the distribution in place, as mvn package would
    standInMaven(calls, "mkdir -p benchmarks && cp -R '" + home.resolve("benchmarks/target") + "' benchmarks/");

    Run first = script(fresh, Map.of(), "--version");
    assertEquals(0, first.status(), first::toString);
    assertEquals("sss 0.1.0\n", first.out());
    assertTrue(first.err().contains("sss: building the jars (first use)..."), first::toString);
    assertEquals(List.of(fresh.toRealPath() + "|-q -B -DskipTests package"), Files.readAllLines(calls));

    Run second = script(fresh, Map.of(), "--version");
    assertEquals(0, second.status(), second::toString);
    assertFalse(second.err().contains("building"), second::toString);
    assertEquals(1, Files.readAllLines(calls).size(), "built once");

    Run rebuild = script(fresh, Map.of("SSS_REBUILD", "1"), "--version");
    assertEquals(0, rebuild.status(), rebuild::toString);
    assertEquals(2, Files.readAllLines(calls).size(), "SSS_REBUILD=1 builds again");
  }

  @Test
  void failedBuild_stopsTheScript() throws Exception {
    Path fresh = dir.resolve("broken");
    copyScript(fresh);
    standInMaven(dir.resolve("mvn-calls"), "echo 'BUILD FAILURE' >&2; exit 1");
    Run r = script(fresh, Map.of(), "--version");
    assertEquals(1, r.status(), r::toString);
    assertEquals("", r.out(), "nothing ran");
    assertTrue(r.err().contains("BUILD FAILURE"), r::toString);
  }

  @Test
  void clusterStart_ping_stop_serversRunOnTheServerJarsOnly() throws Exception {
    standInMaven(dir.resolve("mvn-calls"), "exit 99");
    Path cluster = dir.resolve("cluster");
    try {
      Run start = script(home, Map.of("XDG_CACHE_HOME", dir.resolve("cache").toString()), "cluster", "start",
          "--nodes", "2", "--dir", cluster.toString(), "--heap", "128m");
      assertEquals(0, start.status(), start::toString);
      String file = cluster.resolve("cluster.properties").toString();

      Run ping = script(home, Map.of(), "--cluster", file, "ping");
      assertEquals(0, ping.status(), ping::toString);
      assertEquals(2, ping.out().lines().filter(l -> l.contains(" ok (")).count(), ping::toString);

      // the servers' class path is the script's filtered one: the project's and the server's
      // libraries from the distribution, no Hadoop
      List<ProcessHandle> serverProcesses = ProcessHandle.allProcesses()
          .filter(p -> p.info().commandLine().orElse("").contains("org.sss.server.ServerMain")
              && p.info().commandLine().orElse("").contains(cluster.toString()))
          .toList();
      List<String> servers = serverProcesses.stream().map(p -> p.info().commandLine().orElse("")).toList();
      assertEquals(2, servers.size(), servers.toString());
      // RocksDB's library was taken out of its JAR once, into the user's cache, and the servers
      // map that file (not a copy inflated into a temporary file at their start)
      Path nativeDir = dir.resolve("cache/sss");
      for (ProcessHandle p : serverProcesses) {
        String maps = Files.readString(Path.of("/proc/" + p.pid() + "/maps"));
        assertTrue(maps.lines().anyMatch(l -> l.contains(nativeDir.toString()) && l.contains("librocksdbjni")),
            "server " + p.pid() + " maps RocksDB's library from " + nativeDir);
        // SSS_CDS=0 (this test's runs) holds for the servers too: no archive of their own
        assertFalse(maps.lines().anyMatch(l -> l.matches(".*/server-[0-9a-f]{16}\\.jsa$")),
            "server " + p.pid() + " maps no class-data archive of its own");
      }
      for (String c : servers) {
        assertTrue(c.contains(home.resolve("benchmarks/target/lib/sss-server-0.1.0-SNAPSHOT.jar").toString()), c);
        assertTrue(c.contains("rocksdbjni-"), c);
        assertFalse(c.contains("hadoop"), c);
      }

      Run stop = script(home, Map.of(), "cluster", "stop", "--dir", cluster.toString());
      assertEquals(0, stop.status(), stop::toString);
      assertTrue(stop.out().contains("stopped"), stop::toString);
      Run down = script(home, Map.of(), "--cluster", file, "ping");
      assertEquals(1, down.status(), down::toString);
    } finally {
      if (Files.exists(cluster.resolve("cluster.properties"))) {
        org.sss.client.cluster.LocalProcessCluster.attach(cluster).stopAll();
      }
    }
  }

  @Test
  void classDataArchive_madeOncePerBuild_thenMappedByEveryStart() throws Exception {
    Path fresh = dir.resolve("cds");
    copyScript(fresh);
    Path target = Files.createDirectories(fresh.resolve("benchmarks/target"));
    copyTree(home.resolve("benchmarks/target"), target);
    standInMaven(dir.resolve("mvn-calls"), "exit 99");
    Map<String, String> cds = Map.of("SSS_CDS", "1");

    Run first = script(fresh, cds, "--version");
    assertEquals(0, first.status(), first::toString);
    assertEquals("sss 0.1.0\n", first.out(), "the training run prints nothing on stdout");
    assertTrue(first.err().contains("making a class-data archive"), first::toString);
    List<Path> archives;
    try (Stream<Path> s = Files.list(target.resolve("cds"))) {
      archives = s.toList();
    }
    assertEquals(1, archives.size(), archives.toString());
    assertTrue(Files.size(archives.get(0)) > 1 << 20, "an archive of the command's classes: " + archives);

    // the next start maps it: the project's classes come from the archive, and it is not made again
    Path loaded = dir.resolve("class-load.log");
    Run second = script(fresh, Map.of("SSS_CDS", "1", "SSS_JAVA_OPTS", "-Xmx256m -Xlog:class+load=info:file=" + loaded),
        "--version");
    assertEquals(0, second.status(), second::toString);
    assertEquals("sss 0.1.0\n", second.out());
    assertFalse(second.err().contains("making a class-data archive"), second::toString);
    assertTrue(Files.readAllLines(loaded).stream()
        .anyMatch(l -> l.contains("org.sss.client.cli.SssCommand source: shared objects file")), "from the archive");

    // a rebuilt jar makes it stale: the next start makes it again
    Path clientJar = target.resolve("lib/sss-client-0.1.0-SNAPSHOT.jar");
    Files.setLastModifiedTime(clientJar, java.nio.file.attribute.FileTime.fromMillis(
        Files.getLastModifiedTime(archives.get(0)).toMillis() + 2_000));
    Run rebuilt = script(fresh, cds, "--version");
    assertEquals(0, rebuilt.status(), rebuilt::toString);
    assertTrue(rebuilt.err().contains("making a class-data archive"), rebuilt::toString);

    // an archive the JVM refuses (here: not an archive at all) costs the speed-up, nothing else
    Path archive = archives.get(0);
    Files.delete(archive); // read-only, as the JVM writes it
    Files.writeString(archive, "not a class-data archive ".repeat(1000));
    Run refused = script(fresh, cds, "--version");
    assertEquals(0, refused.status(), refused::toString);
    assertEquals("sss 0.1.0\n", refused.out(), "nothing on stdout from the refused archive");

    // a training run that fails (this JVM option forbids archives) leaves a mark, runs the
    // command all the same, and is not tried again until the next build
    Path failing = dir.resolve("failing");
    copyScript(failing);
    copyTree(home.resolve("benchmarks/target"), Files.createDirectories(failing.resolve("benchmarks/target")));
    Map<String, String> noSharing = Map.of("SSS_CDS", "1", "SSS_JAVA_OPTS", "-Xmx256m -Xshare:off");
    Run failed = script(failing, noSharing, "--version");
    assertEquals(0, failed.status(), failed::toString);
    assertEquals("sss 0.1.0\n", failed.out());
    assertTrue(failed.err().contains("no class-data archive"), failed::toString);
    Run after = script(failing, noSharing, "--version");
    assertEquals("sss 0.1.0\n", after.out(), after::toString);
    assertFalse(after.err().contains("making a class-data archive"), "not tried again: " + after);

    // SSS_CDS=0: no archive is made or mapped
    Path off = dir.resolve("off");
    copyScript(off);
    copyTree(home.resolve("benchmarks/target"), Files.createDirectories(off.resolve("benchmarks/target")));
    Run none = script(off, Map.of(), "--version");
    assertEquals("sss 0.1.0\n", none.out(), none::toString);
    assertFalse(Files.exists(off.resolve("benchmarks/target/cds")), "SSS_CDS=0 makes no archive");
  }

  /** Copies a directory tree, symbolic links as links (the dependencies are links to the local repository). */
  static void copyTree(Path from, Path to) throws IOException {
    try (Stream<Path> files = Files.walk(from)) {
      for (Path f : (Iterable<Path>) files.filter(f -> !from.relativize(f).startsWith("cds"))::iterator) {
        Path t = to.resolve(from.relativize(f).toString());
        if (Files.isSymbolicLink(f)) {
          Files.createSymbolicLink(t, Files.readSymbolicLink(f));
        } else if (Files.isDirectory(f)) {
          Files.createDirectories(t);
        } else {
          Files.copy(f, t, StandardCopyOption.COPY_ATTRIBUTES);
        }
      }
    }
  }

  /** Guards the copies above: the script under test is the repository's. */
  @Test
  void theScriptCopied_isTheRepositorysOwn() throws IOException {
    assertEquals(Files.readString(SCRIPT), Files.readString(home.resolve("bin/sss")));
    assertTrue(Files.isExecutable(SCRIPT), SCRIPT + " is executable in the repository");
  }
}
