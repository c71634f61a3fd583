package org.sss.core.transport;

import io.netty.buffer.ByteBuf;
import io.netty.channel.ChannelHandler;
import io.netty.channel.ChannelHandlerContext;
import io.netty.handler.codec.MessageToMessageEncoder;
import java.util.List;

/**
 * Writes a {@link Frame} as {@code | frame length | header length | header | body |}. The body
 * is passed on as its own buffer, never copied.
 */
@ChannelHandler.Sharable
public final class FrameEncoder extends MessageToMessageEncoder<Frame<?>> {
  @Override
  protected void encode(ChannelHandlerContext ctx, Frame<?> frame, List<Object> out) {
    byte[] header = frame.header().toByteArray();
    ByteBuf body = frame.body();
    ByteBuf prefix = ctx.alloc().buffer(8 + header.length);
    prefix.writeInt(4 + header.length + body.readableBytes());
    prefix.writeInt(header.length);
    prefix.writeBytes(header);
    out.add(prefix);
    if (body.isReadable()) {
      out.add(body);
    } else {
      frame.release();
    }
  }
}
