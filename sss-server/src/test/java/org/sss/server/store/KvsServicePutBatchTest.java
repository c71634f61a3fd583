package org.sss.server.store;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertThrows;

import io.netty.buffer.ByteBuf;
import io.netty.buffer.CompositeByteBuf;
import io.netty.buffer.Unpooled;
import io.netty.buffer.UnpooledByteBufAllocator;
import io.netty.handler.codec.CorruptedFrameException;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Random;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;
import org.sss.core.cluster.PartitionMap;
import org.sss.core.proto.ErrorCode;
import org.sss.core.proto.PutBatch;
import org.sss.core.proto.Request;
import org.sss.core.proto.Response;
import org.sss.core.proto.TableOptions;
import org.sss.core.transport.Frame;
import org.sss.core.transport.PairBlock;
import org.sss.kvs.NodeStore;
import org.sss.kvs.StoreException;
import org.sss.kvs.StoreTable;
import org.sss.core.keys.StoredKeys;

/** PUT_BATCH: every pair written from any kind of body, or nothing when the batch is refused. */
class KvsServicePutBatchTest {
  private static final int PARTITIONS = 8;
  private static final int MAX_VALUE = 4096;

  @TempDir
  Path dir;

  private NodeStore store;
  private StoreTable table;
  private KvsService kvs;
  private final ScanRegistry scans = new ScanRegistry();

  @BeforeEach
  void open() {
    store = NodeStore.open(dir);
    table = store.create("t", TableOptions.newBuilder().setDisableWal(true).build(), false);
    kvs = new KvsService(store, new org.sss.core.cluster.ClusterSpec(
        java.util.List.of(new org.sss.core.cluster.NodeAddress(0, "127.0.0.1", 1)), MAP, "", false), 0, MAX_VALUE);
  }

  @AfterEach
  void close() {
    scans.close();
    store.close();
  }

  private static final PartitionMap MAP = PartitionMap.roundRobin(PARTITIONS, 1);

  private static List<byte[][]> pairs(int n) {
    Random random = new Random(7);
    List<byte[][]> out = new ArrayList<>();
    int[] valueLengths = {0, 1, 127, 128, 300, MAX_VALUE};
    for (int i = 0; i < n; i++) {
      byte[] key = new byte[2 + 1 + (i % 200)];
      random.nextBytes(key);
      key[2] = (byte) i;
      int partition = MAP.partitionOf(key, 2, key.length - 2); // a key names the partition it hashes to
      key[0] = (byte) (partition >>> 8);
      key[1] = (byte) partition;
      byte[] value = new byte[valueLengths[i % valueLengths.length]];
      random.nextBytes(value);
      out.add(new byte[][] {key, value});
    }
    return out;
  }

  private static ByteBuf body(List<byte[][]> pairs, String kind) {
    ByteBuf block = Unpooled.buffer();
    for (byte[][] p : pairs) {
      PairBlock.write(block, p[0], p[1]);
    }
    switch (kind) {
      case "heap":
        return block;
      case "direct": {
        ByteBuf d = Unpooled.directBuffer(block.readableBytes() + 10);
        d.writeBytes(new byte[10]).skipBytes(10); // a body that does not start at index 0
        d.writeBytes(block);
        block.release();
        return d;
      }
      default: {
        int half = block.readableBytes() / 2;
        CompositeByteBuf c = Unpooled.compositeBuffer();
        ByteBuf first = Unpooled.directBuffer(half).writeBytes(block, half);
        ByteBuf second = Unpooled.directBuffer(block.readableBytes()).writeBytes(block);
        c.addComponents(true, first, second);
        block.release();
        return c;
      }
    }
  }

  private long put(ByteBuf body, int announced) {
    Request req = Request.newBuilder().setId(1)
        .setPutBatch(PutBatch.newBuilder().setTable("t").setPairCount(announced)).build();
    try {
      Frame<Response> answer = kvs.handle(req, body, scans, UnpooledByteBufAllocator.DEFAULT);
      answer.release();
      return answer.header().getAck().getPairs();
    } finally {
      body.release();
    }
  }

  @ParameterizedTest(name = "{0} body")
  @ValueSource(strings = {"heap", "direct", "composite"})
  void putBatch_writesEveryPair(String kind) {
    List<byte[][]> pairs = pairs(500);
    assertEquals(500, put(body(pairs, kind), 500));
    for (byte[][] p : pairs) {
      assertArrayEquals(p[1], table.get(p[0]));
    }
    assertEquals(500, table.count());
  }

  private void assertRefused(List<byte[][]> pairs, int announced, ErrorCode code) {
    StoreException e = assertThrows(StoreException.class, () -> put(body(pairs, "direct"), announced));
    assertEquals(code, e.code());
    assertEquals(0, table.count(), "a refused batch wrote something");
  }

  @Test
  void putBatch_partitionOutOfRange_writesNothing() {
    List<byte[][]> pairs = pairs(20);
    pairs.get(19)[0][1] = (byte) PARTITIONS;
    assertRefused(pairs, 20, ErrorCode.BAD_REQUEST);
  }

  @Test
  void putBatch_keyWithoutPrefix_writesNothing() {
    List<byte[][]> pairs = pairs(20);
    pairs.set(10, new byte[][] {new byte[] {0}, new byte[1]});
    assertRefused(pairs, 20, ErrorCode.BAD_REQUEST);
  }

  @Test
  void putBatch_valueTooLarge_writesNothing() {
    List<byte[][]> pairs = pairs(20);
    pairs.get(5)[1] = new byte[MAX_VALUE + 1];
    assertRefused(pairs, 20, ErrorCode.VALUE_TOO_LARGE);
  }

  @Test
  void putBatch_countMismatch_writesNothing() {
    assertRefused(pairs(20), 21, ErrorCode.BAD_REQUEST);
  }

  @Test
  void putBatch_truncatedBody_isMalformed() {
    ByteBuf body = body(pairs(20), "direct");
    body.writerIndex(body.writerIndex() - 1);
    assertThrows(CorruptedFrameException.class, () -> put(body, 20));
    assertNull(table.get(pairs(1).get(0)[0]));
  }

  private long count(Integer... partitions) {
    org.sss.core.proto.Count.Builder c = org.sss.core.proto.Count.newBuilder().setTable("t");
    for (int p : partitions) {
      c.addPartitions(p);
    }
    Frame<Response> answer = kvs.handle(Request.newBuilder().setId(2).setCount(c).build(), null, scans,
        UnpooledByteBufAllocator.DEFAULT);
    answer.release();
    return answer.header().getCount().getPairs();
  }

  /** A count per partition (what clients send, so that no request reads a whole large table) adds up. */
  @Test
  void count_perPartition_addsUpToTheWholeTable() {
    List<byte[][]> pairs = pairs(400);
    put(body(pairs, "heap"), 400);
    long[] expected = new long[PARTITIONS];
    for (byte[][] p : pairs) {
      expected[StoredKeys.partitionOf(p[0])]++;
    }
    long sum = 0;
    for (int p = 0; p < PARTITIONS; p++) {
      assertEquals(expected[p], count(p), "partition " + p);
      sum += count(p);
    }
    assertEquals(400, sum);
    assertEquals(400, count());
    assertEquals(expected[1] + expected[5], count(1, 5));
    StoreException e = assertThrows(StoreException.class, () -> count(PARTITIONS));
    assertEquals(ErrorCode.BAD_REQUEST, e.code());
    // a partition number past 2^31 (uint32 on the wire, negative as a Java int) is refused too,
    // not read as the partition its low 16 bits name
    e = assertThrows(StoreException.class, () -> count(0x8000_0000 | 1));
    assertEquals(ErrorCode.BAD_REQUEST, e.code());
    e = assertThrows(StoreException.class, () -> count(-1));
    assertEquals(ErrorCode.BAD_REQUEST, e.code());
  }
}
