package org.sss.server.execution;

import com.google.protobuf.ByteString;
import io.netty.buffer.ByteBuf;
import java.util.concurrent.Semaphore;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.AtomicLong;
import java.util.concurrent.atomic.AtomicReference;
import org.sss.core.cluster.InSyncCopies;
import org.sss.core.cluster.PartitionMap;
import org.sss.core.cluster.ReplicaPlacement;
import org.sss.core.keys.PairTypes;
import org.sss.core.proto.BuiltFile;
import org.sss.core.proto.ClusterView;
import org.sss.core.proto.Request;
import org.sss.core.proto.ShuffleBatch;
import org.sss.core.transport.Connection;
import org.sss.kvs.PartitionFiles;
import org.sss.server.NodeConfig;
import org.sss.kvs.StoreTable;

/**
 * The shuffle of one stage on one node: what every task's {@link ShuffleWriter} shares.
 *
 * <h2>Design</h2>
 * An emitted pair is hashed to its partition and owner. Pairs for this node go straight into
 * the local store in batches (no network, no copy through a socket). Pairs for another node
 * are packed into that node's buffer and sent as a {@link ShuffleBatch} when the buffer is
 * full; the receiver writes the batch in one RocksDB write (WAL off for intermediate tables)
 * and acknowledges it. An output of several copies goes mostly in SST files each writer builds
 * once for every copy and sends whole ({@link #sendFile}, {@code PartitionFiles}).
 *
 * <h2>Backpressure</h2>
 * At most {@link #IN_FLIGHT_PER_PEER} batches per destination are unacknowledged at once; a
 * task that wants to send more blocks. Memory for the shuffle is therefore bounded by
 * tasks x destinations x batch size plus the in-flight window (1 MiB batches, or built files of
 * up to 4 MiB of pairs), whatever the data size; a writer of an output of several copies also
 * holds up to 64 files being built (about 200 KiB of native memory each).
 *
 * <h2>Barrier</h2>
 * {@link #awaitAcks} returns once every batch sent has been acknowledged: only then does this
 * node report its part of the stage done, so when every node has reported, every pair of the
 * stage is in its owner's store.
 */
final class StageShuffle {
  static final int IN_FLIGHT_PER_PEER = 4;
  static final int BATCH_BYTES = 1 << 20;

  final String jobId;
  final String table;
  /** The types every batch of this stage declares: those of the stage's output serdes. */
  final PairTypes types;
  final boolean multiValued;
  final int self;
  final PartitionMap map;
  /** Where each partition's copies are (the output may keep more than one). */
  final ReplicaPlacement placement;
  /** The job's view: where pairs go when a partition's leader is out ({@code InSyncCopies}). */
  /** Per partition, the node receiving a table of one copy, and the copies of a replicated one. */
  final int[] owners;
  final int[][] targets;
  final StoreTable localTable;
  private final PeerLinks peers;
  private final Semaphore[] inFlight;
  private final AtomicReference<Throwable> failure;
  final AtomicLong sequence;
  /** The largest key or value a receiving node accepts; local writes obey it too. */
  final int maxValueBytes;
  private final AtomicBoolean aborted;
  final AtomicLong pairsShuffled = new AtomicLong();
  /** The last writer number handed out ({@link #newStream}). */
  private final AtomicInteger streams = new AtomicInteger();
  final AtomicLong bytesShuffled = new AtomicLong();
  /** Pairs of this node's writers built into files and sent whole ({@link ShuffleWriter}). */
  final AtomicLong pairsInBuiltFiles = new AtomicLong();

  StageShuffle(String jobId, String table, PairTypes types, boolean multiValued, int self, PartitionMap map,
               ReplicaPlacement placement, StoreTable localTable, PeerLinks peers, AtomicReference<Throwable> failure, AtomicLong sequence,
               int maxValueBytes, AtomicBoolean aborted,
               ClusterView view) {
    InSyncCopies inSync = new InSyncCopies(placement);
    this.owners = new int[placement.partitions()];
    for (int p = 0; p < owners.length; p++) {
      owners[p] = inSync.owner(view, p);
    }
    this.targets = inSync.writeTargetsByPartition(view);
    this.maxValueBytes = maxValueBytes;
    this.aborted = aborted;
    this.jobId = jobId;
    this.table = table;
    this.types = types;
    this.multiValued = multiValued;
    this.self = self;
    this.map = map;
    this.placement = placement;
    this.localTable = localTable;
    this.peers = peers;
    this.failure = failure;
    this.sequence = sequence;
    this.inFlight = new Semaphore[map.nodes()];
    for (int i = 0; i < inFlight.length; i++) {
      inFlight[i] = new Semaphore(IN_FLIGHT_PER_PEER);
    }
  }

  /**
   * A number for a new writer of this stage on this node, 1 or more: the receiving tables keep
   * each writer's pairs apart ({@code ShuffleBatch.stream}).
   */
  int newStream() {
    return streams.incrementAndGet();
  }

  /** Sends a packed batch of writer {@code stream} to {@code node}; blocks while its window is full. Takes the buffer. */
  void send(int node, int stream, ByteBuf batch, int pairs) throws InterruptedException {
    send(node, header(stream, pairs), batch);
  }

  /**
   * Sends writer {@code stream}'s built file {@code file}, whose bytes are {@code body}, to
   * {@code node}; blocks while its window is full. Takes the buffer.
   */
  void sendFile(int node, int stream, PartitionFiles.BuiltFile file, ByteBuf body) throws InterruptedException {
    send(node, header(stream, Math.toIntExact(file.pairs())).setBuiltFile(BuiltFile.newBuilder()
        .setFirstKey(ByteString.copyFrom(file.firstKey())).setLastKey(ByteString.copyFrom(file.lastKey()))
        .setPairBytes(file.pairBytes())), body);
  }

  private ShuffleBatch.Builder header(int stream, int pairs) {
    return ShuffleBatch.newBuilder().setJobId(jobId).setTable(table).setPairCount(pairs).setSourceNode(self)
        .setStream(stream).setKeyType(types.key()).setValueType(types.value());
  }

  private void send(int node, ShuffleBatch.Builder header, ByteBuf batch) throws InterruptedException {
    Semaphore window = inFlight[node];
    try {
      window.acquire();
    } catch (InterruptedException e) {
      batch.release();
      throw e;
    }
    Connection link;
    try {
      link = peers.get(node);
    } catch (RuntimeException e) {
      window.release();
      batch.release();
      failure.compareAndSet(null, e);
      throw e;
    }
    try {
      link.call(Request.newBuilder().setShuffleBatch(header), batch,
          PeerLinks.SHUFFLE_TIMEOUT).whenComplete((r, e) -> {
            window.release();
            if (e != null) {
              failure.compareAndSet(null, e);
            } else {
              r.release();
            }
          });
    } catch (RuntimeException e) {
      window.release();
      failure.compareAndSet(null, e);
      throw e;
    }
  }

  /** Waits until every batch sent so far is acknowledged (or has failed). */
  void awaitAcks() throws InterruptedException {
    for (Semaphore s : inFlight) {
      s.acquire(IN_FLIGHT_PER_PEER);
      s.release(IN_FLIGHT_PER_PEER);
    }
  }

  Throwable failure() {
    return failure.get();
  }

  /**
   * The largest frame every node takes, as far as this node knows: a node's frame limit is at
   * least 1 MiB and holds a pair of max.value.bytes with its header (NodeConfig), and the nodes
   * of a cluster share max.value.bytes.
   */
  int frameBytes() {
    return Math.max(NodeConfig.MIN_MAX_FRAME, maxValueBytes + (64 << 10));
  }

  /** True once the stage failed or was aborted: nothing more may be written. */
  boolean stopping() {
    return failure.get() != null || aborted.get();
  }
}
