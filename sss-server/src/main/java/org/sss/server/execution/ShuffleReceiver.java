package org.sss.server.execution;

import io.netty.buffer.ByteBuf;
import java.nio.ByteBuffer;
import org.sss.core.proto.ErrorCode;
import org.sss.core.proto.ShuffleBatch;
import org.sss.core.transport.PairBlock;
import org.sss.kvs.NodeStore;
import org.sss.kvs.StoreException;
import org.sss.kvs.StoreTable;

/**
 * Writes a received shuffle batch into the local table in one RocksDB write. When the batch
 * arrived in direct memory (Netty's default), keys and values go from the socket buffer into
 * the write batch without being copied onto the Java heap.
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
    int n = 0;
    try (StoreTable.Batch b = table.newBatch()) {
      ByteBuf in = body.duplicate();
      boolean direct = in.isDirect() && in.nioBufferCount() == 1;
      while (in.isReadable()) {
        int keyLength = PairBlock.readVarint(in);
        checkLength(keyLength, in);
        int keyAt = in.readerIndex();
        in.skipBytes(keyLength);
        int valueLength = PairBlock.readVarint(in);
        checkLength(valueLength, in);
        int valueAt = in.readerIndex();
        in.skipBytes(valueLength);
        if (direct) {
          ByteBuffer k = in.nioBuffer(keyAt, keyLength);
          ByteBuffer v = in.nioBuffer(valueAt, valueLength);
          b.put(k, v);
        } else {
          byte[] k = new byte[keyLength];
          byte[] v = new byte[valueLength];
          in.getBytes(keyAt, k);
          in.getBytes(valueAt, v);
          b.put(k, v);
        }
        n++;
      }
      if (n != batch.getPairCount()) {
        throw new StoreException(ErrorCode.BAD_REQUEST, "shuffle batch announced " + batch.getPairCount()
            + " pairs but carried " + n);
      }
      b.commit();
    }
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
