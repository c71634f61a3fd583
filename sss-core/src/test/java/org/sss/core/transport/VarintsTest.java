package org.sss.core.transport;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;

import io.netty.buffer.ByteBuf;
import io.netty.buffer.Unpooled;
import org.junit.jupiter.api.Test;

/** The store's array forms and the wire's buffer forms are one encoding. */
class VarintsTest {
  private static final int[] VALUES = {0, 1, 127, 128, 300, 16_383, 16_384, 2_097_151, 2_097_152,
      268_435_455, 268_435_456, Integer.MAX_VALUE};

  @Test
  void arrayForms_roundTrip_andMatchTheWiresBytes() {
    for (int v : VALUES) {
      byte[] array = new byte[8];
      int end = Varints.put(array, 1, v);
      assertEquals(1 + Varints.size(v), end, "size of " + v);
      assertEquals(v, Varints.get(array, 1));
      assertEquals(end, Varints.skip(array, 1));
      ByteBuf wire = Unpooled.buffer();
      try {
        PairBlock.writeVarint(wire, v);
        byte[] wireBytes = new byte[wire.readableBytes()];
        wire.getBytes(0, wireBytes);
        byte[] ours = new byte[end - 1];
        System.arraycopy(array, 1, ours, 0, ours.length);
        assertArrayEquals(wireBytes, ours, "encoding of " + v);
        assertEquals(v, PairBlock.readVarint(wire));
      } finally {
        wire.release();
      }
    }
    // little-endian groups of 7 bits, high bit set on all but the last byte
    byte[] b = new byte[2];
    Varints.put(b, 0, 300);
    assertArrayEquals(new byte[] {(byte) 0xAC, 0x02}, b);
  }
}
