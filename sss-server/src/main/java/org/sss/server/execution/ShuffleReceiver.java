package org.sss.server.execution;

import io.netty.buffer.ByteBuf;
import org.sss.core.proto.ErrorCode;
import org.sss.core.proto.ShuffleBatch;
import org.sss.core.transport.PairBlock;
import org.sss.kvs.NodeStore;
import org.sss.kvs.PackedBatch;
import org.sss.kvs.StoreException;
import org.sss.kvs.StoreTable;

/**
 * Writes a received shuffle batch into the local table in one RocksDB write. The batch's
 * packed pairs are already the tail of RocksDB's serialized write-batch records, so each pair
 * is copied once, with a two-byte record prefix, and the whole batch crosses into RocksDB in
 * one call (see {@link PackedBatch}).
 */
final class ShuffleReceiver {
  private final NodeStore store;
  private final int maxValueBytes;

  ShuffleReceiver(NodeStore store, int maxValueBytes) {
    this.store = store;
    this.maxValueBytes = maxValueBytes;
  }

  long write(ShuffleBatch batch, ByteBuf body) {
    StoreTable table = store.require(batch.getTable());
    table.checkWritable(batch.getKeyTypeValue(), batch.getValueTypeValue());
    PackedBatch b = table.newPackedBatch(body.readableBytes() + 2 * batch.getPairCount() + 64);
    ByteBuf in = body.duplicate();
    while (in.isReadable()) {
      int start = in.readerIndex();
      int keyLength = PairBlock.readVarint(in);
      checkLength(keyLength, in);
      in.skipBytes(keyLength);
      int valueLength = PairBlock.readVarint(in);
      checkLength(valueLength, in);
      in.skipBytes(valueLength);
      int length = in.readerIndex() - start;
      int at = b.reservePacked(length);
      in.getBytes(start, b.array(), at, length);
    }
    if (b.count() != batch.getPairCount()) {
      throw new StoreException(ErrorCode.BAD_REQUEST, "shuffle batch announced " + batch.getPairCount()
          + " pairs but carried " + b.count());
    }
    int n = b.count();
    b.commit();
    return n;
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
