package org.sss.server;

import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/** A node file is checked when read, each mistake named with its key and value. */
class NodeConfigValidationTest {
  @TempDir
  Path dir;

  @BeforeEach
  void clusterFile() throws IOException {
    Files.writeString(dir.resolve("cluster.properties"), "secret=s\nnode.0=127.0.0.1:7000\n");
  }

  private String refused(String extra) throws IOException {
    Path f = dir.resolve("node.properties");
    Files.writeString(f, "cluster=cluster.properties\nnode.id=0\ndata.dir=data\n" + extra);
    return assertThrows(IllegalArgumentException.class, () -> NodeConfig.load(f)).getMessage();
  }

  @Test
  void workerThreadsZero_isRefused() throws IOException {
    assertTrue(refused("worker.threads=0\n").contains("worker.threads must be at least 1, not 0"));
  }

  @Test
  void tinyFrameLimit_isRefused() throws IOException {
    assertTrue(refused("max.frame.bytes=100\n").contains("max.frame.bytes must be at least"));
  }

  @Test
  void valueLimitOverTheFrame_isRefused() throws IOException {
    assertTrue(refused("max.frame.bytes=2097152\nmax.value.bytes=2097152\n").contains("max.value.bytes must be 1.."));
  }

  @Test
  void certificateWithoutKey_orKeyWithoutCertificate_isRefused() throws IOException {
    assertTrue(refused("tls.cert=cert.pem\n").contains("tls.cert is given without tls.key"));
    assertTrue(refused("tls.key=key.pem\n").contains("tls.key is given without tls.cert"));
  }

  @Test
  void repeatedKey_isRefused() throws IOException {
    assertTrue(refused("node.id=0\n").contains("'node.id' is given twice"));
  }

  @Test
  void groupRead_isTrueOrFalse_andOpensTheDataDirectoryToItsGroup() throws Exception {
    assertTrue(refused("data.group.read=yes\n").contains("data.group.read must be true or false, not 'yes'"));
    Path f = dir.resolve("node.properties");
    Files.writeString(f, "cluster=cluster.properties\nnode.id=0\ndata.dir=data\ndata.group.read=true\n");
    NodeConfig config = NodeConfig.load(f);
    assertTrue(config.groupReadable());
    Files.writeString(f, "cluster=cluster.properties\nnode.id=0\ndata.dir=data\n");
    assertTrue(!NodeConfig.load(f).groupReadable(), "private by default");
    try (org.sss.kvs.NodeStore store = org.sss.kvs.NodeStore.open(config.dataDir(), config.groupReadable())) {
      org.junit.jupiter.api.Assertions.assertEquals("rwxr-x---", java.nio.file.attribute.PosixFilePermissions
          .toString(Files.getPosixFilePermissions(config.dataDir())));
    }
    try (org.sss.kvs.NodeStore store = org.sss.kvs.NodeStore.open(config.dataDir(), false)) {
      org.junit.jupiter.api.Assertions.assertEquals("rwx------", java.nio.file.attribute.PosixFilePermissions
          .toString(Files.getPosixFilePermissions(config.dataDir())), "reopened private: the mode follows the node file");
    }
  }
}
