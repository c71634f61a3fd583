package org.sss.server.execution;

import io.netty.buffer.ByteBuf;
import java.util.List;
import org.sss.core.api.Partitioner;
import org.sss.core.cluster.PartitionMap;
import org.sss.core.cluster.ReplicaPlacement;
import org.sss.core.keys.StoredKeys;
import org.sss.core.transport.Buffers;
import org.sss.core.transport.PairBlock;
import org.sss.kvs.PackedBatch;
import org.sss.kvs.PartitionFiles;

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
  /**
   * Whether the stream's pairs are built into SST files here, once for every copy, and sent
   * whole ({@link PartitionFiles}): for an output of several copies that keeps writers' streams
   * and one value per key (its stored keys are the files' keys as they are), over no more
   * partitions than a writer keeps files open.
   */
  private final boolean buildsFiles;
  /** The stream's files being built; null before its first pair, and once it went to pairs for good. */
  private PartitionFiles files;
  /** Whether the stream's pairs go as pairs: it broke, or it ended without a new stream. */
  private boolean sendsPairs;
  /** A pair's stored key, for {@link #files}. */
  private byte[] storedKey = new byte[64];
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
    this.buildsFiles = copies > 1 && !shuffle.multiValued && shuffle.localTable.keepsStreams()
        && PartitionFiles.worthBuilding(map.partitions());
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
    if (buildsFiles && !sendsPairs && addToFile(partition, key, value, storedLength)) {
      return;
    }
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
   * Adds the pair to its partition's file; false when it cannot follow the partition's last
   * pair, after which every file built is sent and the stream's pairs go as pairs (a receiver
   * takes the first as the stream's break, so the files land before them).
   */
  private boolean addToFile(int partition, byte[] key, byte[] value, int storedLength) throws InterruptedException {
    if (files == null) {
      // a receiver takes frames of a pair's bytes and a batch header at least (NodeConfig)
      files = new PartitionFiles(shuffle.localTable, PartitionFiles.maxFileBytesFor(shuffle.frameBytes()));
    }
    if (storedKey.length < storedLength) {
      storedKey = new byte[Math.max(storedLength, storedKey.length * 2)];
    }
    StoredKeys.writePrefix(storedKey, 0, partition);
    System.arraycopy(key, 0, storedKey, StoredKeys.PREFIX_BYTES, key.length);
    if (files.add(partition, storedKey, storedLength, value)) {
      for (PartitionFiles.BuiltFile f = files.takeFinished(); f != null; f = files.takeFinished()) {
        ship(f);
      }
      return true;
    }
    shipFiles();
    sendsPairs = true;
    return false;
  }

  /** Sends every file the stream has built, and builds no more in it. */
  private void shipFiles() throws InterruptedException {
    if (files == null) {
      return;
    }
    PartitionFiles built = files;
    files = null;
    List<PartitionFiles.BuiltFile> finished;
    try {
      finished = built.finishAll();
    } finally {
      built.close();
    }
    for (int i = 0; i < finished.size(); i++) {
      try {
        ship(finished.get(i));
      } catch (InterruptedException | RuntimeException e) {
        for (int j = i + 1; j < finished.size(); j++) {
          finished.get(j).close();
        }
        throw e;
      }
    }
  }

  /**
   * Sends a built file to every other copy of its partition, and keeps it as this node's copy
   * when this node holds one: read once, its bytes shared by every send.
   */
  private void ship(PartitionFiles.BuiltFile file) throws InterruptedException {
    try (file) {
      int[] nodes = shuffle.targets[file.partition()];
      boolean kept = false;
      ByteBuf body = null;
      try {
        for (int node : nodes) {
          if (node == shuffle.self) {
            kept = true;
            continue;
          }
          if (body == null) {
            int size = Math.toIntExact(file.size());
            if (size + 2L * file.lastKey().length + (4 << 10) > shuffle.frameBytes()) {
              throw new IllegalStateException("a built file of " + size + " bytes would not fit in a frame of "
                  + shuffle.frameBytes() + " bytes; nothing was sent");
            }
            body = Buffers.allocator().directBuffer(size, size);
            file.readAll(body.nioBuffer(0, size));
            body.writerIndex(size);
          }
          shuffle.sendFile(node, stream, file, body.retainedDuplicate());
        }
      } finally {
        if (body != null) {
          body.release();
        }
      }
      if (kept) {
        file.keep(PackedBatch.stream(shuffle.self, stream));
      }
      shuffle.pairsInBuiltFiles.addAndGet(file.pairs());
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
      sendsPairs = false;
    }
  }

  /** Writes and sends everything buffered. Acknowledgements are awaited by the stage. */
  void finish() throws InterruptedException {
    boolean ok = false;
    try {
      shipFiles();
      sendsPairs = true; // a pair after the end (without a new stream) must follow the files: as a pair
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
    if (files != null) {
      files.close();
      files = null;
    }
    for (int node = 0; node < buffers.length; node++) {
      if (buffers[node] != null) {
        buffers[node].release();
        buffers[node] = null;
      }
    }
  }
}
