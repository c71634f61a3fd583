package org.sss.server.store;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertSame;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.netty.buffer.ByteBuf;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Random;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executor;
import java.util.concurrent.Executors;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.io.TempDir;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.CsvSource;
import org.junit.jupiter.params.provider.ValueSource;
import org.sss.core.proto.ErrorCode;
import org.sss.core.proto.Response;
import org.sss.core.proto.ScanChunk;
import org.sss.core.proto.ScanOpen;
import org.sss.core.proto.TableOptions;
import org.sss.core.transport.Frame;
import org.sss.core.transport.PairBlock;
import org.sss.kvs.NodeStore;
import org.sss.kvs.StoreCursor;
import org.sss.kvs.StoreException;
import org.sss.kvs.StoreTable;
import org.sss.kvs.TableBatch;

class ScanRegistryTest {
  @TempDir
  Path dir;

  private NodeStore store;
  private StoreTable table;
  private final List<byte[][]> written = new ArrayList<>();
  private ExecutorService pool;

  @BeforeEach
  void open() {
    store = NodeStore.open(dir);
    table = store.create("t", TableOptions.getDefaultInstance(), false);
  }

  @AfterEach
  void close() {
    if (pool != null) {
      pool.shutdownNow();
    }
    store.close();
  }

  /** Writes {@code n} pairs with key and value lengths around the 1-byte varint limit and far above. */
  private void writeMixedPairs(int n) {
    int[] keyLengths = {2, 17, 127, 128, 300};
    int[] valueLengths = {0, 1, 100, 127, 128, 129, 5000, 70_000};
    Random random = new Random(42);
    try (TableBatch b = table.newBatch()) {
      for (int i = 0; i < n; i++) {
        byte[] key = new byte[keyLengths[i % keyLengths.length]];
        random.nextBytes(key);
        key[0] = (byte) (i >>> 8); // distinct, ascending keys
        key[1] = (byte) i;
        byte[] value = new byte[valueLengths[(i / keyLengths.length) % valueLengths.length]];
        random.nextBytes(value);
        b.put(key, value);
        written.add(new byte[][] {key, value});
      }
      b.commit();
    }
    written.sort((a, b) -> java.util.Arrays.compareUnsigned(a[0], b[0]));
  }

  private static ScanOpen open(int chunkBytes, long limit) {
    return ScanOpen.newBuilder().setTable("t").setChunkBytes(chunkBytes).setLimit(limit).build();
  }

  private static Response.Builder ok() {
    return Response.newBuilder().setId(7).setCode(ErrorCode.OK);
  }

  /** Reads a whole scan; checks each chunk's pair count and size bound; releases every body. */
  private static List<byte[][]> readAll(ScanRegistry scans, StoreCursor cursor, ScanOpen open,
                                        RecordingAllocator alloc) {
    List<byte[][]> out = new ArrayList<>();
    Frame<Response> f = scans.open(cursor, open, ok(), alloc);
    while (true) {
      ScanChunk chunk = f.header().getScan();
      List<byte[][]> pairs = new ArrayList<>();
      try {
        if (f.body().isReadable()) {
          assertEquals(alloc.direct(), f.body().isDirect());
        }
        int bytes = f.body().readableBytes();
        PairBlock.forEach(f.body(), (k, v) -> pairs.add(new byte[][] {k, v}));
        assertEquals(chunk.getPairCount(), pairs.size());
        assertTrue(bytes <= open.getChunkBytes() || pairs.size() == 1,
            "chunk of " + bytes + " bytes and " + pairs.size() + " pairs exceeds " + open.getChunkBytes());
      } finally {
        f.release();
      }
      out.addAll(pairs);
      if (chunk.getDone()) {
        assertEquals(0, chunk.getCursor());
        return out;
      }
      f = scans.next(chunk.getCursor(), ok(), alloc);
    }
  }

  private void assertSamePairs(List<byte[][]> expected, List<byte[][]> actual) {
    assertEquals(expected.size(), actual.size());
    for (int i = 0; i < expected.size(); i++) {
      assertArrayEquals(expected.get(i)[0], actual.get(i)[0], "key " + i);
      assertArrayEquals(expected.get(i)[1], actual.get(i)[1], "value " + i);
    }
  }

  private Executor executor(String kind) {
    return switch (kind) {
      case "none" -> null;
      case "inline" -> Runnable::run;
      default -> pool = Executors.newFixedThreadPool(2);
    };
  }

  @ParameterizedTest(name = "chunk {0} B, direct {1}, read-ahead {2}")
  @CsvSource({
      "1, true, none", "1, false, inline", "200, true, inline", "4096, true, pool", "4096, false, pool",
      "65536, true, none", "1048576, true, pool", "1048576, false, inline"})
  void scan_returnsEveryPairOnceInOrder_chunksWithinBound(int chunkBytes, boolean direct, String readAhead) {
    writeMixedPairs(200);
    RecordingAllocator alloc = new RecordingAllocator(direct);
    ScanRegistry scans = new ScanRegistry(executor(readAhead));
    List<byte[][]> read = readAll(scans, table.scan(null, null), open(chunkBytes, 0), alloc);
    assertSamePairs(written, read);
    scans.close();
    alloc.assertAllReleased();
  }

  @ParameterizedTest(name = "read-ahead {0}")
  @ValueSource(strings = {"none", "inline", "pool"})
  void scan_stopsAtLimit(String readAhead) {
    writeMixedPairs(50);
    RecordingAllocator alloc = new RecordingAllocator(true);
    ScanRegistry scans = new ScanRegistry(executor(readAhead));
    List<byte[][]> read = readAll(scans, table.scan(null, null), open(300, 13), alloc);
    assertSamePairs(written.subList(0, 13), read);
    scans.close();
    alloc.assertAllReleased();
  }

  @ParameterizedTest(name = "read-ahead {0}")
  @ValueSource(strings = {"none", "inline"})
  void close_releasesCursorAndPreparedChunk(String readAhead) {
    writeMixedPairs(50);
    RecordingAllocator alloc = new RecordingAllocator(true);
    ScanRegistry scans = new ScanRegistry(executor(readAhead));
    TrackingCursor cursor = new TrackingCursor(table.scan(null, null), -1);
    Frame<Response> first = scans.open(cursor, open(100, 0), ok(), alloc);
    long id = first.header().getScan().getCursor();
    first.release();
    assertFalse(first.header().getScan().getDone());
    scans.close(id);
    assertTrue(cursor.closed);
    alloc.assertAllReleased();
    StoreException e = assertThrows(StoreException.class, () -> scans.next(id, ok(), alloc));
    assertEquals(ErrorCode.NO_SUCH_CURSOR, e.code());
  }

  @ParameterizedTest(name = "read-ahead {0}")
  @ValueSource(strings = {"none", "inline", "pool"})
  void failureWhileReading_reachesTheNextRequest_andClosesTheScan(String readAhead) {
    writeMixedPairs(50);
    RecordingAllocator alloc = new RecordingAllocator(true);
    ScanRegistry scans = new ScanRegistry(executor(readAhead));
    TrackingCursor cursor = new TrackingCursor(table.scan(null, null), 30);
    Frame<Response> f = scans.open(cursor, open(100, 0), ok(), alloc);
    StoreException failure = null;
    long id = f.header().getScan().getCursor();
    f.release();
    while (failure == null) {
      try {
        f = scans.next(id, ok(), alloc);
        id = f.header().getScan().getCursor();
        assertFalse(f.header().getScan().getDone(), "the scan ended without reaching the failure");
        f.release();
      } catch (StoreException e) {
        failure = e;
      }
    }
    assertSame(TrackingCursor.FAILURE, failure);
    assertTrue(cursor.closed);
    long failedId = id;
    assertEquals(ErrorCode.NO_SUCH_CURSOR,
        assertThrows(StoreException.class, () -> scans.next(failedId, ok(), alloc)).code());
    alloc.assertAllReleased();
  }

  /** A cursor that fails at a given pair and records that it was closed. */
  private static final class TrackingCursor implements StoreCursor {
    static final StoreException FAILURE = new StoreException(ErrorCode.STORAGE_ERROR, "disk on fire");
    private final StoreCursor inner;
    private final int failAt;
    private int position;
    volatile boolean closed;

    TrackingCursor(StoreCursor inner, int failAt) {
      this.inner = inner;
      this.failAt = failAt;
    }

    @Override
    public boolean valid() {
      return inner.valid();
    }

    @Override
    public byte[] key() {
      return inner.key();
    }

    @Override
    public byte[] value() {
      if (position == failAt) {
        throw FAILURE;
      }
      return inner.value();
    }

    @Override
    public void next() {
      inner.next();
      position++;
    }

    @Override
    public void close() {
      closed = true;
      inner.close();
    }
  }

  @org.junit.jupiter.api.Test
  void appendPair_refusesAPairThatDoesNotFit_unlessTheBufferIsEmpty() {
    try (TableBatch b = table.newBatch()) {
      b.put(new byte[] {1}, new byte[1000]);
      b.put(new byte[] {2}, new byte[10]);
      b.commit();
    }
    RecordingAllocator alloc = new RecordingAllocator(true);
    try (StoreCursor c = table.scan(null, null)) {
      ByteBuf small = alloc.buffer(100);
      assertTrue(ScanRegistry.appendPair(small, c), "an empty buffer grows for a large pair");
      assertEquals(PairBlock.encodedSize(1, 1000), small.readableBytes());
      c.next();
      ByteBuf full = alloc.buffer(8);
      full.writeBytes(new byte[5]);
      assertFalse(ScanRegistry.appendPair(full, c));
      assertEquals(5, full.readableBytes());
      assertEquals(8, full.capacity());
      small.release();
      full.release();
    }
    alloc.assertAllReleased();
  }
}
