package org.sss.server.store;

import static org.junit.jupiter.api.Assertions.assertEquals;

import io.netty.buffer.AbstractByteBufAllocator;
import io.netty.buffer.ByteBuf;
import io.netty.buffer.UnpooledDirectByteBuf;
import io.netty.buffer.UnpooledHeapByteBuf;
import java.util.ArrayList;
import java.util.List;

/** Unpooled buffers, heap or direct, each remembered so a test can check all were released. */
final class RecordingAllocator extends AbstractByteBufAllocator {
  private final boolean direct;
  private final List<ByteBuf> allocated = new ArrayList<>();

  RecordingAllocator(boolean direct) {
    super(direct);
    this.direct = direct;
  }

  @Override
  protected synchronized ByteBuf newHeapBuffer(int initialCapacity, int maxCapacity) {
    ByteBuf b = new UnpooledHeapByteBuf(this, initialCapacity, maxCapacity);
    allocated.add(b);
    return b;
  }

  @Override
  protected synchronized ByteBuf newDirectBuffer(int initialCapacity, int maxCapacity) {
    ByteBuf b = new UnpooledDirectByteBuf(this, initialCapacity, maxCapacity);
    allocated.add(b);
    return b;
  }

  @Override
  public boolean isDirectBufferPooled() {
    return false;
  }

  boolean direct() {
    return direct;
  }

  synchronized void assertAllReleased() {
    for (ByteBuf b : allocated) {
      assertEquals(0, b.refCnt(), "a buffer was not released");
    }
  }
}
