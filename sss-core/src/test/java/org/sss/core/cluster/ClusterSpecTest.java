package org.sss.core.cluster;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.io.IOException;
import java.io.Writer;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.attribute.PosixFilePermission;
import java.util.List;
import java.util.Properties;
import java.util.Set;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

class ClusterSpecTest {
  @TempDir
  Path dir;

  private static List<NodeAddress> nodes(int n) {
    return java.util.stream.IntStream.range(0, n)
        .mapToObj(i -> new NodeAddress(i, "10.0.0." + (i + 1), 7101 + i))
        .toList();
  }

  private static Properties props(String... keyValues) {
    Properties p = new Properties();
    for (int i = 0; i < keyValues.length; i += 2) {
      p.setProperty(keyValues[i], keyValues[i + 1]);
    }
    return p;
  }

  @Test
  void saveLoad_roundTripsRoundRobinSpec() throws IOException {
    ClusterSpec spec = ClusterSpec.of(nodes(3), 24, "s3cr3t");
    Path file = dir.resolve("cluster.properties");
    spec.save(file);
    ClusterSpec loaded = ClusterSpec.load(file);
    assertEquals(spec, loaded);
    assertEquals(24, loaded.partitionMap().partitions());
    assertEquals("s3cr3t", loaded.secret());
    assertEquals(new NodeAddress(2, "10.0.0.3", 7103), loaded.node(2));
    assertFalse(loaded.tls());
  }

  @Test
  void saveLoad_roundTripsExplicitMapTlsAndOddSecret() throws IOException {
    String secret = "p=ss:wörd #!\\ with spaces ";
    ClusterSpec spec = new ClusterSpec(nodes(2), PartitionMap.of(new int[] {1, 1, 0, 1, 0}, 2), secret, true);
    Path file = dir.resolve("cluster.properties");
    spec.save(file);
    ClusterSpec loaded = ClusterSpec.load(file);
    assertEquals(spec, loaded);
    assertEquals(secret, loaded.secret());
    assertEquals("1,1,0,1,0", loaded.partitionMap().format());
    assertTrue(loaded.tls());
  }

  @Test
  void save_overwritesAndLeavesNoTempFile() throws IOException {
    Path file = dir.resolve("cluster.properties");
    ClusterSpec.of(nodes(1), 4, "old").save(file);
    ClusterSpec.of(nodes(2), 6, "new").save(file);
    ClusterSpec loaded = ClusterSpec.load(file);
    assertEquals("new", loaded.secret());
    assertEquals(2, loaded.nodeCount());
    try (var files = Files.list(dir)) {
      assertEquals(List.of(file), files.toList());
    }
  }

  @Test
  void save_makesFileReadableByOwnerOnly() throws IOException {
    Path file = dir.resolve("cluster.properties");
    ClusterSpec.of(nodes(1), 1, "x").save(file);
    if (Files.getFileStore(file).supportsFileAttributeView("posix")) {
      assertEquals(Set.of(PosixFilePermission.OWNER_READ, PosixFilePermission.OWNER_WRITE),
          Files.getPosixFilePermissions(file));
    }
  }

  @Test
  void toString_neverShowsTheSecret() {
    String s = ClusterSpec.of(nodes(2), 4, "very-secret-value").toString();
    assertFalse(s.contains("very-secret-value"), s);
    assertTrue(s.contains("secret=(set)") && s.contains("partitions=4"), s);
  }

  /** The secret must never sit in a file others can read, not even while it is being written. */
  @Test
  void secretFile_isOwnerOnlyFromTheMomentItExists() throws IOException {
    Path file = dir.resolve("being-written");
    try (var channel = ClusterSpec.createOwnerOnly(file)) {
      if (Files.getFileStore(file).supportsFileAttributeView("posix")) {
        assertEquals(Set.of(PosixFilePermission.OWNER_READ, PosixFilePermission.OWNER_WRITE),
            Files.getPosixFilePermissions(file), "before anything is written");
      }
    }
    // a leftover temporary file of an interrupted save does not keep its looser mode
    Path target = dir.resolve("cluster.properties");
    Path leftover = dir.resolve("cluster.properties.tmp");
    Files.writeString(leftover, "stale");
    if (Files.getFileStore(leftover).supportsFileAttributeView("posix")) {
      Files.setPosixFilePermissions(leftover, Set.of(PosixFilePermission.OWNER_READ, PosixFilePermission.OWNER_WRITE,
          PosixFilePermission.OTHERS_READ));
    }
    ClusterSpec.of(nodes(1), 1, "x").save(target);
    assertFalse(Files.exists(leftover));
    assertEquals("x", ClusterSpec.load(target).secret());
  }

  /**
   * Two saves of one file at once (two launchers, a test harness) each leave a whole file: with
   * one shared temporary name, one save deleted or renamed the other's half-written file (a
   * truncated cluster file, or a save failing with NoSuchFileException).
   */
  @Test
  void save_concurrently_neverFailsNorLeavesAPartialFile() throws Exception {
    Path target = dir.resolve("cluster.properties");
    List<ClusterSpec> specs = List.of(ClusterSpec.of(nodes(3), 24, "first"), ClusterSpec.of(nodes(4), 32, "second"));
    java.util.concurrent.ExecutorService pool = java.util.concurrent.Executors.newFixedThreadPool(4);
    try {
      List<java.util.concurrent.Future<?>> saves = new java.util.ArrayList<>();
      for (int i = 0; i < 400; i++) {
        ClusterSpec spec = specs.get(i % 2);
        saves.add(pool.submit(() -> {
          spec.save(target);
          return null;
        }));
      }
      for (java.util.concurrent.Future<?> f : saves) {
        f.get(); // throws what a save threw
      }
    } finally {
      pool.shutdownNow();
    }
    ClusterSpec saved = ClusterSpec.load(target);
    assertTrue(List.of("first", "second").contains(saved.secret()), saved.secret());
    assertEquals(saved.secret().equals("first") ? 3 : 4, saved.nodeCount());
    try (var left = Files.list(dir)) {
      assertEquals(List.of(target), left.toList(), "no temporary file left behind");
    }
  }

  @Test
  void fromProperties_defaultsToEightPartitionsPerNodeRoundRobin() {
    ClusterSpec spec = ClusterSpec.fromProperties(props(
        "node.0", "a:1", "node.1", "b:2", "node.2", "c:3"));
    assertEquals(3 * ClusterSpec.DEFAULT_PARTITIONS_PER_NODE, spec.partitionMap().partitions());
    assertEquals(24, spec.partitionMap().partitions());
    assertEquals(PartitionMap.roundRobin(24, 3), spec.partitionMap());
    assertEquals("", spec.secret());
    assertFalse(spec.tls());
  }

  @Test
  void load_readsHandWrittenFile() throws IOException {
    Path file = dir.resolve("cluster.properties");
    Files.writeString(file, """
        # a comment
        secret = abc
        partitions = 4
        node.0 = 127.0.0.1:7101
        node.1 = localhost : 7102
        partition.map = 0, 1, 1, 0
        tls = true
        """, StandardCharsets.UTF_8);
    ClusterSpec spec = ClusterSpec.load(file);
    assertEquals("abc", spec.secret());
    assertEquals(new NodeAddress(1, "localhost", 7102), spec.node(1));
    assertEquals(List.of(0, 3), spec.partitionMap().partitionsOf(0));
    assertTrue(spec.tls());
  }

  @Test
  void fromProperties_rejectsUnknownKeysNamingThem() {
    IllegalArgumentException e = assertThrows(IllegalArgumentException.class,
        () -> ClusterSpec.fromProperties(props("node.0", "a:1", "partitons", "8", "secrets", "x")));
    assertTrue(e.getMessage().contains("partitons"), e.getMessage());
    assertTrue(e.getMessage().contains("secrets"), e.getMessage());
  }

  @Test
  void load_errorNamesFileAndUnknownKey() throws IOException {
    Path file = dir.resolve("bad.properties");
    try (Writer w = Files.newBufferedWriter(file)) {
      props("node.0", "a:1", "colour", "blue").store(w, null);
    }
    IllegalArgumentException e = assertThrows(IllegalArgumentException.class, () -> ClusterSpec.load(file));
    assertTrue(e.getMessage().contains(file.toString()), e.getMessage());
    assertTrue(e.getMessage().contains("colour"), e.getMessage());
  }

  @Test
  void fromProperties_rejectsGapInNodeNumbering() {
    IllegalArgumentException e = assertThrows(IllegalArgumentException.class,
        () -> ClusterSpec.fromProperties(props("node.0", "a:1", "node.2", "c:3")));
    assertTrue(e.getMessage().contains("gaps"), e.getMessage());
  }

  @Test
  void fromProperties_rejectsNodesNotStartingAtZero() {
    assertThrows(IllegalArgumentException.class,
        () -> ClusterSpec.fromProperties(props("node.1", "a:1", "node.2", "c:3")));
  }

  @Test
  void fromProperties_rejectsNoNodes() {
    IllegalArgumentException e = assertThrows(IllegalArgumentException.class,
        () -> ClusterSpec.fromProperties(props("secret", "x")));
    assertTrue(e.getMessage().contains("no nodes"), e.getMessage());
  }

  @Test
  void fromProperties_rejectsPartitionMapLengthMismatch() {
    IllegalArgumentException e = assertThrows(IllegalArgumentException.class,
        () -> ClusterSpec.fromProperties(props(
            "node.0", "a:1", "node.1", "b:2", "partitions", "4", "partition.map", "0,1,0")));
    assertTrue(e.getMessage().contains("3 entries"), e.getMessage());
    assertTrue(e.getMessage().contains("partitions=4"), e.getMessage());
  }

  @Test
  void fromProperties_rejectsPartitionMapWithUnknownOrIdleNode() {
    assertThrows(IllegalArgumentException.class, () -> ClusterSpec.fromProperties(props(
        "node.0", "a:1", "node.1", "b:2", "partitions", "3", "partition.map", "0,1,2")));
    assertThrows(IllegalArgumentException.class, () -> ClusterSpec.fromProperties(props(
        "node.0", "a:1", "node.1", "b:2", "partitions", "3", "partition.map", "0,0,0")));
  }

  @Test
  void fromProperties_rejectsNonNumericPartitions() {
    IllegalArgumentException e = assertThrows(IllegalArgumentException.class,
        () -> ClusterSpec.fromProperties(props("node.0", "a:1", "partitions", "many")));
    assertTrue(e.getMessage().contains("many"), e.getMessage());
  }

  @Test
  void fromProperties_rejectsBadNodeAddress() {
    IllegalArgumentException noPort = assertThrows(IllegalArgumentException.class,
        () -> ClusterSpec.fromProperties(props("node.0", "hostonly")));
    assertTrue(noPort.getMessage().contains("node.0"), noPort.getMessage());
    assertThrows(IllegalArgumentException.class, () -> ClusterSpec.fromProperties(props("node.0", "h:99999")));
    assertThrows(IllegalArgumentException.class, () -> ClusterSpec.fromProperties(props("node.0", "h:port")));
  }

  @Test
  void constructor_rejectsMapForOtherNodeCount() {
    assertThrows(IllegalArgumentException.class,
        () -> new ClusterSpec(nodes(2), PartitionMap.roundRobin(8, 3), "", false));
  }

  @Test
  void constructor_rejectsNodeIdsOutOfOrder() {
    List<NodeAddress> swapped = List.of(new NodeAddress(1, "a", 1), new NodeAddress(0, "b", 2));
    assertThrows(IllegalArgumentException.class,
        () -> new ClusterSpec(swapped, PartitionMap.roundRobin(2, 2), "", false));
  }

  @Test
  void constructor_nullSecretBecomesEmpty() {
    assertEquals("", new ClusterSpec(nodes(1), PartitionMap.roundRobin(1, 1), null, false).secret());
  }

  @Test
  void replication_roundTripsWithHostAndRackLabels() throws IOException {
    List<ReplicaPlacement.Location> where = List.of(new ReplicaPlacement.Location("h0", "r0"),
        new ReplicaPlacement.Location("h1", "r1"), new ReplicaPlacement.Location("h2", "r0"));
    ClusterSpec spec = ClusterSpec.of(nodes(3), 12, "s").withReplication(2, where);
    Path file = dir.resolve("cluster.properties");
    spec.save(file);
    ClusterSpec loaded = ClusterSpec.load(file);
    assertEquals(spec, loaded);
    assertEquals(2, loaded.replication());
    assertEquals(where, loaded.locations());
    for (int p = 0; p < 12; p++) {
      List<Integer> copies = loaded.placement().replicasOf(p);
      assertEquals(loaded.partitionMap().ownerOf(p), copies.get(0), "the map's owner leads partition " + p);
      assertEquals(2, new java.util.HashSet<>(copies.stream().map(n -> where.get(n).host()).toList()).size());
      assertEquals(2, new java.util.HashSet<>(copies.stream().map(n -> where.get(n).rack()).toList()).size(),
          "two racks, two copies: one on each");
    }
  }

  @Test
  void replication_absent_isOneCopy_andWritesNoNewKeys() {
    ClusterSpec spec = ClusterSpec.fromProperties(props("node.0", "a:1", "node.1", "b:2"));
    assertEquals(1, spec.replication());
    assertEquals("a", spec.locations().get(0).host());
    assertEquals(ClusterSpec.DEFAULT_RACK, spec.locations().get(1).rack());
    assertFalse(spec.toProperties().containsKey("replication"), "a file without replication stays without it");
    assertFalse(spec.toProperties().containsKey("node.0.host"));
  }

  @Test
  void replication_refusedWhenCopiesWouldShareAHost() {
    IllegalArgumentException e = assertThrows(IllegalArgumentException.class, () -> ClusterSpec.fromProperties(
        props("node.0", "a:1", "node.1", "a:2", "node.2", "b:3", "replication", "3")));
    assertTrue(e.getMessage().contains("replication=3 needs 3 nodes on distinct hosts"), e.getMessage());
    ClusterSpec labelled = ClusterSpec.fromProperties(props("node.0", "a:1", "node.1", "a:3", "node.1.host", "other",
        "node.2", "b:3", "replication", "3"));
    assertEquals(3, labelled.replication(), "a label names the host when addresses do not");
  }

  @Test
  void raftPorts_defaultToThePortAfter_canBeNamed_andMustNotTakeAnotherAddress() {
    ClusterSpec dflt = ClusterSpec.fromProperties(props("node.0", "a:7070", "node.1", "b:7070", "replication", "2"));
    assertEquals(new NodeAddress(1, "b", 7071), dflt.raftAddress(1));
    ClusterSpec named = ClusterSpec.fromProperties(props("node.0", "h:7001", "node.1", "h:7002", "node.0.host", "x",
        "node.1.host", "y", "node.0.raft.port", "8001", "node.1.raft.port", "8002", "replication", "2"));
    assertEquals(new NodeAddress(0, "h", 8001), named.raftAddress(0));
    assertEquals(named, ClusterSpec.fromProperties(named.toProperties()), "written and read back");
    IllegalArgumentException taken = assertThrows(IllegalArgumentException.class, () -> ClusterSpec.fromProperties(
        props("node.0", "h:7001", "node.1", "h:7002", "node.0.host", "x", "node.1.host", "y", "replication", "2")));
    assertTrue(taken.getMessage().contains("node.0's membership port h:7002 is an address another node"),
        taken.getMessage());
    IllegalArgumentException bad = assertThrows(IllegalArgumentException.class, () -> ClusterSpec.fromProperties(
        props("node.0", "a:1", "node.0.raft.port", "x")));
    assertTrue(bad.getMessage().contains("node.0.raft.port is not a number: 'x'"), bad.getMessage());
    // one copy: no membership, so the default may fall on another node's port
    assertEquals(1, ClusterSpec.fromProperties(props("node.0", "h:7001", "node.1", "h:7002")).replication());
  }

  @Test
  void replication_outOfRangeOrNotANumber_isNamed() {
    for (String r : List.of("0", "4", "-1")) {
      IllegalArgumentException e = assertThrows(IllegalArgumentException.class, () -> ClusterSpec.fromProperties(
          props("node.0", "a:1", "node.1", "b:2", "node.2", "c:3", "replication", r)));
      assertTrue(e.getMessage().contains("replication must be 1..3"), e.getMessage());
    }
    IllegalArgumentException e = assertThrows(IllegalArgumentException.class, () -> ClusterSpec.fromProperties(
        props("node.0", "a:1", "replication", "two")));
    assertTrue(e.getMessage().contains("replication is not a number: two"), e.getMessage());
  }

  @Test
  void labelOfAnUndeclaredNode_isNamed() {
    IllegalArgumentException e = assertThrows(IllegalArgumentException.class, () -> ClusterSpec.fromProperties(
        props("node.0", "a:1", "node.3.rack", "r")));
    assertTrue(e.getMessage().contains("node.3.rack names no node"), e.getMessage());
    IllegalArgumentException unknown = assertThrows(IllegalArgumentException.class, () -> ClusterSpec.fromProperties(
        props("node.0", "a:1", "node.0.colour", "r")));
    assertTrue(unknown.getMessage().contains("node.0.colour"), unknown.getMessage());
  }

  @Test
  void zeroPaddedNodeNumbers_areRefused_notTakenForAnotherNode() {
    IllegalArgumentException e = assertThrows(IllegalArgumentException.class, () -> ClusterSpec.fromProperties(props(
        "node.0", "10.0.0.1:7101", "node.1", "10.0.0.2:7102", "node.01", "10.0.0.9:7109")));
    assertTrue(e.getMessage().contains("node.01: node numbers are written without leading zeros"), e.getMessage());
    assertThrows(IllegalArgumentException.class, () -> ClusterSpec.fromProperties(props(
        "node.0", "10.0.0.1:7101", "node.1", "10.0.0.2:7102", "replication", "2",
        "node.0.host", "machine-a", "node.01.host", "machine-a")), "a label must not be dropped silently");
  }

  @Test
  void load_missingFileDirectoryOrBinary_saysWhichAndWhy() throws IOException {
    IOException missing = assertThrows(IOException.class, () -> ClusterSpec.load(dir.resolve("nope.properties")));
    assertTrue(missing.getMessage().endsWith("nope.properties: no such configuration file"), missing.getMessage());
    IOException directory = assertThrows(IOException.class, () -> ClusterSpec.load(dir));
    assertTrue(directory.getMessage().endsWith(": is a directory, not a configuration file"), directory.getMessage());
    Path binary = dir.resolve("binary");
    java.nio.file.Files.write(binary, new byte[] {(byte) 0xC3, (byte) 0x28, 0, (byte) 0xFF});
    IOException notText = assertThrows(IOException.class, () -> ClusterSpec.load(binary));
    assertTrue(notText.getMessage().endsWith("binary: not a text configuration file (it is not UTF-8)"),
        notText.getMessage());
  }
}
