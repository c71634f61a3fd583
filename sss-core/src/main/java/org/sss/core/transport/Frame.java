package org.sss.core.transport;

import com.google.protobuf.MessageLite;
import io.netty.buffer.ByteBuf;
import io.netty.buffer.Unpooled;
import io.netty.util.ReferenceCounted;

/**
 * One message on the wire: a protobuf header and an optional body of packed pairs.
 *
 * <pre>
 *   +---------------+---------------+------------------+---------------------+
 *   | frame length  | header length | header           | body                |
 *   | u32 BE        | u32 BE        | protobuf message | PairBlock, 0..n B   |
 *   +---------------+---------------+------------------+---------------------+
 *   |<- stripped by the decoder ->|
 * </pre>
 *
 * The body is reference-counted: whoever receives a frame owns its body and must release it
 * (or pass it on).
 */
public record Frame<M extends MessageLite>(M header, ByteBuf body) {
  public Frame {
    body = body == null ? Unpooled.EMPTY_BUFFER : body;
  }

  /** A frame without a body. */
  public static <M extends MessageLite> Frame<M> of(M header) {
    return new Frame<>(header, Unpooled.EMPTY_BUFFER);
  }

  /** Releases the body. */
  public void release() {
    ReferenceCounted rc = body;
    if (rc.refCnt() > 0) {
      rc.release();
    }
  }
}
