package org.sss.core.cluster;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/** A cluster file is checked as a whole when read: each mistake is named, none is guessed around. */
class ConfigValidationTest {
  @TempDir
  Path dir;

  private IllegalArgumentException refused(String text) throws IOException {
    Path f = dir.resolve("cluster.properties");
    Files.writeString(f, text);
    return assertThrows(IllegalArgumentException.class, () -> ClusterSpec.load(f));
  }

  @Test
  void repeatedKey_isRefusedNamingIt() throws IOException {
    IllegalArgumentException e = refused("secret=s\nnode.0=127.0.0.1:7000\nnode.1=127.0.0.1:7001\nnode.0=127.0.0.1:7002\n");
    assertTrue(e.getMessage().contains("'node.0' is given twice"), e.getMessage());
  }

  @Test
  void twoNodesOnOneAddress_areRefused() throws IOException {
    IllegalArgumentException e = refused("secret=s\nnode.0=127.0.0.1:7000\nnode.1=127.0.0.1:7000\n");
    assertTrue(e.getMessage().contains("two nodes at 127.0.0.1:7000"), e.getMessage());
  }

  @Test
  void tlsThatIsNotABoolean_isRefused() throws IOException {
    IllegalArgumentException e = refused("secret=s\ntls=yes\nnode.0=127.0.0.1:7000\n");
    assertTrue(e.getMessage().contains("tls must be true or false, not 'yes'"), e.getMessage());
  }

  @Test
  void partitionsOutOfRange_areRefused() throws IOException {
    assertTrue(refused("secret=s\npartitions=-5\nnode.0=127.0.0.1:7000\n").getMessage()
        .contains("partitions must be 1..65535, not -5"));
    assertTrue(refused("secret=s\npartitions=0\nnode.0=127.0.0.1:7000\n").getMessage()
        .contains("partitions must be 1..65535, not 0"));
  }

  @Test
  void partitionMapWithAWord_isRefusedNamingTheEntry() throws IOException {
    IllegalArgumentException e = refused("secret=s\npartitions=2\npartition.map=0,x\nnode.0=127.0.0.1:7000\n");
    assertTrue(e.getMessage().contains("partition.map entry 1 is not a node number: 'x'"), e.getMessage());
  }

  @Test
  void aValidFile_stillLoads() throws IOException {
    Path f = dir.resolve("ok.properties");
    Files.writeString(f, "secret=s\ntls=FALSE\npartitions=4\nnode.0=127.0.0.1:7000\nnode.1=127.0.0.1:7001\n");
    ClusterSpec spec = ClusterSpec.load(f);
    assertEquals(2, spec.nodeCount());
    assertEquals(4, spec.partitionMap().partitions());
  }
}
