package org.sss.client.it;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import java.util.Random;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;
import org.sss.client.SssClient;
import org.sss.client.TableSpec;
import org.sss.client.TableStatus;
import org.sss.client.cli.SssCommand;
import org.sss.client.cluster.SssCluster;
import org.sss.client.io.BulkIO;
import org.sss.core.cluster.JobTables;

/**
 * A load the client sends into a new table (a directory: its files go as pairs from the client),
 * on a cluster keeping one copy, whose client process is killed midway leaves no table: not the
 * name asked for, nor the table it was filling, and the name is free again. The client is a JVM of its own, killed with SIGKILL; the nodes run
 * in this one.
 */
class LoadClientDeathTest {
  @TempDir
  Path work;

  @Test
  void clientKilledDuringALoadItSends_leavesNoTable_andTheNameIsFree() throws Exception {
    Path dir = Files.createDirectories(work.resolve("files"));
    int files = 1600;
    byte[] content = new byte[128 << 10];
    Random random = new Random(7);
    for (int i = 0; i < files; i++) {
      random.nextBytes(content);
      Files.write(dir.resolve("f" + i), content);
    }
    try (SssCluster cluster = SssCluster.embedded(3); SssClient client = cluster.client()) {
      Path clusterFile = work.resolve("cluster.properties");
      cluster.spec().save(clusterFile);
      String java = Path.of(System.getProperty("java.home"), "bin", "java").toString();
      Path err = work.resolve("load.err");
      Process load = new ProcessBuilder(java, "-Xmx512m", "-cp", System.getProperty("java.class.path"),
          SssCommand.class.getName(), "--cluster", clusterFile.toString(), "load", "t", dir.toString(),
          "--whole-files") // sent by the client, a file per pair
          .redirectOutput(ProcessBuilder.Redirect.DISCARD).redirectError(err.toFile()).start();
      try {
        long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(60);
        List<String> filling = List.of();
        while (filling.isEmpty() && System.nanoTime() < deadline && load.isAlive()) {
          filling = names(client);
          Thread.sleep(filling.isEmpty() ? 20 : 100); // once made, a moment of pairs sent into it
        }
        assertTrue(!filling.isEmpty() && load.isAlive(), "the load was caught filling its table: "
            + Files.readString(err, StandardCharsets.UTF_8));
        assertTrue(filling.stream().allMatch(JobTables::isJobTable),
            "while it fills, the table is not visible under its name: " + filling);
        load.destroyForcibly().waitFor(30, TimeUnit.SECONDS);
        assertTrue(load.exitValue() != 0, "killed before it ended: exit " + load.exitValue());
      } finally {
        load.destroyForcibly();
      }
      long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(15);
      List<String> left = names(client);
      while (!left.isEmpty() && System.nanoTime() < deadline) {
        Thread.sleep(50);
        left = names(client);
      }
      assertEquals(List.of(), left, "tables left by the killed load");

      // the name is free again, and the same load from a live client lands whole
      assertEquals(files, BulkIO.loadWholeFiles(client, "t", dir, TableSpec.Compression.LZ4, n -> {}));
      assertEquals(files, client.count("t"));
      assertEquals(List.of("t"), names(client));
    }
  }

  private static List<String> names(SssClient client) {
    return client.listTables().stream().map(TableStatus::name).toList();
  }
}
