package org.sss.client.cluster;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.io.BufferedReader;
import java.io.InputStreamReader;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import java.util.concurrent.TimeUnit;
import java.util.stream.Stream;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;
import org.sss.client.SssClient;
import org.sss.client.io.BulkIO;

/** An embedded cluster's data goes with its process, also when the process is interrupted. */
class EmbeddedExitTest {
  @TempDir
  Path tmp;

  /** Starts an embedded cluster, writes a table, says READY and waits to be stopped. */
  public static void main(String[] args) throws Exception {
    SssCluster cluster = SssCluster.embedded(2);
    SssClient client = cluster.client();
    client.createTable("t", BulkIO.textTable(), false);
    System.out.println("READY");
    System.out.flush();
    Thread.sleep(120_000);
  }

  @Test
  void interruptedProcess_leavesNoEmbeddedDataBehind() throws Exception {
    String java = Path.of(System.getProperty("java.home"), "bin", "java").toString();
    Process p = new ProcessBuilder(java, "-Xmx256m", "-Djava.io.tmpdir=" + tmp, "-cp",
        System.getProperty("java.class.path"), EmbeddedExitTest.class.getName())
        .redirectErrorStream(true).start();
    try (BufferedReader out = new BufferedReader(new InputStreamReader(p.getInputStream(), StandardCharsets.UTF_8))) {
      String line;
      do {
        line = out.readLine();
      } while (line != null && !line.equals("READY"));
      assertEquals("READY", line, "the child process started its cluster");
      assertEquals(1, embeddedDirs().size(), "the running cluster has its directory");
      p.destroy(); // SIGTERM, as Ctrl-C's SIGINT: shutdown hooks run
      assertTrue(p.waitFor(60, TimeUnit.SECONDS));
    } finally {
      p.destroyForcibly();
    }
    assertEquals(List.of(), embeddedDirs(), "the interrupted process removed its embedded cluster's data");
  }

  private List<Path> embeddedDirs() throws Exception {
    try (Stream<Path> s = Files.list(tmp)) {
      return s.filter(d -> d.getFileName().toString().startsWith("sss-embedded-")).toList();
    }
  }
}
