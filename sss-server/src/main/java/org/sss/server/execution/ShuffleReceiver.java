package org.sss.server.execution;

import io.netty.buffer.ByteBuf;
import org.sss.core.cluster.PartitionMap;
import org.sss.core.cluster.ReplicaPlacement;
import org.sss.core.proto.ErrorCode;
import org.sss.core.proto.ShuffleBatch;
import org.sss.core.transport.PairBlock;
import org.sss.kvs.NodeStore;
import org.sss.kvs.PackedBatch;
import org.sss.kvs.StoreException;
import org.sss.kvs.StoreTable;
import org.sss.core.keys.StoredKeys;

/**
 * Writes a received shuffle batch into the local table in one write. Every pair is checked
 * first; then the batch's body, already in the form the table keeps ({@link PackedBatch}), is
 * copied out of the network buffer in one piece, so a refused batch writes nothing. A batch
 * carrying a file the sender built ({@code built_file}) is instead written whole into the
 * table's ingest directory, checked against what the batch announces, and taken as one of its
 * stream's files.
 */
final class ShuffleReceiver {
  private final NodeStore store;
  private final int maxValueBytes;
  /** Where partitions' copies are: a shuffled pair must land in a copy this node holds of its table. */
  private final ReplicaPlacement placement;
  private final int self;

  ShuffleReceiver(NodeStore store, int maxValueBytes, ReplicaPlacement placement, int self) {
    this.store = store;
    this.maxValueBytes = maxValueBytes;
    this.placement = placement;
    this.self = self;
  }

  long write(ShuffleBatch batch, ByteBuf body) {
    StoreTable table = store.require(batch.getTable());
    table.checkWritable(batch.getKeyTypeValue(), batch.getValueTypeValue());
    if (batch.hasBuiltFile()) {
      return writeBuiltFile(table, batch, body);
    }
    ByteBuf in = body.duplicate();
    boolean multiValued = table.options().getMultiValued();
    int pairs = 0;
    while (in.isReadable()) {
      int keyLength = PairBlock.readVarint(in);
      checkLength(keyLength, in);
      checkHeld(table, in, keyLength);
      if (multiValued) {
        checkUniquifier(table, in, keyLength, batch.getSourceNode());
      }
      in.skipBytes(keyLength);
      int valueLength = PairBlock.readVarint(in);
      checkLength(valueLength, in);
      in.skipBytes(valueLength);
      pairs++;
    }
    if (pairs != batch.getPairCount()) {
      throw new StoreException(ErrorCode.BAD_REQUEST, "shuffle batch announced " + batch.getPairCount()
          + " pairs but carried " + pairs);
    }
    PackedBatch b = table.newPackedBatch(0, PackedBatch.stream(batch.getSourceNode(), batch.getStream()));
    int length = body.readableBytes();
    int at = b.reserveBlock(length, pairs); // before array(): reserving may replace it
    body.getBytes(body.readerIndex(), b.array(), at, length);
    b.commit();
    return pairs;
  }

  /**
   * Takes an SST file the sender built of one stream's pairs of one partition
   * ({@code PartitionFiles}): only for a table that keeps writers' streams and one value per key
   * (the file's keys are stored as they are), and only for a partition this node holds. The
   * table checks that the file holds what the batch announces.
   */
  private long writeBuiltFile(StoreTable table, ShuffleBatch batch, ByteBuf body) {
    String refused = "shuffle batch from node " + batch.getSourceNode() + " carries a built file for table '"
        + table.name() + "'";
    if (batch.getStream() == 0 || !table.keepsStreams() || table.options().getMultiValued()) {
      throw new StoreException(ErrorCode.BAD_REQUEST, refused + ", which takes none"
          + (batch.getStream() == 0 ? " without a stream" : "") + "; nothing was written");
    }
    byte[] first = batch.getBuiltFile().getFirstKey().toByteArray();
    byte[] last = batch.getBuiltFile().getLastKey().toByteArray();
    if (first.length < StoredKeys.PREFIX_BYTES || last.length < StoredKeys.PREFIX_BYTES
        || first[0] != last[0] || first[1] != last[1] || batch.getPairCount() == 0) {
      throw new StoreException(ErrorCode.BAD_REQUEST, refused + " whose keys are not of one partition;"
          + " nothing was written");
    }
    for (byte[] key : new byte[][] {first, last}) {
      if (key.length > maxValueBytes) {
        throw new StoreException(ErrorCode.VALUE_TOO_LARGE, "key of " + key.length + " bytes exceeds the limit");
      }
    }
    ByteBuf keys = io.netty.buffer.Unpooled.wrappedBuffer(first);
    checkHeld(table, keys, first.length);
    table.receiveBuiltFile(PackedBatch.stream(batch.getSourceNode(), batch.getStream()),
        body.nioBuffer(body.readerIndex(), body.readableBytes()), batch.getPairCount(), first, last,
        batch.getBuiltFile().getPairBytes());
    return batch.getPairCount();
  }

  /**
   * A pair must name a partition of this node: one stored under another would be read by no
   * task of the next stage (each scans its own partitions), and its value silently lost. The
   * partition need not be the key's hash, since a job's partitioner chooses it.
   */
  private void checkHeld(StoreTable table, ByteBuf in, int keyLength) {
    int partition = StoredKeys.partitionAt(in, in.readerIndex(), keyLength);
    int copies = Math.max(1, table.options().getReplication());
    // a table between stages keeps one copy, on the partition's leader or, while the leader is
    // out, on another of its copies (the job's view says which): any of them may receive it
    if (partition < 0 || partition >= placement.partitions()
        || !placement.holds(self, partition, copies == 1 ? placement.replication() : copies)) {
      throw new StoreException(ErrorCode.BAD_REQUEST, "shuffle batch holds a pair for partition " + partition
          + ", of which this node holds no copy of table '" + table.name() + "'; nothing was written");
    }
  }

  /**
   * A multi-valued table's stored key ends with the sender's uniquifier ({@link StoredKeys}).
   * A key without one, or with another node's, could overwrite a value written by that node
   * (two senders of one key and sequence make one stored key), and reads would strip bytes of
   * the key itself as if they were a uniquifier.
   */
  private static void checkUniquifier(StoreTable table, ByteBuf in, int keyLength, int sourceNode) {
    if (keyLength < StoredKeys.PREFIX_BYTES + StoredKeys.UNIQUIFIER_BYTES) {
      throw new StoreException(ErrorCode.BAD_REQUEST, "shuffle batch holds a key of " + keyLength
          + " bytes for multi-valued table '" + table.name() + "', shorter than a partition and a uniquifier"
          + " (" + (StoredKeys.PREFIX_BYTES + StoredKeys.UNIQUIFIER_BYTES) + " bytes); nothing was written");
    }
    int source = in.getUnsignedShort(in.readerIndex() + keyLength - StoredKeys.UNIQUIFIER_BYTES);
    if (source != sourceNode) {
      throw new StoreException(ErrorCode.BAD_REQUEST, "shuffle batch from node " + sourceNode
          + " holds a value of multi-valued table '" + table.name() + "' uniquified as node " + source
          + "'s; nothing was written");
    }
  }

  private void checkLength(int length, ByteBuf in) {
    if (length > in.readableBytes()) {
      throw new StoreException(ErrorCode.BAD_REQUEST, "truncated pair in shuffle batch");
    }
    if (length > maxValueBytes) {
      throw new StoreException(ErrorCode.VALUE_TOO_LARGE, "pair of " + length + " bytes exceeds the limit");
    }
  }
}
