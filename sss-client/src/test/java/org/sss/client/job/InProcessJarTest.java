package org.sss.client.job;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.io.File;
import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;
import org.sss.client.SssClient;
import org.sss.client.cluster.SssCluster;
import org.sss.client.internal.InProcessClusters;
import org.sss.core.api.Mapper;
import org.sss.core.api.Serdes;
import org.sss.core.cluster.ClusterSpec;

/**
 * A job's JAR and an embedded cluster: nodes in this JVM load classes through its class path,
 * so a JAR on it is not hashed nor shipped; any other JAR is. Told apart here by a JAR file that
 * does not exist: shipping it fails the job, since the coordinator must read it.
 */
class InProcessJarTest {
  static SssCluster cluster;
  static SssClient client;
  @TempDir
  static Path dir;
  static Path lines;

  @BeforeAll
  static void start() throws IOException {
    cluster = SssCluster.embedded(2);
    client = cluster.client();
    lines = dir.resolve("lines.txt");
    Files.writeString(lines, "a\nb b\nc\n", StandardCharsets.UTF_8);
  }

  @AfterAll
  static void stop() {
    client.close();
    cluster.close();
  }

  static Job copyWith(Path jar) {
    return Job.named("copy").jar(jar).inputText(lines).map(Mapper.Identity.class, Serdes.LONG, Serdes.STRING)
        .output("copy").overwrite().build();
  }

  @Test
  void aJarOffTheClassPath_isShipped() {
    Path missing = dir.resolve("not-on-the-class-path.jar");
    Exception e = assertThrows(Exception.class, () -> client.submit(copyWith(missing)).await());
    assertTrue(String.valueOf(e.getMessage()).contains("not-on-the-class-path.jar"), String.valueOf(e));
  }

  @Test
  void aJarOnTheClassPath_isNotShipped_andTheJobRuns() {
    Path missing = dir.resolve("on-the-class-path.jar");
    String classPath = System.getProperty("java.class.path");
    System.setProperty("java.class.path", classPath + File.pathSeparator + missing);
    try {
      JobResult r = client.submit(copyWith(missing)).await();
      assertEquals(3, r.stages().get(0).recordsOut());
    } finally {
      System.setProperty("java.class.path", classPath);
    }
  }

  @Test
  void onlyTheClustersOfThisJvm_seeItsClassPath() {
    Path onPath = Path.of(System.getProperty("java.class.path").split(File.pathSeparator)[0]);
    assertTrue(InProcessClusters.seeOnClassPath(cluster.spec(), onPath));
    assertFalse(InProcessClusters.seeOnClassPath(cluster.spec(), dir.resolve("elsewhere.jar")));
    ClusterSpec other = ClusterSpec.of(cluster.spec().nodes(), 4, "another-secret");
    assertFalse(InProcessClusters.seeOnClassPath(other, onPath), "a cluster started elsewhere");
  }
}
