package org.sss.core.cluster;

import java.io.IOException;
import java.io.Writer;
import java.nio.channels.Channels;
import java.nio.channels.WritableByteChannel;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardCopyOption;
import java.nio.file.StandardOpenOption;
import java.nio.file.attribute.PosixFilePermissions;
import java.util.ArrayList;
import java.util.EnumSet;
import java.util.HashSet;
import java.util.List;
import java.util.Properties;
import java.util.Set;
import java.util.TreeSet;
import java.util.concurrent.ThreadLocalRandom;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

/**
 * What every client and server must agree on: the nodes, the partition count and map, and
 * the shared secret. Stored as a properties file ({@code cluster.properties}):
 *
 * <pre>
 *   secret=...            # shared cluster secret (never sent on the wire)
 *   partitions=24         # P, fixed at creation
 *   node.0=127.0.0.1:7101
 *   node.1=127.0.0.1:7102
 *   partition.map=0,1,0,1 # optional; round-robin when absent
 *   partition.copies=0/1,1/0,0/1,1/0 # optional, with replication; each partition's copies (written by a rebalance)
 *   tls=false             # optional; true when servers speak TLS
 *   tls.trust=ca.pem      # with tls: the certificate(s) to trust, PEM (relative to this file)
 *   replication=2         # optional; copies of each partition (default 1)
 *   node.0.host=rack1-a   # optional; the machine a node runs on (default: its address's host)
 *   node.0.rack=rack1     # optional; its rack (default: one rack for all)
 *   node.0.raft.port=7102 # optional; with replication, where the node's membership (Raft) listens (default: port + 1)
 * </pre>
 *
 * <p>Two copies of a partition never sit on one host ({@link ReplicaPlacement}), so
 * {@code replication=R} needs R distinct hosts.
 */
public record ClusterSpec(List<NodeAddress> nodes, PartitionMap partitionMap, String secret, boolean tls,
                          String tlsTrust, int replication, List<ReplicaPlacement.Location> locations,
                          List<Integer> raftPorts) {
  /** Partitions per node when a cluster is created without saying. */
  public static final int DEFAULT_PARTITIONS_PER_NODE = 8;
  /** The rack of a node whose rack the cluster file does not name. */
  public static final String DEFAULT_RACK = "default";

  private static final Set<String> KNOWN_KEYS = Set.of("secret", "partitions", "partition.map", "partition.copies", "tls",
      "tls.trust", "replication");
  private static final Pattern NODE_KEY =
      Pattern.compile("node\\.(\\d+)(\\.(host|rack|raft\\.port))?");

  public ClusterSpec {
    nodes = List.copyOf(nodes);
    locations = locations == null ? defaultLocations(nodes) : List.copyOf(locations);
    raftPorts = raftPorts == null ? defaultRaftPorts(nodes) : List.copyOf(raftPorts);
    if (raftPorts.size() != nodes.size()) {
      throw new IllegalArgumentException(raftPorts.size() + " raft ports for " + nodes.size() + " nodes");
    }
    for (int i = 0; i < nodes.size(); i++) {
      if (nodes.get(i).id() != i) {
        throw new IllegalArgumentException("node ids must be 0.." + (nodes.size() - 1));
      }
    }
    secret = secret == null ? "" : secret;
    if (replication < 1 || replication > nodes.size()) {
      throw new IllegalArgumentException("replication must be 1.." + nodes.size() + " (the node count), not "
          + replication);
    }
    ReplicaPlacement.place(partitionMap, locations, replication); // refuses what cannot be placed
    Set<String> listening = new HashSet<>();
    for (int i = 0; i < nodes.size(); i++) {
      int rp = raftPorts.get(i);
      if (rp < 1 || rp > 65535) {
        throw new IllegalArgumentException("node." + i + ".raft.port must be 1..65535, not " + rp);
      }
      listening.add(nodes.get(i).hostPort());
    }
    if (replication > 1) {
      for (int i = 0; i < nodes.size(); i++) {
        String raft = nodes.get(i).host() + ":" + raftPorts.get(i);
        if (!listening.add(raft)) {
          throw new IllegalArgumentException("node." + i + "'s membership port " + raft
              + " is an address another node or port of this cluster uses (node." + i + ".raft.port)");
        }
      }
    }
    if (locations.size() != nodes.size()) {
      throw new IllegalArgumentException(locations.size() + " host and rack labels for " + nodes.size() + " nodes");
    }
    if (nodes.size() != partitionMap.nodes()) {
      throw new IllegalArgumentException("partition map is for " + partitionMap.nodes()
          + " nodes but the cluster has " + nodes.size());
    }
  }

  /** A spec whose membership ports are the defaults (each node's port + 1). */
  public ClusterSpec(List<NodeAddress> nodes, PartitionMap partitionMap, String secret, boolean tls, String tlsTrust,
                     int replication, List<ReplicaPlacement.Location> locations) {
    this(nodes, partitionMap, secret, tls, tlsTrust, replication, locations, null);
  }

  /** A spec with one copy of each partition. */
  public ClusterSpec(List<NodeAddress> nodes, PartitionMap partitionMap, String secret, boolean tls, String tlsTrust) {
    this(nodes, partitionMap, secret, tls, tlsTrust, 1, null);
  }

  /** A spec without TLS settings beyond the flag, with one copy of each partition. */
  public ClusterSpec(List<NodeAddress> nodes, PartitionMap partitionMap, String secret, boolean tls) {
    this(nodes, partitionMap, secret, tls, null);
  }

  /** This spec with {@code replication} copies, on nodes at {@code locations} (null: each node's address host). */
  public ClusterSpec withReplication(int replication, List<ReplicaPlacement.Location> locations) {
    return new ClusterSpec(nodes, partitionMap, secret, tls, tlsTrust, replication, locations, raftPorts);
  }

  /** This spec with each node's membership (Raft) listening on {@code ports}, in node order. */
  public ClusterSpec withRaftPorts(List<Integer> ports) {
    return new ClusterSpec(nodes, partitionMap, secret, tls, tlsTrust, replication, locations, ports);
  }

  /** Where node {@code id}'s membership (Raft) listens: its host, at its raft port. */
  public NodeAddress raftAddress(int id) {
    return new NodeAddress(id, nodes.get(id).host(), raftPorts.get(id));
  }

  private static List<Integer> defaultRaftPorts(List<NodeAddress> nodes) {
    return nodes.stream().map(n -> n.port() + 1).toList();
  }

  /** Where each partition's copies are, its leader (the map's owner) first. */
  public ReplicaPlacement placement() {
    return ReplicaPlacement.place(partitionMap, locations, replication);
  }

  private static List<ReplicaPlacement.Location> defaultLocations(List<NodeAddress> nodes) {
    return nodes.stream().map(n -> new ReplicaPlacement.Location(n.host(), DEFAULT_RACK)).toList();
  }

  /** A spec with round-robin placement of {@code partitions} partitions. */
  public static ClusterSpec of(List<NodeAddress> nodes, int partitions, String secret) {
    return new ClusterSpec(nodes, PartitionMap.roundRobin(partitions, nodes.size()), secret, false);
  }

  /** Everything but the secret, which must not reach a log or an exception message. */
  @Override
  public String toString() {
    return "ClusterSpec[nodes=" + nodes + ", partitions=" + partitionMap.partitions() + ", secret="
        + (secret.isEmpty() ? "(none)" : "(set)") + ", tls=" + tls + ", replication=" + replication + "]";
  }

  public int nodeCount() {
    return nodes.size();
  }

  public NodeAddress node(int id) {
    return nodes.get(id);
  }

  /** Reads a cluster file, naming the file and the key in any error. */
  public static ClusterSpec load(Path file) throws IOException {
    Properties props = StrictProperties.load(file);
    String trust = props.getProperty("tls.trust");
    if (trust != null && !trust.isBlank()) {
      Path parent = file.toAbsolutePath().getParent();
      props.setProperty("tls.trust", parent.resolve(trust.trim()).toString());
    }
    try {
      return fromProperties(props);
    } catch (IllegalArgumentException e) {
      throw new IllegalArgumentException(file + ": " + e.getMessage(), e);
    }
  }

  /** Parses the properties of a cluster file. */
  public static ClusterSpec fromProperties(Properties props) {
    List<NodeAddress> nodes = new ArrayList<>();
    Set<String> unknown = new TreeSet<>();
    for (String key : props.stringPropertyNames()) {
      if (!NODE_KEY.matcher(key).matches() && !KNOWN_KEYS.contains(key)) {
        unknown.add(key);
      }
    }
    if (!unknown.isEmpty()) {
      throw new IllegalArgumentException("unknown keys " + unknown);
    }
    for (int i = 0; props.containsKey("node." + i); i++) {
      nodes.add(NodeAddress.parse(i, props.getProperty("node." + i)));
    }
    for (String key : props.stringPropertyNames()) {
      Matcher m = NODE_KEY.matcher(key);
      if (m.matches() && m.group(1).length() > 1 && m.group(1).startsWith("0")) {
        throw new IllegalArgumentException(key + ": node numbers are written without leading zeros");
      }
      if (m.matches() && (m.group(1).length() > 6 || Integer.parseInt(m.group(1)) >= nodes.size())) {
        throw new IllegalArgumentException(m.group(2) == null
            ? "nodes must be numbered node.0, node.1, ... without gaps"
            : key + " names no node (node." + m.group(1) + " is not declared)");
      }
    }
    if (nodes.isEmpty()) {
      throw new IllegalArgumentException("no nodes (expected node.0=host:port, ...)");
    }
    Set<String> addresses = new HashSet<>();
    for (NodeAddress n : nodes) {
      if (!addresses.add(n.hostPort())) {
        throw new IllegalArgumentException("two nodes at " + n.hostPort() + " (node." + n.id() + " and another)");
      }
    }
    int partitions;
    try {
      partitions = Integer.parseInt(props.getProperty("partitions",
          Integer.toString(DEFAULT_PARTITIONS_PER_NODE * nodes.size())).trim());
    } catch (NumberFormatException e) {
      throw new IllegalArgumentException("partitions is not a number: " + props.getProperty("partitions"));
    }
    if (partitions < 1 || partitions > PartitionMap.MAX_PARTITIONS) {
      throw new IllegalArgumentException("partitions must be 1.." + PartitionMap.MAX_PARTITIONS + ", not " + partitions);
    }
    PartitionMap map;
    String mapText = props.getProperty("partition.map");
    if (mapText == null || mapText.isBlank()) {
      map = PartitionMap.roundRobin(partitions, nodes.size());
    } else {
      String[] parts = mapText.split(",");
      if (parts.length != partitions) {
        throw new IllegalArgumentException("partition.map has " + parts.length
            + " entries but partitions=" + partitions);
      }
      int[] owners = new int[parts.length];
      for (int p = 0; p < parts.length; p++) {
        try {
          owners[p] = Integer.parseInt(parts[p].trim());
        } catch (NumberFormatException e) {
          throw new IllegalArgumentException("partition.map entry " + p + " is not a node number: '" + parts[p] + "'");
        }
      }
      map = PartitionMap.of(owners, nodes.size());
    }
    String copiesText = props.getProperty("partition.copies");
    if (copiesText != null && !copiesText.isBlank()) {
      try {
        map = map.withCopies(copiesText);
      } catch (IllegalArgumentException e) {
        throw new IllegalArgumentException("partition.copies: " + e.getMessage(), e);
      }
    }
    boolean tls = StrictProperties.parseBoolean("tls", props.getProperty("tls", "false"));
    int replication;
    try {
      replication = Integer.parseInt(props.getProperty("replication", "1").trim());
    } catch (NumberFormatException e) {
      throw new IllegalArgumentException("replication is not a number: " + props.getProperty("replication"));
    }
    List<ReplicaPlacement.Location> locations = new ArrayList<>();
    for (NodeAddress n : nodes) {
      String host = props.getProperty("node." + n.id() + ".host", n.host()).trim();
      String rack = props.getProperty("node." + n.id() + ".rack", DEFAULT_RACK).trim();
      if (host.isEmpty() || rack.isEmpty()) {
        throw new IllegalArgumentException("node." + n.id() + ".host and node." + n.id() + ".rack must not be empty");
      }
      locations.add(new ReplicaPlacement.Location(host, rack));
    }
    List<Integer> raftPorts = new ArrayList<>();
    for (NodeAddress n : nodes) {
      String key = "node." + n.id() + ".raft.port";
      try {
        raftPorts.add(Integer.parseInt(props.getProperty(key, Integer.toString(n.port() + 1)).trim()));
      } catch (NumberFormatException e) {
        throw new IllegalArgumentException(key + " is not a number: '" + props.getProperty(key) + "'");
      }
    }
    return new ClusterSpec(nodes, map, props.getProperty("secret", ""), tls, props.getProperty("tls.trust"),
        replication, locations, raftPorts);
  }

  /** The properties of this spec, as {@link #fromProperties} reads them. */
  public Properties toProperties() {
    Properties props = new Properties();
    props.setProperty("secret", secret);
    props.setProperty("partitions", Integer.toString(partitionMap.partitions()));
    props.setProperty("partition.map", partitionMap.format());
    if (partitionMap.listsCopies()) {
      props.setProperty("partition.copies", partitionMap.formatCopies());
    }
    props.setProperty("tls", Boolean.toString(tls));
    if (tlsTrust != null) {
      props.setProperty("tls.trust", tlsTrust);
    }
    for (NodeAddress n : nodes) {
      props.setProperty("node." + n.id(), n.hostPort());
    }
    if (replication > 1 || !locations.equals(defaultLocations(nodes))) {
      props.setProperty("replication", Integer.toString(replication));
      for (NodeAddress n : nodes) {
        props.setProperty("node." + n.id() + ".host", locations.get(n.id()).host());
        props.setProperty("node." + n.id() + ".rack", locations.get(n.id()).rack());
      }
    }
    if (!raftPorts.equals(defaultRaftPorts(nodes))) {
      for (NodeAddress n : nodes) {
        props.setProperty("node." + n.id() + ".raft.port", Integer.toString(raftPorts.get(n.id())));
      }
    }
    return props;
  }

  /**
   * Writes the spec as a cluster file, readable only by its owner (it holds the secret). The
   * file is created with that mode, not given it afterwards: under a umask of 022 a file made
   * first and restricted later is readable by everyone for a moment.
   */
  public void save(Path file) throws IOException {
    // a leftover of an interrupted save by an earlier version, which used this one name
    Files.deleteIfExists(file.resolveSibling(file.getFileName() + ".tmp"));
    // a name of its own: two saves at once must not delete or rename each other's half-written file
    Path tmp = file.resolveSibling(file.getFileName() + "."
        + Long.toUnsignedString(ThreadLocalRandom.current().nextLong(), 36) + ".tmp");
    try {
      try (Writer w = Channels.newWriter(createOwnerOnly(tmp), StandardCharsets.UTF_8)) {
        toProperties().store(w, "SSS cluster");
      }
      Files.move(tmp, file, StandardCopyOption.REPLACE_EXISTING,
          StandardCopyOption.ATOMIC_MOVE);
    } finally {
      Files.deleteIfExists(tmp); // only when the save failed
    }
  }

  /** A new file that only its owner may read or write, from the moment it exists. */
  static WritableByteChannel createOwnerOnly(Path file) throws IOException {
    Set<StandardOpenOption> open = EnumSet.of(StandardOpenOption.CREATE_NEW, StandardOpenOption.WRITE);
    try {
      return Files.newByteChannel(file, open,
          PosixFilePermissions.asFileAttribute(PosixFilePermissions.fromString("rw-------")));
    } catch (UnsupportedOperationException notPosix) {
      return Files.newByteChannel(file, open);
    }
  }

}
