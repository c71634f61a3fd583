package org.sss.client;

import com.google.protobuf.ByteString;
import io.netty.buffer.ByteBuf;
import io.netty.handler.codec.CorruptedFrameException;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.Collections;
import java.util.Iterator;
import java.util.List;
import java.util.Map;
import java.util.NoSuchElementException;
import java.util.PriorityQueue;
import java.util.Set;
import java.util.TreeMap;
import java.util.TreeSet;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.LinkedBlockingQueue;
import java.util.concurrent.TimeUnit;
import org.sss.client.internal.NodeChannels;
import org.sss.core.api.Pair;
import org.sss.core.cluster.ClusterSpec;
import org.sss.core.cluster.ReplicaPlacement;
import org.sss.core.keys.StoredKeys;
import org.sss.core.proto.Request;
import org.sss.core.proto.Response;
import org.sss.core.proto.ScanClose;
import org.sss.core.proto.ScanNext;
import org.sss.core.proto.ScanOpen;
import org.sss.core.transport.Connection;
import org.sss.core.transport.Frame;
import org.sss.core.proto.ErrorCode;
import org.sss.core.transport.NodeUnavailableException;
import org.sss.core.transport.PairBlock;

/**
 * A scan of a table across all nodes, as an iterator of pairs (keys without the partition
 * prefix).
 *
 * <h2>Flow control</h2>
 * Each node's scan is pulled chunk by chunk: at most one request is in flight per node and at
 * most {@link #CHUNKS_AHEAD} decoded chunks wait per node, so the client holds a bounded amount
 * of data however large the table, while every node keeps reading ahead of the consumer.
 *
 * <h2>Order</h2>
 * Ordered scans merge the nodes' key-ordered streams with a heap; unordered scans hand out
 * chunks in arrival order, which keeps all nodes busy. Close the scan to release the nodes'
 * snapshots early; a scan read to its end closes itself.
 */
public final class TableScan implements Iterator<Pair>, AutoCloseable {
  static final int CHUNKS_AHEAD = 2;
  private static final List<Pair> END = new ArrayList<>();

  private final List<NodeStream> streams = new ArrayList<>();
  private final boolean ordered;
  private final long limit;
  private final Duration timeout;
  private final LinkedBlockingQueue<Chunk> arrivals = new LinkedBlockingQueue<>();
  private final PriorityQueue<Head> heads;
  private Iterator<Pair> current = Collections.emptyIterator();
  private NodeStream currentStream;
  private int finishedStreams;
  private long returned;
  private Pair next;

  private record Chunk(NodeStream from, List<Pair> pairs, Throwable error) {}

  private record Head(Pair pair, NodeStream from) {}

  /**
   * {@code notServing}: nodes the membership has out of the in-sync copies, catching up or down,
   * which would refuse the scan: their partitions are read from their other copies, as those of
   * a node that cannot be reached.
   */
  TableScan(NodeChannels channels, String table, ScanOptions options, Duration timeout, Set<Integer> notServing) {
    this.ordered = options.ordered();
    this.limit = options.limit() == 0 ? Long.MAX_VALUE : options.limit();
    this.timeout = timeout;
    this.heads = new PriorityQueue<>((a, b) -> Arrays.compareUnsigned(a.pair.key(), b.pair.key()));
    ScanOpen open = ScanOpen.newBuilder()
        .setTable(table)
        .setKeyPrefix(ByteString.copyFrom(options.keyPrefix()))
        .setChunkBytes(options.chunkBytes())
        .setOrdered(options.ordered())
        .setLimit(options.limit())
        .build();
    List<ScanOpen> opens = new ArrayList<>();
    Set<Integer> down = new TreeSet<>();
    NodeUnavailableException lost = null;
    Set<Integer> wanted = wantedPartitions(channels.spec(), options);
    for (int node = 0; node < channels.spec().nodeCount(); node++) {
      List<Integer> mine = channels.spec().partitionMap().partitionsOf(node).stream()
          .filter(p -> wanted == null || wanted.contains(p)).toList();
      if (mine.isEmpty()) {
        continue; // none of the partitions asked for: the node has nothing to read
      }
      if (notServing.contains(node)) {
        down.add(node);
        lost = new NodeUnavailableException(ErrorCode.NOT_SERVING, "node " + node
            + " is out of the in-sync copies, catching up or down");
        continue;
      }
      try {
        streams.add(new NodeStream(channels.get(node)));
        opens.add(wanted == null ? open : open.toBuilder().addAllPartitions(mine).build()); // the node's own partitions
      } catch (NodeUnavailableException e) {
        if (channels.spec().replication() == 1) {
          throw e;
        }
        down.add(node);
        lost = e;
      }
    }
    if (!down.isEmpty()) {
      readCopies(channels, table, open, down, lost, opens, wanted);
    }
    for (int i = 0; i < streams.size(); i++) {
      streams.get(i).open(opens.get(i));
    }
    if (ordered) {
      for (NodeStream s : streams) {
        advanceOrdered(s);
      }
    }
  }

  /** The partitions the options ask for; null for every partition. */
  private static Set<Integer> wantedPartitions(ClusterSpec spec, ScanOptions options) {
    if (options.partitions().isEmpty()) {
      return null;
    }
    for (int p : options.partitions()) {
      if (p < 0 || p >= spec.partitionMap().partitions()) {
        throw new IllegalArgumentException("no partition " + p + ": the cluster has "
            + spec.partitionMap().partitions());
      }
    }
    return new TreeSet<>(options.partitions());
  }

  /**
   * Adds streams reading the partitions of nodes that cannot be reached from their other
   * copies, each surviving node asked for exactly the partitions it stands in for.
   */
  private void readCopies(NodeChannels channels, String table, ScanOpen open, Set<Integer> down,
                          NodeUnavailableException lost, List<ScanOpen> opens, Set<Integer> wanted) {
    ClusterSpec spec = channels.spec();
    ReplicaPlacement placement = spec.placement();
    Map<Integer, List<Integer>> byStandIn = new TreeMap<>();
    List<Integer> lostPartitions = new ArrayList<>();
    for (int node : down) {
      for (int p : spec.partitionMap().partitionsOf(node)) {
        if (wanted != null && !wanted.contains(p)) {
          continue;
        }
        int standIn = placement.replicasOf(p).subList(0, spec.replication()).stream()
            .filter(n -> !down.contains(n)).findFirst().orElse(-1);
        if (standIn < 0) {
          lostPartitions.add(p);
        } else {
          byStandIn.computeIfAbsent(standIn, k -> new ArrayList<>()).add(p);
        }
      }
    }
    if (!lostPartitions.isEmpty()) {
      throw new NodeUnavailableException("scan of '" + table + "': no copy reachable of partitions "
          + lostPartitions + " (nodes " + down + " down: " + lost.getMessage() + ")", lost);
    }
    for (var e : byStandIn.entrySet()) {
      streams.add(new NodeStream(channels.get(e.getKey())));
      opens.add(open.toBuilder().addAllPartitions(e.getValue()).setStandIn(true).build());
    }
  }

  @Override
  public boolean hasNext() {
    if (next == null && returned < limit) {
      next = ordered ? nextOrdered() : nextUnordered();
    }
    if (next == null) {
      close();
    }
    return next != null;
  }

  @Override
  public Pair next() {
    if (!hasNext()) {
      throw new NoSuchElementException();
    }
    Pair p = next;
    next = null;
    returned++;
    return p;
  }

  private Pair nextUnordered() {
    while (!current.hasNext()) {
      if (finishedStreams == streams.size()) {
        return null;
      }
      Chunk c = take(arrivals, null);
      if (c.pairs == END) {
        finishedStreams++;
        continue;
      }
      c.from.consumed();
      current = c.pairs.iterator();
    }
    return current.next();
  }

  private Pair nextOrdered() {
    Head h = heads.poll();
    if (h == null) {
      return null;
    }
    advanceOrdered(h.from);
    return h.pair;
  }

  /** Puts the next pair of {@code s}'s stream on the heap, fetching a chunk if needed. */
  private void advanceOrdered(NodeStream s) {
    while (!s.local.hasNext()) {
      Chunk c = take(s.queue, s);
      if (c.pairs == END) {
        return;
      }
      s.consumed();
      s.local = c.pairs.iterator();
    }
    heads.add(new Head(s.local.next(), s));
  }

  private Chunk take(LinkedBlockingQueue<Chunk> queue, NodeStream s) {
    Chunk c;
    try {
      c = queue.poll(timeout.toMillis(), TimeUnit.MILLISECONDS);
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
      close();
      throw new NodeUnavailableException("scan interrupted", e);
    }
    if (c == null) {
      close();
      throw new NodeUnavailableException("scan: no data within " + timeout.toSeconds() + " s", null);
    }
    if (c.error != null) {
      close();
      throw NodeChannels.unwrap(c.error);
    }
    return c;
  }

  @Override
  public void close() {
    for (NodeStream s : streams) {
      s.close();
    }
  }

  /** One node's part of the scan: a cursor pulled chunk by chunk. */
  private final class NodeStream {
    private final Connection connection;
    final LinkedBlockingQueue<Chunk> queue = new LinkedBlockingQueue<>();
    Iterator<Pair> local = Collections.emptyIterator();
    private long cursor;
    private boolean requesting;
    private boolean done;
    private boolean closed;
    /** True once a ScanClose for the cursor went out. */
    private boolean closeSent;
    private int waiting;

    NodeStream(Connection connection) {
      this.connection = connection;
    }

    void open(ScanOpen open) {
      synchronized (this) {
        requesting = true;
      }
      handle(connection.call(Request.newBuilder().setScanOpen(open)));
    }

    private void handle(CompletableFuture<Frame<Response>> f) {
      f.whenComplete((frame, error) -> {
        if (error != null) {
          synchronized (this) {
            done = true;
            requesting = false;
          }
          deliver(new Chunk(this, null, error));
          return;
        }
        List<Pair> pairs;
        boolean last;
        try {
          pairs = decode(frame.body(), frame.header().getScan().getPairCount());
          last = frame.header().getScan().getDone();
        } catch (RuntimeException e) {
          deliver(new Chunk(this, null, e));
          return;
        } finally {
          frame.release();
        }
        boolean requestMore;
        boolean abandoned;
        long id;
        synchronized (this) {
          requesting = false;
          cursor = frame.header().getScan().getCursor();
          done = last;
          waiting++;
          requestMore = !done && !closed && waiting < CHUNKS_AHEAD;
          if (requestMore) {
            requesting = true;
          }
          // closed before the server told us the cursor: close it now, or the node keeps it
          // (and its snapshot) open until the connection ends
          abandoned = closed && !done && !closeSent;
          if (abandoned) {
            closeSent = true;
          }
          id = cursor;
        }
        if (abandoned) {
          sendClose(id);
          return;
        }
        if (!pairs.isEmpty()) {
          deliver(new Chunk(this, pairs, null));
        } else {
          consumed();
        }
        if (last) {
          deliver(new Chunk(this, END, null));
        }
        if (requestMore) {
          requestNext();
        }
      });
    }

    private void deliver(Chunk c) {
      (ordered ? queue : arrivals).add(c);
    }

    private void requestNext() {
      long id;
      synchronized (this) {
        id = cursor;
      }
      handle(connection.call(Request.newBuilder().setScanNext(ScanNext.newBuilder().setCursor(id))));
    }

    /** The consumer took a chunk: ask for another if none is in flight. */
    void consumed() {
      boolean request;
      synchronized (this) {
        waiting--;
        request = !done && !closed && !requesting && waiting < CHUNKS_AHEAD;
        if (request) {
          requesting = true;
        }
      }
      if (request) {
        requestNext();
      }
    }

    void close() {
      long id;
      synchronized (this) {
        if (closed) {
          return;
        }
        closed = true;
        id = done ? 0 : cursor;
        closeSent = id != 0;
      }
      if (id != 0) {
        sendClose(id);
      }
    }

    private void sendClose(long id) {
      if (connection.isActive()) {
        connection.call(Request.newBuilder().setScanClose(ScanClose.newBuilder().setCursor(id)))
            .whenComplete((r, e) -> {
              if (r != null) {
                r.release();
              }
            });
      }
    }
  }

  private static List<Pair> decode(ByteBuf body, int expected) {
    List<Pair> out = new ArrayList<>(expected);
    ByteBuf in = body;
    while (in.isReadable()) {
      int storedLength = PairBlock.readLength(in);
      if (storedLength < StoredKeys.PREFIX_BYTES) {
        throw new CorruptedFrameException("stored key of " + storedLength
            + " bytes lacks the partition prefix");
      }
      byte[] key = StoredKeys.readScannedKey(in, storedLength);
      byte[] value = PairBlock.readField(in);
      out.add(new Pair(key, value));
    }
    return out;
  }

}
