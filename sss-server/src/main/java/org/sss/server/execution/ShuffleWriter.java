package org.sss.server.execution;

import io.netty.buffer.ByteBuf;
import org.sss.core.api.Partitioner;
import org.sss.core.cluster.PartitionMap;
import org.sss.core.cluster.ReplicaPlacement;
import org.sss.core.keys.StoredKeys;
import org.sss.core.transport.Buffers;
import org.sss.core.transport.PairBlock;
import org.sss.kvs.PackedBatch;

/**
 * One task's side of the shuffle: routes each emitted (encoded) pair to the owner of its
 * partition, into a local write batch or a per-destination send buffer. Not thread-safe: one
 * per task.
 *
 * <p>Stored keys are laid out as {@link StoredKeys} draws them; those of a multi-valued output
 * carry this node as the source of the uniquifier.
 */
final class ShuffleWriter implements PairWriter {
  private static final long SEQUENCE_BLOCK = 1 << 20;

  private final StageShuffle shuffle;
  private final Partitioner partitioner;
  private final PartitionMap map;
  /** Where the output's copies go: every node holding a copy of the pair's partition. */
  private final ReplicaPlacement placement;
  /** Copies of each pair the output table keeps (a job's output: the cluster's replication; between stages: 1). */
  private final int copies;
  /** This writer's number among the stage's writers on this node: its batches form one stream. */
  private int stream;
  /** Bytes of pairs written since the stream began. */
  private long streamBytes;
  /**
   * Bytes a stream holds at least before a new task begins another: a stream per tiny task (a
   * job over thousands of small files) would leave a file per task and partition on every
   * node. Tasks that share a stream share its files, whose key ranges may then overlap others'.
   */
  static final long MIN_STREAM_BYTES = 8L << 20;
  private final ByteBuf[] buffers;
  private final int[] counts;
  private PackedBatch local;
  private final byte[] uniquifier = new byte[StoredKeys.UNIQUIFIER_BYTES];
  private long nextSequence;
  private long sequenceLimit;

  ShuffleWriter(StageShuffle shuffle, Partitioner partitioner) {
    this.shuffle = shuffle;
    this.partitioner = partitioner;
    this.map = shuffle.map;
    this.placement = shuffle.placement;
    this.copies = Math.max(1, shuffle.localTable.options().getReplication());
    this.buffers = new ByteBuf[map.nodes()];
    this.counts = new int[map.nodes()];
    this.stream = shuffle.newStream();
  }

  /** Writes one pair; may block while the destination's send window is full. */
  @Override
  public void write(byte[] key, byte[] value) throws InterruptedException {
    if (shuffle.stopping()) {
      throw new StageAborted(); // a failed or aborted stage writes nothing more
    }
    boolean mv = shuffle.multiValued;
    int storedLength = StoredKeys.storedLength(key.length, mv);
    checkSize("key", storedLength);
    checkSize("value", value.length);
    int partition = partitioner.partition(key, map, shuffle.self);
    if (partition < 0 || partition >= map.partitions()) {
      throw new IllegalArgumentException("partitioner returned partition " + partition
          + " outside [0, " + map.partitions() + ")");
    }
    streamBytes += key.length + value.length;
    shuffle.pairsShuffled.incrementAndGet();
    shuffle.bytesShuffled.addAndGet(key.length + value.length);
    // one uniquifier per pair, so that every copy of the output stores the same key
    long sequence = mv ? sequence() : 0;
    if (copies == 1) {
      writeTo(shuffle.owners[partition], partition, key, value, storedLength, sequence);
      return;
    }
    for (int node : shuffle.targets[partition]) {
      writeTo(node, partition, key, value, storedLength, sequence);
    }
  }

  private void writeTo(int node, int partition, byte[] key, byte[] value, int storedLength, long sequence)
      throws InterruptedException {
    boolean mv = shuffle.multiValued;
    if (node == shuffle.self) {
      if (local == null) {
        local = shuffle.localTable.newPackedBatch(StageShuffle.BATCH_BYTES + (64 << 10),
            PackedBatch.stream(shuffle.self, stream));
      }
      int suffixLength = 0;
      if (mv) {
        StoredKeys.writeUniquifier(uniquifier, 0, shuffle.self, sequence);
        suffixLength = StoredKeys.UNIQUIFIER_BYTES;
      }
      local.put(partition, key, uniquifier, suffixLength, value);
      if (local.bytes() >= StageShuffle.BATCH_BYTES) {
        local.commit();
      }
      return;
    }
    ByteBuf buf = buffers[node];
    int pairBytes = storedLength + value.length + 10;
    if (buf != null && pairBytes > buf.writableBytes() && buf.readableBytes() + pairBytes > StageShuffle.BATCH_BYTES) {
      sendBuffer(node); // a large pair starts a batch of its own rather than grow this one
      buf = null;
    }
    if (buf == null) {
      // sized once for a pair over the batch size: growing a buffer to it copies it several times
      buf = buffers[node] = Buffers.allocator().directBuffer(Math.max(64 << 10, pairBytes));
    }
    PairBlock.writeVarint(buf, storedLength);
    StoredKeys.writeStored(buf, partition, key, mv, shuffle.self, sequence);
    PairBlock.writeVarint(buf, value.length);
    buf.writeBytes(value);
    counts[node]++;
    if (buf.readableBytes() >= StageShuffle.BATCH_BYTES) {
      sendBuffer(node);
    }
  }

  /**
   * The receiving node refuses a stored key or value over its limit; one that this node owns
   * must not slip through (nor could it be read back), so the same limit holds for both.
   */
  private void checkSize(String what, int storedBytes) {
    if (storedBytes > shuffle.maxValueBytes) {
      throw new IllegalArgumentException("an emitted " + what + " of " + storedBytes + " bytes as stored exceeds the"
          + " limit of " + shuffle.maxValueBytes + " bytes (max.value.bytes)");
    }
  }

  /** Sequence numbers are reserved in blocks so that tasks do not contend on one counter. */
  private long sequence() {
    if (nextSequence == sequenceLimit) {
      nextSequence = shuffle.sequence.getAndAdd(SEQUENCE_BLOCK);
      sequenceLimit = nextSequence + SEQUENCE_BLOCK;
    }
    return nextSequence++;
  }

  private void commitLocal() {
    if (local != null) {
      local.commit();
    }
  }

  private void sendBuffer(int node) throws InterruptedException {
    ByteBuf buf = buffers[node];
    int n = counts[node];
    buffers[node] = null;
    counts[node] = 0;
    if (buf != null && n > 0) {
      shuffle.send(node, stream, buf, n);
    } else if (buf != null) {
      buf.release();
    }
  }

  /**
   * Begins a new stream for the next task's pairs, when the output keeps writers' streams apart
   * ({@code StoreTable.keepsStreams}) and this one holds {@link #MIN_STREAM_BYTES}: a task's
   * keys are usually a range of their own (a split's offsets), a runner's several tasks together
   * are not. Sends what is buffered first, so that no batch mixes two streams.
   */
  void startStream() throws InterruptedException {
    if (streamBytes >= MIN_STREAM_BYTES && shuffle.localTable.keepsStreams()) {
      finish();
      local = null;
      stream = shuffle.newStream();
      streamBytes = 0;
    }
  }

  /** Writes and sends everything buffered. Acknowledgements are awaited by the stage. */
  void finish() throws InterruptedException {
    boolean ok = false;
    try {
      commitLocal();
      for (int node = 0; node < buffers.length; node++) {
        sendBuffer(node);
      }
      ok = true;
    } finally {
      if (!ok) {
        discard(); // a table dropped meanwhile (the job was aborted): give the buffers back
      }
    }
  }

  /** Drops buffered pairs after a failure. */
  void discard() {
    local = null;
    for (int node = 0; node < buffers.length; node++) {
      if (buffers[node] != null) {
        buffers[node].release();
        buffers[node] = null;
      }
    }
  }
}
