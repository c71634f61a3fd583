package org.sss.server.store;

import io.netty.buffer.ByteBuf;
import io.netty.buffer.ByteBufAllocator;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.atomic.AtomicLong;
import org.sss.core.proto.ErrorCode;
import org.sss.core.proto.Response;
import org.sss.core.proto.ScanChunk;
import org.sss.core.proto.ScanOpen;
import org.sss.core.transport.Frame;
import org.sss.core.transport.PairBlock;
import org.sss.kvs.StoreCursor;
import org.sss.kvs.StoreException;

/**
 * The open scans of one connection. A scan is pull-based flow control: the server produces one
 * chunk per request and holds only the cursor in between, so a table larger than any heap
 * streams through in bounded memory, and a slow client slows the scan rather than filling
 * buffers. Closing the connection closes its cursors (and releases their snapshots).
 */
public final class ScanRegistry implements AutoCloseable {
  /** Default and upper bound on one chunk's bytes. */
  public static final int DEFAULT_CHUNK = 1 << 20;
  public static final int MAX_CHUNK = 16 << 20;

  private static final AtomicLong NEXT_CURSOR = new AtomicLong(1);
  private final Map<Long, OpenScan> open = new ConcurrentHashMap<>();
  private volatile boolean closed;

  private static final class OpenScan {
    final StoreCursor cursor;
    final int chunkBytes;
    long remaining;

    OpenScan(StoreCursor cursor, int chunkBytes, long limit) {
      this.cursor = cursor;
      this.chunkBytes = chunkBytes;
      this.remaining = limit == 0 ? Long.MAX_VALUE : limit;
    }
  }

  /** Registers a new cursor and returns its first chunk. */
  public Frame<Response> open(StoreCursor cursor, ScanOpen req, Response.Builder ok, ByteBufAllocator alloc) {
    int chunk = req.getChunkBytes() == 0 ? DEFAULT_CHUNK : Math.min(req.getChunkBytes(), MAX_CHUNK);
    long id = NEXT_CURSOR.getAndIncrement();
    OpenScan scan = new OpenScan(cursor, Math.max(chunk, 1), req.getLimit());
    if (closed) {
      cursor.close();
      throw new StoreException(ErrorCode.INTERNAL, "connection closing");
    }
    open.put(id, scan);
    return chunk(id, scan, ok, alloc);
  }

  /** The next chunk of an open scan. */
  public Frame<Response> next(long id, Response.Builder ok, ByteBufAllocator alloc) {
    OpenScan scan = open.get(id);
    if (scan == null) {
      throw new StoreException(ErrorCode.NO_SUCH_CURSOR, "no open scan with cursor " + id);
    }
    synchronized (scan) {
      return chunk(id, scan, ok, alloc);
    }
  }

  private Frame<Response> chunk(long id, OpenScan scan, Response.Builder ok, ByteBufAllocator alloc) {
    ByteBuf out = alloc.buffer(Math.min(scan.chunkBytes + 64, 1 << 16));
    int pairs = 0;
    try {
      StoreCursor c = scan.cursor;
      while (c.valid() && scan.remaining > 0 && out.readableBytes() < scan.chunkBytes) {
        PairBlock.write(out, c.key(), c.value());
        c.next();
        pairs++;
        scan.remaining--;
      }
      boolean done = !c.valid() || scan.remaining == 0;
      if (done) {
        close(id);
      }
      ScanChunk.Builder sc = ScanChunk.newBuilder().setPairCount(pairs).setDone(done).setCursor(done ? 0 : id);
      return new Frame<>(ok.setScan(sc).build(), out);
    } catch (RuntimeException e) {
      out.release();
      close(id);
      throw e;
    }
  }

  public void close(long id) {
    OpenScan scan = open.remove(id);
    if (scan != null) {
      synchronized (scan) {
        scan.cursor.close();
      }
    }
  }

  @Override
  public void close() {
    closed = true;
    for (Long id : open.keySet()) {
      close(id);
    }
  }
}
