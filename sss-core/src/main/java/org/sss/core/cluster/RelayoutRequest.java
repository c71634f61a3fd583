package org.sss.core.cluster;

import java.io.IOException;
import java.io.Reader;
import java.io.UncheckedIOException;
import java.nio.channels.FileChannel;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardCopyOption;
import java.nio.file.StandardOpenOption;
import java.util.ArrayList;
import java.util.List;
import java.util.Optional;
import java.util.Properties;

/**
 * The one-time instruction a rebalance ({@code cluster resize} keeping the partition count)
 * leaves in a node's data directory: at its next start the node takes its data from partition
 * layout {@code from} to {@code to}, emptying the partitions in {@code empty} (their copies move,
 * and are written again) and every partition it does not hold under {@code to}. The node carries
 * it out and deletes it; the file is how the client side, which does not open stores, tells the
 * servers.
 *
 * @param from  the layout the node's data may be under
 * @param to    the layout to take: the cluster file's
 * @param empty the partitions emptied on every node, ascending
 */
public record RelayoutRequest(String from, String to, List<Integer> empty) {
  /** The instruction's file, in the node's data directory. */
  public static final String FILE = "relayout.properties";

  public RelayoutRequest {
    empty = List.copyOf(empty);
  }

  /** Leaves the instruction in {@code dataDir}, atomically and on disk. */
  public void write(Path dataDir) throws IOException {
    Properties p = new Properties();
    p.setProperty("from", from);
    p.setProperty("to", to);
    p.setProperty("empty", String.join(",", empty.stream().map(String::valueOf).toList()));
    Files.createDirectories(dataDir);
    Path tmp = dataDir.resolve(FILE + ".tmp");
    try (var w = Files.newBufferedWriter(tmp, StandardCharsets.UTF_8)) {
      p.store(w, "a rebalance of the cluster: carried out, then deleted, when this node starts");
    }
    try (FileChannel c = FileChannel.open(tmp, StandardOpenOption.WRITE)) {
      c.force(true);
    }
    Files.move(tmp, dataDir.resolve(FILE), StandardCopyOption.REPLACE_EXISTING, StandardCopyOption.ATOMIC_MOVE);
  }

  /** The instruction left in {@code dataDir}, if any. */
  public static Optional<RelayoutRequest> read(Path dataDir) {
    Path file = dataDir.resolve(FILE);
    if (!Files.exists(file)) {
      return Optional.empty();
    }
    Properties p = new Properties();
    try (Reader r = Files.newBufferedReader(file, StandardCharsets.UTF_8)) {
      p.load(r);
    } catch (IOException e) {
      throw new UncheckedIOException("cannot read " + file, e);
    }
    List<Integer> empty = new ArrayList<>();
    for (String part : p.getProperty("empty", "").split(",")) {
      if (!part.isBlank()) {
        try {
          empty.add(Integer.parseInt(part.trim()));
        } catch (NumberFormatException e) {
          throw new IllegalArgumentException(file + ": 'empty' lists '" + part + "', not a partition number");
        }
      }
    }
    return Optional.of(new RelayoutRequest(p.getProperty("from", ""), p.getProperty("to", ""), empty));
  }

  /** Deletes the instruction from {@code dataDir}, on disk: the node has carried it out. */
  public static void done(Path dataDir) throws IOException {
    Files.deleteIfExists(dataDir.resolve(FILE));
    try (FileChannel dir = FileChannel.open(dataDir, StandardOpenOption.READ)) {
      dir.force(true);
    }
  }
}
