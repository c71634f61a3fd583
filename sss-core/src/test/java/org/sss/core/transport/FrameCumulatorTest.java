package org.sss.core.transport;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertSame;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.netty.buffer.ByteBuf;
import io.netty.buffer.ByteBufAllocator;
import io.netty.buffer.ByteBufUtil;
import io.netty.buffer.PooledByteBufAllocator;
import io.netty.buffer.Unpooled;
import io.netty.channel.embedded.EmbeddedChannel;
import java.util.ArrayList;
import java.util.List;
import java.util.Random;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.sss.core.proto.PutBatch;
import org.sss.core.proto.Request;

class FrameCumulatorTest {
  private static final ByteBufAllocator POOLED = PooledByteBufAllocator.DEFAULT;
  private static LeakCheck leakCheck;

  @BeforeAll
  static void installLeakCheck() {
    leakCheck = LeakCheck.install();
  }

  @AfterAll
  static void noBufferLeaked() throws InterruptedException {
    leakCheck.assertNoLeaks();
  }

  private static byte[] wire(long id, byte[] body) {
    byte[] header = Request.newBuilder().setId(id)
        .setPutBatch(PutBatch.newBuilder().setTable("t").setPairCount(1)).build().toByteArray();
    ByteBuf b = Unpooled.buffer();
    try {
      b.writeInt(4 + header.length + body.length).writeInt(header.length).writeBytes(header).writeBytes(body);
      return ByteBufUtil.getBytes(b);
    } finally {
      b.release();
    }
  }

  @Test
  void largeFramesInSocketSizedPieces_arriveIntact_whileEarlierBodiesAreStillHeld() {
    Random random = new Random(3);
    List<byte[]> bodies = new ArrayList<>();
    ByteBuf stream = Unpooled.buffer();
    for (int i = 0; i < 6; i++) {
      byte[] body = new byte[(1 << 20) + random.nextInt(5000)];
      random.nextBytes(body);
      bodies.add(body);
      stream.writeBytes(wire(i + 1, body));
    }
    EmbeddedChannel ch = new EmbeddedChannel();
    Pipelines.addFraming(ch.pipeline(), Request.parser(), Pipelines.DEFAULT_MAX_FRAME);
    List<Frame<Request>> held = new ArrayList<>();
    try {
      while (stream.isReadable()) {
        int n = Math.min(stream.readableBytes(), 1 + random.nextInt(64 << 10));
        ByteBuf piece = POOLED.directBuffer(n);
        stream.readBytes(piece, n);
        ch.writeInbound(piece);
        for (Frame<Request> f; (f = ch.readInbound()) != null; ) {
          held.add(f); // not released yet: its memory must not move or be overwritten
        }
      }
      assertEquals(bodies.size(), held.size());
      for (int i = 0; i < held.size(); i++) {
        assertEquals(i + 1, held.get(i).header().getId());
        assertArrayEquals(bodies.get(i), ByteBufUtil.getBytes(held.get(i).body()), "body of frame " + (i + 1));
      }
    } finally {
      held.forEach(Frame::release);
      stream.release();
      ch.finishAndReleaseAll();
    }
  }

  @Test
  void cumulate_sizesTheBufferForTheWholeFrame_onceTheLengthIsKnown() {
    FrameCumulator cumulator = new FrameCumulator(FrameLimit.fixed(64 << 20));
    ByteBuf first = POOLED.directBuffer(16).writeInt(100_000).writeLong(1);
    ByteBuf second = POOLED.directBuffer(64).writeBytes(new byte[64]);
    ByteBuf c = cumulator.cumulate(POOLED, first, second);
    try {
      assertEquals(100_004 + 100_004 / 8, c.capacity()); // the frame, and an eighth more for the next read
      assertEquals(12 + 64, c.readableBytes());
      assertEquals(100_000, c.getInt(0));
    } finally {
      c.release();
    }
    assertEquals(0, second.refCnt());
  }

  /** Before the peer authenticated, an announced frame reserves nothing beyond what arrived. */
  @Test
  void cumulate_beforeAuthentication_doesNotReserveAnAnnouncedLargeFrame() {
    FrameCumulator cumulator = new FrameCumulator(FrameLimit.untilAuthenticated(64 << 20));
    ByteBuf first = POOLED.directBuffer(8).writeInt(1 << 20).writeInt(0);
    ByteBuf second = POOLED.directBuffer(64).writeBytes(new byte[64]);
    ByteBuf c = cumulator.cumulate(POOLED, first, second);
    try {
      assertTrue(c.capacity() < 4096, "reserved " + c.capacity() + " bytes");
      assertEquals(72, c.readableBytes());
    } finally {
      c.release();
    }
  }

  /**
   * A frame of a 16 MiB value (a few bytes more than 16 MiB) gets one buffer of its size once
   * its length is known, however it arrives, with room for the read that ends it: each byte is
   * copied once, not at every 4 MiB step, nor again when the next frame follows at once.
   */
  @Test
  void cumulate_presizesAFrameOfA16MiBValue_andAppendsTheRestInPlace() {
    FrameCumulator cumulator = new FrameCumulator(FrameLimit.fixed(64 << 20));
    int frame = (16 << 20) + 60;
    ByteBuf c = POOLED.directBuffer(8).writeInt(frame).writeInt(7);
    c = cumulator.cumulate(POOLED, c, POOLED.directBuffer(1024).writeBytes(new byte[1024]));
    ByteBuf sized = c;
    try {
      assertEquals(4 + frame + Pipelines.MAX_READ, sized.capacity()); // beyond a chunk already: a read's room
      for (int arrived = 1032; arrived < 4 + frame; ) {
        int n = Math.min(64 << 10, 4 + frame - arrived);
        c = cumulator.cumulate(POOLED, c, POOLED.directBuffer(n).writeBytes(new byte[n]));
        assertSame(sized, c, "moved after " + arrived + " bytes");
        arrived += n;
      }
      // the read that ends it also brings the next frame's start (frames sent back to back)
      int tail = 1000;
      int next = Pipelines.MAX_READ - tail;
      ByteBuf read = POOLED.directBuffer(Pipelines.MAX_READ).writeBytes(new byte[tail]).writeInt(frame).writeZero(next - 4);
      c = cumulator.cumulate(POOLED, c.writerIndex(c.writerIndex() - tail), read);
      assertSame(sized, c, "moved by the read that ends it");
      assertEquals(4 + frame + next, c.readableBytes());
      assertEquals(7, c.getInt(4));
      assertEquals(frame, c.getInt(4 + frame));
    } finally {
      c.release();
    }
  }

  /**
   * The room past a frame: an eighth of it, up to a read; a frame that fits in a pool chunk keeps
   * to it while the chunk leaves an eighth of a read, else gets a whole read.
   */
  @Test
  void room_isAnEighthUpToARead_andKeepsAFrameThatFitsAChunkInItWhileThatLeavesRoomEnough() {
    assertEquals(16 << 20, Buffers.CHUNK_BYTES);
    assertEquals(1000, FrameCumulator.room(8000));
    assertEquals(Pipelines.MAX_READ, FrameCumulator.room(64L << 20));
    assertEquals(Pipelines.MAX_READ, FrameCumulator.room((16L << 20) + 64), "already beyond a chunk");
    assertEquals(Pipelines.MAX_READ, FrameCumulator.room(15L << 20), "fits in the chunk with a read's room");
    assertEquals(512 << 10, FrameCumulator.room(Buffers.CHUNK_BYTES - (512 << 10)), "what the chunk leaves");
    assertEquals(Pipelines.MAX_READ, FrameCumulator.room(Buffers.CHUNK_BYTES - 100), "too little left: a read's room");
    assertEquals(Pipelines.MAX_READ, FrameCumulator.room(Buffers.CHUNK_BYTES));
  }

  @Test
  void cumulate_appendsWithinCapacity_withoutMovingTheBuffer() {
    FrameCumulator cumulator = new FrameCumulator(FrameLimit.fixed(64 << 20));
    ByteBuf first = POOLED.directBuffer(1024).writeInt(1000);
    ByteBuf retained = first.retainedSlice(0, 4); // as a frame body still being worked on
    ByteBuf c = cumulator.cumulate(POOLED, first, POOLED.directBuffer(100).writeBytes(new byte[100]));
    try {
      assertSame(first, c);
      assertEquals(104, c.readableBytes());
      assertEquals(1000, retained.getInt(0));
    } finally {
      retained.release();
      c.release();
    }
  }
}
