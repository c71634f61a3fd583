package org.sss.core.transport;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.netty.buffer.ByteBuf;
import io.netty.buffer.ByteBufAllocator;
import io.netty.buffer.Unpooled;
import io.netty.handler.codec.CorruptedFrameException;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.Random;
import java.util.function.Consumer;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;

class PairBlockTest {
  private static final int MIB = 1 << 20;

  private static LeakCheck leakCheck;

  @BeforeAll
  static void installLeakCheck() {
    leakCheck = LeakCheck.install();
  }

  @AfterAll
  static void noBufferLeaked() throws InterruptedException {
    leakCheck.assertNoLeaks();
  }

  /** Runs {@code body} with a fresh pooled buffer and always releases it. */
  private static void withBuffer(Consumer<ByteBuf> body) {
    ByteBuf buf = ByteBufAllocator.DEFAULT.buffer();
    try {
      body.accept(buf);
    } finally {
      assertTrue(buf.release(), "the test held the only reference");
    }
  }

  private static ByteBuf wrap(int... bytes) {
    ByteBuf buf = Unpooled.buffer(bytes.length);
    for (int b : bytes) {
      buf.writeByte(b);
    }
    return buf;
  }

  private static List<byte[][]> readAll(ByteBuf buf) {
    List<byte[][]> out = new ArrayList<>();
    int n = PairBlock.forEach(buf, (k, v) -> out.add(new byte[][] {k, v}));
    assertEquals(out.size(), n);
    return out;
  }

  @Test
  void forEach_roundTripsPairsIncludingEmptyKeysAndValues() {
    List<byte[][]> pairs = List.of(
        new byte[][] {new byte[0], new byte[0]},
        new byte[][] {new byte[0], {1, 2, 3}},
        new byte[][] {{0, (byte) 0xFF}, new byte[0]},
        new byte[][] {"key".getBytes(), "value".getBytes()});
    withBuffer(buf -> {
      for (byte[][] p : pairs) {
        PairBlock.write(buf, p[0], p[1]);
      }
      List<byte[][]> read = readAll(buf);
      assertEquals(pairs.size(), read.size());
      for (int i = 0; i < pairs.size(); i++) {
        assertArrayEquals(pairs.get(i)[0], read.get(i)[0], "key " + i);
        assertArrayEquals(pairs.get(i)[1], read.get(i)[1], "value " + i);
      }
      assertFalse(buf.isReadable());
    });
  }

  @Test
  void forEach_roundTripsOneMebibyteValues() {
    Random rnd = new Random(5);
    byte[] v1 = new byte[MIB];
    byte[] v2 = new byte[MIB + 1];
    rnd.nextBytes(v1);
    rnd.nextBytes(v2);
    withBuffer(buf -> {
      PairBlock.write(buf, "a".getBytes(), v1);
      PairBlock.write(buf, new byte[0], v2);
      assertEquals(PairBlock.encodedSize(1, MIB) + PairBlock.encodedSize(0, MIB + 1), buf.readableBytes());
      List<byte[][]> read = readAll(buf);
      assertEquals(2, read.size());
      assertArrayEquals(v1, read.get(0)[1]);
      assertArrayEquals(new byte[0], read.get(1)[0]);
      assertArrayEquals(v2, read.get(1)[1]);
    });
  }

  @Test
  void forEach_ofEmptyBlockVisitsNothing() {
    withBuffer(buf -> assertEquals(0, PairBlock.forEach(buf, (k, v) -> {
      throw new AssertionError("no pairs expected");
    })));
  }

  @Test
  void write_sliceWritesOnlyTheSlice() {
    byte[] key = {9, 1, 2, 9};
    byte[] value = {9, 9, 3, 4, 5};
    withBuffer(buf -> {
      PairBlock.write(buf, key, 1, 2, value, 2, 3);
      assertEquals(PairBlock.encodedSize(2, 3), buf.readableBytes());
      List<byte[][]> read = readAll(buf);
      assertArrayEquals(new byte[] {1, 2}, read.get(0)[0]);
      assertArrayEquals(new byte[] {3, 4, 5}, read.get(0)[1]);
    });
  }

  @Test
  void writeVarint_edgeValuesRoundTripWithExpectedSize() {
    int[][] cases = { // value, encoded size
        {0, 1}, {1, 1}, {127, 1}, {128, 2}, {255, 2}, {16383, 2}, {16384, 3},
        {(1 << 21) - 1, 3}, {1 << 21, 4}, {(1 << 28) - 1, 4}, {1 << 28, 5}, {Integer.MAX_VALUE, 5}};
    for (int[] c : cases) {
      int value = c[0];
      withBuffer(buf -> {
        PairBlock.writeVarint(buf, value);
        assertEquals(c[1], buf.readableBytes(), "size of " + value);
        assertEquals(c[1], Varints.size(value), "varintSize of " + value);
        assertEquals(value, PairBlock.readVarint(buf));
        assertFalse(buf.isReadable());
      });
    }
  }

  @Test
  void writeVarint_isProtobufLeb128() {
    withBuffer(buf -> {
      PairBlock.writeVarint(buf, 300);
      assertEquals(0xAC, buf.readUnsignedByte());
      assertEquals(0x02, buf.readUnsignedByte());
    });
    withBuffer(buf -> {
      PairBlock.writeVarint(buf, Integer.MAX_VALUE);
      byte[] b = new byte[5];
      buf.readBytes(b);
      assertArrayEquals(new byte[] {(byte) 0xFF, (byte) 0xFF, (byte) 0xFF, (byte) 0xFF, 0x07}, b);
    });
  }

  @Test
  void readVarint_matchesProtobufDecoderOnRandomValues() throws Exception {
    Random rnd = new Random(6);
    for (int i = 0; i < 5_000; i++) {
      int value = rnd.nextInt(Integer.MAX_VALUE) >>> rnd.nextInt(31); // every non-negative magnitude
      withBuffer(buf -> {
        PairBlock.writeVarint(buf, value);
        byte[] bytes = new byte[buf.readableBytes()];
        buf.getBytes(buf.readerIndex(), bytes);
        try {
          assertEquals(value, com.google.protobuf.CodedInputStream.newInstance(bytes).readRawVarint32());
        } catch (java.io.IOException e) {
          throw new AssertionError(e);
        }
        assertEquals(value, PairBlock.readVarint(buf));
      });
    }
  }

  @Test
  void readVarint_truncatedThrows() {
    ByteBuf buf = wrap(0x80, 0x80);
    try {
      CorruptedFrameException e = assertThrows(CorruptedFrameException.class, () -> PairBlock.readVarint(buf));
      assertTrue(e.getMessage().contains("inside a length"), e.getMessage());
    } finally {
      buf.release();
    }
  }

  @Test
  void readVarint_longerThanFiveBytesThrows() {
    ByteBuf buf = wrap(0x80, 0x80, 0x80, 0x80, 0x80, 0x01);
    try {
      CorruptedFrameException e = assertThrows(CorruptedFrameException.class, () -> PairBlock.readVarint(buf));
      assertTrue(e.getMessage().contains("5 bytes"), e.getMessage());
    } finally {
      buf.release();
    }
  }

  @Test
  void readVarint_valueAboveIntMaxThrows() {
    // 2^31 .. 2^32-1: the fifth byte is 0x08..0x0F
    for (int last = 0x08; last <= 0x0F; last++) {
      ByteBuf buf = wrap(0xFF, 0xFF, 0xFF, 0xFF, last);
      try {
        assertThrows(CorruptedFrameException.class, () -> PairBlock.readVarint(buf), "last byte " + last);
      } finally {
        buf.release();
      }
    }
  }

  @Test
  void readVarint_fiveByteValueBeyondThirtyTwoBitsThrows() {
    // 0x10..0x7F in the fifth byte put bits above bit 31: the value does not fit a length.
    // E.g. 85 80 80 80 10 is 2^32 + 5; dropping the high bits would read it as 5.
    for (int last : new int[] {0x10, 0x17, 0x20, 0x40, 0x7F}) {
      ByteBuf buf = wrap(0x85, 0x80, 0x80, 0x80, last);
      try {
        assertThrows(CorruptedFrameException.class, () -> PairBlock.readVarint(buf), "last byte " + last);
      } finally {
        buf.release();
      }
    }
  }

  @Test
  void forEach_truncatedBlockThrowsAtEveryCut() {
    withBuffer(full -> {
      PairBlock.write(full, "key-1".getBytes(), "value-1".getBytes());
      PairBlock.write(full, new byte[200], new byte[300]); // two-byte length varints
      int length = full.readableBytes();
      for (int cut = 1; cut < length; cut++) {
        if (cut == PairBlock.encodedSize(5, 7)) {
          continue; // a cut between pairs is a shorter valid block
        }
        ByteBuf truncated = full.retainedSlice(0, cut);
        try {
          int at = cut;
          assertThrows(CorruptedFrameException.class,
              () -> PairBlock.forEach(truncated, (k, v) -> { }), () -> "cut at " + at);
        } finally {
          truncated.release();
        }
      }
    });
  }

  @Test
  void forEach_blockEndingAfterKeyThrows() {
    withBuffer(buf -> {
      PairBlock.writeVarint(buf, 3);
      buf.writeBytes(new byte[] {1, 2, 3});
      CorruptedFrameException e = assertThrows(CorruptedFrameException.class,
          () -> PairBlock.forEach(buf, (k, v) -> { }));
      assertTrue(e.getMessage().contains("inside a length"), e.getMessage());
    });
  }

  @Test
  void readField_lengthBeyondBlockThrows() {
    withBuffer(buf -> {
      PairBlock.writeVarint(buf, 10);
      buf.writeBytes(new byte[9]);
      CorruptedFrameException e = assertThrows(CorruptedFrameException.class, () -> PairBlock.readField(buf));
      assertTrue(e.getMessage().contains("10 bytes"), e.getMessage());
    });
  }

  @Test
  void forEach_hugeLengthThrowsWithoutAllocating() {
    withBuffer(buf -> {
      PairBlock.writeVarint(buf, Integer.MAX_VALUE);
      buf.writeBytes(new byte[16]);
      assertThrows(CorruptedFrameException.class, () -> PairBlock.forEach(buf, (k, v) -> { }));
    });
  }

  @Test
  void encodedSize_matchesBytesWritten() {
    Random rnd = new Random(7);
    for (int i = 0; i < 200; i++) {
      byte[] k = new byte[rnd.nextInt(300)];
      byte[] v = new byte[rnd.nextInt(20_000)];
      withBuffer(buf -> {
        PairBlock.write(buf, k, v);
        assertEquals(PairBlock.encodedSize(k.length, v.length), buf.readableBytes(),
            () -> Arrays.toString(new int[] {k.length, v.length}));
      });
    }
  }
}
