package org.sss.core.transport;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.netty.buffer.ByteBuf;
import io.netty.buffer.ByteBufUtil;
import io.netty.buffer.Unpooled;
import io.netty.channel.embedded.EmbeddedChannel;
import io.netty.handler.codec.CorruptedFrameException;
import io.netty.handler.codec.TooLongFrameException;
import java.util.Random;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.sss.core.proto.Get;
import org.sss.core.proto.PutBatch;
import org.sss.core.proto.Request;
import com.google.protobuf.ByteString;

class FrameCodecTest {
  private static final int MAX_FRAME = 64 * 1024;

  private static LeakCheck leakCheck;

  @BeforeAll
  static void installLeakCheck() {
    leakCheck = LeakCheck.install();
  }

  @AfterAll
  static void noBufferLeaked() throws InterruptedException {
    leakCheck.assertNoLeaks();
  }

  private EmbeddedChannel encoder;
  private EmbeddedChannel decoder;

  private static EmbeddedChannel channel(int maxFrame) {
    EmbeddedChannel ch = new EmbeddedChannel();
    Pipelines.addFraming(ch.pipeline(), Request.parser(), maxFrame);
    return ch;
  }

  @AfterEach
  void closeChannels() {
    if (encoder != null) {
      assertFalse(encoder.finishAndReleaseAll(), "encoder channel left messages behind");
    }
    if (decoder != null) {
      decoder.finishAndReleaseAll();
    }
  }

  private static Request putHeader(long id, int pairs) {
    return Request.newBuilder().setId(id)
        .setPutBatch(PutBatch.newBuilder().setTable("words").setPairCount(pairs)).build();
  }

  /** Encodes a frame and returns its wire bytes. Takes ownership of the frame's body. */
  private byte[] encode(Frame<Request> frame) {
    if (encoder == null) {
      encoder = channel(Pipelines.DEFAULT_MAX_FRAME);
    }
    assertTrue(encoder.writeOutbound(frame));
    ByteBuf wire = Unpooled.buffer();
    try {
      for (ByteBuf part; (part = encoder.readOutbound()) != null; ) {
        wire.writeBytes(part);
        part.release();
        assertEquals(0, part.refCnt(), "encoder passed on a buffer with extra references");
      }
      return ByteBufUtil.getBytes(wire);
    } finally {
      wire.release();
    }
  }

  private static byte[] body(int pairs, int valueSize, long seed) {
    Random rnd = new Random(seed);
    ByteBuf buf = Unpooled.buffer();
    try {
      for (int i = 0; i < pairs; i++) {
        byte[] v = new byte[valueSize];
        rnd.nextBytes(v);
        PairBlock.write(buf, ("key-" + i).getBytes(), v);
      }
      return ByteBufUtil.getBytes(buf);
    } finally {
      buf.release();
    }
  }

  private static byte[] raw(int frameLength, int headerLength, byte[] rest) {
    ByteBuf buf = Unpooled.buffer();
    try {
      buf.writeInt(frameLength).writeInt(headerLength).writeBytes(rest);
      return ByteBufUtil.getBytes(buf);
    } finally {
      buf.release();
    }
  }

  @Test
  void encode_writesLengthsHeaderAndBody() {
    Request header = putHeader(7, 3);
    byte[] body = body(3, 10, 1);
    byte[] wire = encode(new Frame<>(header, Unpooled.wrappedBuffer(body)));
    byte[] h = header.toByteArray();
    ByteBuf in = Unpooled.wrappedBuffer(wire);
    assertEquals(4 + h.length + body.length, in.readInt(), "frame length counts what follows it");
    assertEquals(h.length, in.readInt());
    byte[] readHeader = new byte[h.length];
    in.readBytes(readHeader);
    assertArrayEquals(h, readHeader);
    assertArrayEquals(body, ByteBufUtil.getBytes(in));
    assertTrue(in.release());
  }

  @Test
  void decode_frameFedOneByteAtATimeComesOutOnlyAtLastByte() {
    Request header = putHeader(42, 20);
    byte[] body = body(20, 37, 2);
    byte[] wire = encode(new Frame<>(header, Unpooled.wrappedBuffer(body)));

    decoder = channel(MAX_FRAME);
    for (int i = 0; i < wire.length - 1; i++) {
      assertFalse(decoder.writeInbound(Unpooled.wrappedBuffer(new byte[] {wire[i]})), "frame out early at byte " + i);
      assertNull(decoder.readInbound());
    }
    assertTrue(decoder.writeInbound(Unpooled.wrappedBuffer(new byte[] {wire[wire.length - 1]})));
    Frame<Request> frame = decoder.readInbound();
    try {
      assertEquals(header, frame.header());
      assertArrayEquals(body, ByteBufUtil.getBytes(frame.body()));
    } finally {
      frame.release();
    }
    assertEquals(0, frame.body().refCnt(), "the body is released with the frame");
    assertNull(decoder.readInbound(), "exactly one frame");
  }

  @Test
  void decode_frameWithoutBodyHasEmptyBody() {
    Request header = Request.newBuilder().setId(1)
        .setGet(Get.newBuilder().setTable("t").setKey(ByteString.copyFrom(new byte[] {0, 1, 2}))).build();
    byte[] wire = encode(Frame.of(header));
    assertEquals(8 + header.getSerializedSize(), wire.length);

    decoder = channel(MAX_FRAME);
    assertTrue(decoder.writeInbound(Unpooled.wrappedBuffer(wire)));
    Frame<Request> frame = decoder.readInbound();
    assertEquals(header, frame.header());
    assertFalse(frame.body().isReadable());
    frame.release();
  }

  @Test
  void decode_emptyHeaderParsesAsDefaultMessage() {
    byte[] wire = encode(Frame.of(Request.getDefaultInstance()));
    assertArrayEquals(new byte[] {0, 0, 0, 4, 0, 0, 0, 0}, wire);
    decoder = channel(MAX_FRAME);
    assertTrue(decoder.writeInbound(Unpooled.wrappedBuffer(wire)));
    Frame<Request> frame = decoder.readInbound();
    assertEquals(Request.getDefaultInstance(), frame.header());
    frame.release();
  }

  @Test
  void decode_severalFramesInOneBufferComeOutInOrder() {
    byte[] a = encode(new Frame<>(putHeader(1, 1), Unpooled.wrappedBuffer(body(1, 5, 3))));
    byte[] b = encode(Frame.of(putHeader(2, 0)));
    byte[] c = encode(new Frame<>(putHeader(3, 2), Unpooled.wrappedBuffer(body(2, 500, 4))));
    ByteBuf all = Unpooled.wrappedBuffer(a, b, c);

    decoder = channel(MAX_FRAME);
    assertTrue(decoder.writeInbound(all));
    for (long id = 1; id <= 3; id++) {
      Frame<Request> f = decoder.readInbound();
      assertEquals(id, f.header().getId());
      f.release();
    }
    assertNull(decoder.readInbound());
  }

  @Test
  void decode_frameOverMaxFrameThrowsTooLongFrame() {
    byte[] wire = encode(new Frame<>(putHeader(9, 100), Unpooled.wrappedBuffer(body(100, 1000, 5))));
    assertTrue(wire.length > MAX_FRAME);
    decoder = channel(MAX_FRAME);
    // fail fast: the length field alone is enough to refuse the frame
    assertThrows(TooLongFrameException.class,
        () -> decoder.writeInbound(Unpooled.wrappedBuffer(wire, 0, 4)));
    assertNull(decoder.readInbound());
  }

  @Test
  void decode_maxFrameBoundsTheWholeFrameIncludingLengthField() {
    byte[] wire = encode(new Frame<>(putHeader(9, 10), Unpooled.wrappedBuffer(body(10, 100, 6))));

    decoder = channel(wire.length);
    assertTrue(decoder.writeInbound(Unpooled.wrappedBuffer(wire)));
    Frame<Request> f = decoder.readInbound();
    assertEquals(9, f.header().getId());
    f.release();
    decoder.finishAndReleaseAll();

    decoder = channel(wire.length - 1);
    assertThrows(TooLongFrameException.class, () -> decoder.writeInbound(Unpooled.wrappedBuffer(wire)));
    assertNull(decoder.readInbound());
  }

  @Test
  void decode_headerLengthLargerThanFrameThrowsCorrupted() {
    decoder = channel(MAX_FRAME);
    byte[] wire = raw(4 + 4, 100, new byte[] {1, 2, 3, 4});
    CorruptedFrameException e = assertThrows(CorruptedFrameException.class,
        () -> decoder.writeInbound(Unpooled.wrappedBuffer(wire)));
    assertTrue(e.getMessage().contains("100"), e.getMessage());
    assertNull(decoder.readInbound());
  }

  @Test
  void decode_negativeHeaderLengthThrowsCorrupted() {
    decoder = channel(MAX_FRAME);
    byte[] wire = raw(4 + 4, -1, new byte[] {1, 2, 3, 4});
    assertThrows(CorruptedFrameException.class, () -> decoder.writeInbound(Unpooled.wrappedBuffer(wire)));
  }

  @Test
  void decode_frameTooShortForHeaderLengthThrowsCorrupted() {
    decoder = channel(MAX_FRAME);
    ByteBuf wire = Unpooled.buffer().writeInt(2).writeShort(0);
    assertThrows(CorruptedFrameException.class, () -> decoder.writeInbound(wire));
  }

  @Test
  void decode_garbageHeaderThrowsCorrupted() {
    byte[][] garbage = {
        {0, 0, 0},                               // field number 0
        {(byte) 0xFF, (byte) 0xFF, (byte) 0xFF}, // tag varint cut short
        {0x0A, 0x10, 1, 2},                      // length-delimited field longer than the header
        {0x0F},                                  // wire type 7 does not exist
    };
    for (byte[] g : garbage) {
      EmbeddedChannel ch = channel(MAX_FRAME);
      try {
        byte[] wire = raw(4 + g.length + 2, g.length, concat(g, new byte[] {5, 5}));
        CorruptedFrameException e = assertThrows(CorruptedFrameException.class,
            () -> ch.writeInbound(Unpooled.wrappedBuffer(wire)), ByteBufUtil.hexDump(g));
        assertTrue(e.getMessage().contains("unparseable header"), e.getMessage());
        assertNull(ch.readInbound());
      } finally {
        ch.finishAndReleaseAll();
      }
    }
  }

  @Test
  void decode_corruptFrameReleasesItsBuffer() {
    decoder = channel(MAX_FRAME);
    ByteBuf wire = Unpooled.wrappedBuffer(raw(4 + 4, 100, new byte[] {1, 2, 3, 4}));
    assertThrows(CorruptedFrameException.class, () -> decoder.writeInbound(wire));
    assertEquals(0, wire.refCnt());
  }

  private static byte[] concat(byte[] a, byte[] b) {
    byte[] out = java.util.Arrays.copyOf(a, a.length + b.length);
    System.arraycopy(b, 0, out, a.length, b.length);
    return out;
  }
}
