package org.sss.client;

import io.netty.buffer.ByteBuf;
import java.util.List;
import java.util.concurrent.Semaphore;
import java.util.concurrent.atomic.AtomicLong;
import java.util.concurrent.atomic.AtomicReference;
import org.sss.client.internal.NodeChannels;
import org.sss.core.cluster.PartitionMap;
import org.sss.core.cluster.ReplicaPlacement;
import org.sss.core.keys.PairTypes;
import org.sss.core.proto.PutBatch;
import org.sss.core.proto.Request;
import org.sss.core.transport.Buffers;
import org.sss.core.transport.PairBlock;
import org.sss.core.transport.SssException;

/**
 * Writes many pairs into a table fast: pairs are routed to their owner node, packed into one
 * buffer per node, and sent as a batch when the buffer is full ({@code batchBytes}; a pair
 * larger than that travels alone); up to
 * {@code maxInFlight} batches per node are in flight at once, and {@link #put} blocks when all
 * are (backpressure, not unbounded buffering).
 *
 * <p>A pair is durable once {@link #flush()} or {@link #close()} has returned without an
 * exception. A failed batch fails the writer: the next {@code put}, {@code flush} or
 * {@code close} throws the first error, naming the node. Not thread-safe: one writer per thread.
 */
public final class BulkWriter implements AutoCloseable {
  private final NodeChannels channels;
  private final PartitionMap partitions;
  private final String table;
  private final PairTypes types;
  private final int batchBytes;
  private final int maxInFlight;
  private final ByteBuf[] buffers;
  private final int[] counts;
  /** Pairs of each buffer sent as their partition's first copy. */
  private final int[] leads;
  private final ReplicaPlacement placement;
  /** Copies of each pair: the cluster's replication. */
  private final int copies;
  /** The membership view the writer's copies come from (null with one copy). */
  private final org.sss.core.proto.ClusterView view;
  private final org.sss.core.cluster.InSyncCopies inSync;
  private final Semaphore[] inFlight;
  private final AtomicReference<RuntimeException> failure = new AtomicReference<>();
  private final AtomicLong acknowledged = new AtomicLong();
  private long bytesWritten;

  BulkWriter(NodeChannels channels, String table, PairTypes types, int batchBytes, int maxInFlight,
             org.sss.core.proto.ClusterView view) {
    this.view = view;
    this.channels = channels;
    this.partitions = channels.spec().partitionMap();
    this.table = table;
    this.types = types;
    this.batchBytes = batchBytes;
    this.maxInFlight = maxInFlight;
    int n = channels.spec().nodeCount();
    this.buffers = new ByteBuf[n];
    this.counts = new int[n];
    this.leads = new int[n];
    this.copies = channels.spec().replication();
    this.placement = channels.spec().placement();
    this.inSync = new org.sss.core.cluster.InSyncCopies(placement);
    this.inFlight = new Semaphore[n];
    for (int i = 0; i < n; i++) {
      inFlight[i] = new Semaphore(maxInFlight);
    }
  }

  /** Adds a pair (an encoded key and a value); may block while batches are in flight. */
  public void put(byte[] key, byte[] value) {
    checkFailure();
    int partition = partitions.partitionOf(key);
    if (copies == 1) {
      append(partitions.ownerOf(partition), partition, key, value, true);
    } else {
      // every copy that counts gets the pair; the write is acknowledged when all have it
      List<Integer> holders = inSync.writeTargets(view, partition);
      for (int i = 0; i < holders.size(); i++) {
        append(holders.get(i), partition, key, value, i == 0);
      }
    }
    bytesWritten += key.length + value.length;
  }

  private void append(int node, int partition, byte[] key, byte[] value, boolean leading) {
    int keyLength = key.length + PartitionMap.PREFIX_BYTES;
    int size = PairBlock.encodedSize(keyLength, value.length);
    ByteBuf buf = buffers[node];
    if (buf != null && counts[node] > 0 && buf.writableBytes() < size) {
      // send what fits rather than grow the buffer (growing copies it)
      send(node);
      buf = null;
    }
    if (buf == null) {
      buf = buffers[node] = Buffers.allocator().directBuffer(Math.max(size, Math.min(batchBytes, MAX_INITIAL_BYTES)));
    }
    PairBlock.writeVarint(buf, keyLength);
    buf.writeShort(partition);
    buf.writeBytes(key);
    PairBlock.writeVarint(buf, value.length);
    buf.writeBytes(value);
    counts[node]++;
    if (leading) {
      leads[node]++;
    }
    if (buf.readableBytes() >= batchBytes) {
      send(node);
    }
  }

  private void send(int node) {
    ByteBuf buf = buffers[node];
    if (buf == null || counts[node] == 0) {
      return;
    }
    int n = counts[node];
    int led = leads[node];
    buffers[node] = null;
    counts[node] = 0;
    leads[node] = 0;
    Semaphore permits = inFlight[node];
    try {
      permits.acquire();
    } catch (InterruptedException e) {
      buf.release();
      Thread.currentThread().interrupt();
      throw new SssException(org.sss.core.proto.ErrorCode.INTERNAL, "interrupted while writing", e);
    }
    try {
      channels.get(node).call(Request.newBuilder().setPutBatch(
          PutBatch.newBuilder().setTable(table).setPairCount(n).setKeyType(types.key())
              .setValueType(types.value()).setReplication(copies).setViewEpoch(view == null ? 0 : view.getEpoch())), buf)
          .whenComplete((r, e) -> {
            // Record the outcome before giving the permit back: flush() returns as soon as it
            // holds every permit, and must then see this batch's failure.
            if (e != null) {
              failure.compareAndSet(null, explain(NodeChannels.unwrap(e)));
            } else {
              r.release();
              acknowledged.addAndGet(led); // a pair counts once, with its first copy's batch
            }
            permits.release();
          });
    } catch (RuntimeException e) {
      permits.release();
      buf.release();
      failure.compareAndSet(null, e);
      throw e;
    }
  }

  /**
   * A batch refused because the copies changed under the writer (a node left or joined them):
   * the writer's pairs may have reached some copies only, so it fails, saying to write again.
   */
  private RuntimeException explain(RuntimeException e) {
    boolean moved = e instanceof org.sss.core.transport.SssException s
        && (s.code() == org.sss.core.proto.ErrorCode.STALE_VIEW || s.code() == org.sss.core.proto.ErrorCode.NOT_SERVING);
    return !moved ? e : new org.sss.core.transport.SssException(((org.sss.core.transport.SssException) e).code(),
        "the table's copies changed during the bulk write (membership epoch " + view.getEpoch() + " when it began): "
            + e.getMessage() + "; the pairs written since the last flush may be on some copies only: write them again", e);
  }

  private void checkFailure() {
    RuntimeException e = failure.get();
    if (e != null) {
      throw e;
    }
  }

  /** Sends every buffered pair and waits until all are acknowledged. */
  public void flush() {
    for (int node = 0; node < buffers.length; node++) {
      send(node);
    }
    for (Semaphore s : inFlight) {
      s.acquireUninterruptibly(maxInFlight);
      s.release(maxInFlight);
    }
    checkFailure();
  }

  /** Pairs the servers have acknowledged so far. */
  public long acknowledged() {
    return acknowledged.get();
  }

  /** Key and value bytes handed to {@link #put} so far. */
  public long bytesWritten() {
    return bytesWritten;
  }

  @Override
  public void close() {
    try {
      flush();
    } finally {
      for (int i = 0; i < buffers.length; i++) {
        if (buffers[i] != null) {
          buffers[i].release();
          buffers[i] = null;
        }
      }
    }
  }

  /** Default size of one batch. */
  static final int DEFAULT_BATCH_BYTES = 1 << 20;
  /** Default batches in flight per node. */
  static final int DEFAULT_IN_FLIGHT = 4;
  /** A batch buffer starts at most this large (and grows for larger batches). */
  private static final int MAX_INITIAL_BYTES = 16 << 20;
}
