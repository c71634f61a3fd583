package org.sss.client.cluster;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertSame;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.io.File;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import java.util.stream.Stream;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * The servers' class-data archive: made once per class path, mapped by the server processes a
 * start launches (read from the kernel's map of each process, not from what the launcher meant
 * to do), and a training that fails leaves servers starting without one and is not tried again.
 */
class ServerClassArchiveTest {
  @TempDir
  Path dir;

  private static final String JAVA = Path.of(System.getProperty("java.home"), "bin", "java").toString();

  @Test
  void wildcardEntries_becomeTheirJarsInNameOrder() throws Exception {
    Path lib = Files.createDirectories(dir.resolve("lib"));
    Files.write(lib.resolve("b.jar"), new byte[1]);
    Files.write(lib.resolve("a.jar"), new byte[1]);
    Files.write(lib.resolve("notes.txt"), new byte[1]);
    String cp = lib + File.separator + "*" + File.pathSeparator + dir.resolve("classes");
    assertEquals(List.of(lib.resolve("a.jar").toString(), lib.resolve("b.jar").toString(),
        dir.resolve("classes").toString()), ServerClassArchive.expand(cp));
  }

  @Test
  void processesOfAStart_mapTheArchive() throws Exception {
    // the build's tests keep archives in target/server-cds (the surefire configuration)
    assertTrue(System.getProperty(ServerClassArchive.DIR_PROPERTY) != null, "surefire sets the archive directory");
    LocalProcessCluster cluster = LocalProcessCluster.start(dir.resolve("c"), 2, 0, "256m");
    try {
      Path archive;
      try (Stream<Path> s = Files.list(Path.of(System.getProperty(ServerClassArchive.DIR_PROPERTY)))) {
        archive = s.filter(p -> p.getFileName().toString().matches("server-[0-9a-f]{16}\\.jsa")).findFirst().orElseThrow();
      }
      for (int i = 0; i < 2; i++) {
        long pid = cluster.pid(i).orElseThrow();
        String maps = Files.readString(Path.of("/proc/" + pid + "/maps"));
        assertTrue(maps.contains(archive.toString()), "node " + i + " maps " + archive);
      }
    } finally {
      cluster.stopAll();
    }
  }

  @Test
  void failedTraining_leavesServersWithoutAnArchive_andIsNotTriedAgain() throws Exception {
    String was = System.getProperty(ServerClassArchive.DIR_PROPERTY);
    Path archives = dir.resolve("archives");
    System.setProperty(ServerClassArchive.DIR_PROPERTY, archives.toString());
    try {
      String cp = System.getProperty("java.class.path");
      List<String> options = List.of("-XX:+NoSuchOptionAnywhere"); // the training JVM cannot start
      ServerClassArchive.Launch first = ServerClassArchive.forServers(JAVA, cp, options);
      assertEquals(new ServerClassArchive.Launch(List.of(), cp), first);
      List<Path> failed;
      try (Stream<Path> s = Files.list(archives)) {
        failed = s.filter(p -> p.toString().endsWith(".jsa.failed")).toList();
      }
      assertEquals(1, failed.size(), "its output kept");
      assertTrue(Files.readString(failed.get(0)).contains("NoSuchOptionAnywhere"), Files.readString(failed.get(0)));
      assertSame(first, ServerClassArchive.forServers(JAVA, cp, options), "decided once per class path");
      try (Stream<Path> s = Files.list(archives)) {
        assertFalse(s.anyMatch(p -> p.toString().endsWith(".jsa")), "no archive");
      }
    } finally {
      if (was == null) {
        System.clearProperty(ServerClassArchive.DIR_PROPERTY);
      } else {
        System.setProperty(ServerClassArchive.DIR_PROPERTY, was);
      }
    }
  }
}
