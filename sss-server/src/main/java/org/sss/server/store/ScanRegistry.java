package org.sss.server.store;

import io.netty.buffer.ByteBuf;
import io.netty.buffer.ByteBufAllocator;
import java.nio.ByteBuffer;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.Executor;
import java.util.concurrent.RejectedExecutionException;
import java.util.concurrent.atomic.AtomicLong;
import org.sss.core.proto.ErrorCode;
import org.sss.core.proto.Response;
import org.sss.core.proto.ScanChunk;
import org.sss.core.proto.ScanOpen;
import org.sss.core.transport.Frame;
import org.sss.core.transport.PairBlock;
import org.sss.kvs.StoreCursor;
import org.sss.kvs.StoreException;
import org.sss.core.transport.Varints;

/**
 * The open scans of one connection. A scan is pull-based flow control: the server produces one
 * chunk per request and holds only the cursor in between, so a table larger than any heap
 * streams through in bounded memory, and a slow client slows the scan rather than filling
 * buffers. Closing the connection closes its cursors (and releases their snapshots).
 *
 * <h2>Read-ahead</h2>
 * With an executor, the registry reads one chunk ahead: after answering a request it prepares
 * the scan's next chunk on the executor, so that reading the store overlaps with sending the
 * previous chunk and with the client's work on it; the next request then finds its chunk ready.
 * A scan never holds more than one prepared chunk, so the memory bound stays one chunk per
 * open scan. A failure while reading ahead is reported to the next request.
 *
 * <h2>Chunks</h2>
 * A chunk holds at most {@code chunk_bytes} of packed pairs (a single pair larger than that
 * travels alone). Pairs are copied from the store straight into the outgoing buffer, without
 * a Java array per key or value.
 */
public final class ScanRegistry implements AutoCloseable {
  /** Default and upper bound on one chunk's bytes. */
  public static final int DEFAULT_CHUNK = 1 << 20;
  public static final int MAX_CHUNK = 16 << 20;

  private static final AtomicLong NEXT_CURSOR = new AtomicLong(1);
  /** Asks a cursor for a length without copying anything (stays empty: never written). */
  private static final ByteBuffer NO_ROOM = ByteBuffer.allocateDirect(0);

  private final Map<Long, OpenScan> open = new ConcurrentHashMap<>();
  private final Executor readAhead;
  private volatile boolean closed;

  /** A registry that produces each chunk when it is asked for (no read-ahead). */
  public ScanRegistry() {
    this(null);
  }

  /** A registry that prepares each scan's next chunk on {@code readAhead} (null: none). */
  public ScanRegistry(Executor readAhead) {
    this.readAhead = readAhead;
  }

  /** A chunk produced but not yet sent. */
  private record Chunk(ByteBuf body, int pairs, boolean done) {}

  /** One scan; every field is guarded by the object's lock. */
  private static final class OpenScan {
    final long id;
    final StoreCursor cursor;
    final int chunkBytes;
    final ByteBufAllocator alloc;
    long remaining;
    /** The cursor is closed: the last chunk was produced, or reading failed. */
    boolean exhausted;
    /** Closed by the client or with the connection. */
    boolean closed;
    boolean readAheadQueued;
    Chunk ready;
    RuntimeException failure;

    OpenScan(long id, StoreCursor cursor, int chunkBytes, long limit, ByteBufAllocator alloc) {
      this.id = id;
      this.cursor = cursor;
      this.chunkBytes = chunkBytes;
      this.alloc = alloc;
      this.remaining = limit == 0 ? Long.MAX_VALUE : limit;
    }
  }

  /** Registers a new cursor and returns its first chunk. */
  public Frame<Response> open(StoreCursor cursor, ScanOpen req, Response.Builder ok, ByteBufAllocator alloc) {
    int chunk = req.getChunkBytes() == 0 ? DEFAULT_CHUNK : Math.min(req.getChunkBytes(), MAX_CHUNK);
    long id = NEXT_CURSOR.getAndIncrement();
    OpenScan scan = new OpenScan(id, cursor, Math.max(chunk, 1), req.getLimit(), alloc);
    if (closed) {
      cursor.close();
      throw new StoreException(ErrorCode.INTERNAL, "connection closing");
    }
    open.put(id, scan);
    if (closed) {
      close(id);
      throw new StoreException(ErrorCode.INTERNAL, "connection closing");
    }
    return deliver(scan, ok);
  }

  /** The next chunk of an open scan. */
  public Frame<Response> next(long id, Response.Builder ok, ByteBufAllocator alloc) {
    OpenScan scan = open.get(id);
    if (scan == null) {
      throw new StoreException(ErrorCode.NO_SUCH_CURSOR, "no open scan with cursor " + id);
    }
    return deliver(scan, ok);
  }

  /** Answers with the prepared chunk, or produces one now; then prepares the next. */
  private Frame<Response> deliver(OpenScan scan, Response.Builder ok) {
    Chunk c;
    synchronized (scan) {
      if (scan.closed) {
        throw new StoreException(ErrorCode.NO_SUCH_CURSOR, "no open scan with cursor " + scan.id);
      }
      if (scan.failure != null) {
        open.remove(scan.id);
        closeLocked(scan);
        throw scan.failure;
      }
      c = scan.ready;
      scan.ready = null;
      if (c == null) {
        try {
          c = produce(scan);
        } catch (RuntimeException e) {
          open.remove(scan.id);
          closeLocked(scan);
          throw e;
        }
      }
      if (c.done) {
        open.remove(scan.id);
        closeLocked(scan);
      }
    }
    if (!c.done) {
      scheduleReadAhead(scan);
    }
    ScanChunk.Builder sc = ScanChunk.newBuilder().setPairCount(c.pairs).setDone(c.done).setCursor(c.done ? 0 : scan.id);
    return new Frame<>(ok.setScan(sc).build(), c.body);
  }

  private void scheduleReadAhead(OpenScan scan) {
    if (readAhead == null) {
      return;
    }
    synchronized (scan) {
      if (scan.readAheadQueued || scan.closed || scan.exhausted || scan.ready != null) {
        return;
      }
      scan.readAheadQueued = true;
    }
    try {
      readAhead.execute(() -> readAhead(scan));
    } catch (RejectedExecutionException e) {
      synchronized (scan) {
        scan.readAheadQueued = false; // shutting down: the next request reads for itself
      }
    }
  }

  private void readAhead(OpenScan scan) {
    synchronized (scan) {
      scan.readAheadQueued = false;
      if (scan.closed || scan.exhausted || scan.ready != null || scan.failure != null) {
        return;
      }
      try {
        scan.ready = produce(scan);
      } catch (RuntimeException e) {
        scan.failure = e;
      }
    }
  }

  /** Reads the next chunk from the cursor; closes the cursor when it is done or fails. */
  private static Chunk produce(OpenScan scan) {
    ByteBuf out = scan.alloc.buffer(scan.chunkBytes);
    int pairs = 0;
    StoreCursor c = scan.cursor;
    try {
      while (c.valid() && scan.remaining > 0 && out.readableBytes() < scan.chunkBytes) {
        if (!appendPair(out, c)) {
          break;
        }
        c.next();
        pairs++;
        scan.remaining--;
      }
      boolean done = !c.valid() || scan.remaining == 0;
      if (done) {
        scan.exhausted = true;
        c.close();
      }
      return new Chunk(out, pairs, done);
    } catch (RuntimeException e) {
      out.release();
      scan.exhausted = true;
      c.close();
      throw e;
    }
  }

  /**
   * Appends the cursor's pair to {@code out} as {@link PairBlock} does, copying key and value
   * from the store straight into the buffer. Returns false, leaving {@code out} unchanged, when
   * the pair does not fit the buffer's capacity and the buffer already holds pairs; a pair too
   * large for an empty buffer grows it.
   */
  static boolean appendPair(ByteBuf out, StoreCursor c) {
    int start = out.writerIndex();
    int room = out.capacity() - start;
    if (room >= 2) {
      // Fast path: guess 1-byte lengths (key and value under 128 bytes), which small pairs have;
      // a longer value is read again at its place once its length is known.
      ByteBuffer nio = out.internalNioBuffer(start, room);
      int base = nio.position();
      int keyLength = c.key(window(nio, base + 1, Math.min(room - 1, 127)));
      int valueAt = 1 + keyLength;
      if (keyLength <= 127 && valueAt < room) {
        int valueRoom = room - valueAt - 1;
        int valueLength = c.value(window(nio, base + valueAt + 1, Math.min(valueRoom, 127)));
        int lengthBytes = Varints.size(valueLength);
        if (valueAt + lengthBytes + valueLength <= room) {
          if (lengthBytes > 1) {
            c.value(window(nio, base + valueAt + lengthBytes, valueLength));
          }
          out.setByte(start, keyLength);
          out.writerIndex(start + valueAt);
          PairBlock.writeVarint(out, valueLength);
          out.writerIndex(start + valueAt + lengthBytes + valueLength);
          return true;
        }
      }
    }
    int keyLength = c.key(NO_ROOM);
    int valueLength = c.value(NO_ROOM);
    int size = PairBlock.encodedSize(keyLength, valueLength);
    if (size > room && start > out.readerIndex()) {
      return false;
    }
    out.ensureWritable(size);
    ByteBuffer nio = out.internalNioBuffer(start, size);
    int base = nio.position();
    PairBlock.writeVarint(out, keyLength);
    int keyAt = out.writerIndex() - start;
    c.key(window(nio, base + keyAt, keyLength));
    out.writerIndex(start + keyAt + keyLength);
    PairBlock.writeVarint(out, valueLength);
    int valueAt = out.writerIndex() - start;
    c.value(window(nio, base + valueAt, valueLength));
    out.writerIndex(start + valueAt + valueLength);
    return true;
  }

  private static ByteBuffer window(ByteBuffer nio, int position, int length) {
    nio.limit(position + length);
    nio.position(position);
    return nio;
  }

  public void close(long id) {
    OpenScan scan = open.remove(id);
    if (scan != null) {
      synchronized (scan) {
        closeLocked(scan);
      }
    }
  }

  private static void closeLocked(OpenScan scan) {
    scan.closed = true;
    if (!scan.exhausted) {
      scan.exhausted = true;
      scan.cursor.close();
    }
    if (scan.ready != null) {
      scan.ready.body.release();
      scan.ready = null;
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
