package org.sss.core.transport;

import com.google.protobuf.InvalidProtocolBufferException;
import com.google.protobuf.MessageLite;
import com.google.protobuf.Parser;
import io.netty.buffer.ByteBuf;
import io.netty.buffer.ByteBufInputStream;
import io.netty.channel.ChannelHandlerContext;
import io.netty.handler.codec.CorruptedFrameException;
import io.netty.handler.codec.MessageToMessageDecoder;
import java.io.IOException;
import java.util.List;

/**
 * Splits a length-stripped frame into its protobuf header and its body. Sits after a
 * {@link io.netty.handler.codec.LengthFieldBasedFrameDecoder} (see {@link Pipelines}), which
 * bounds the frame size; this decoder rejects a header length that does not fit the frame.
 */
public final class FrameDecoder<M extends MessageLite> extends MessageToMessageDecoder<ByteBuf> {
  private final Parser<M> parser;

  public FrameDecoder(Parser<M> parser) {
    this.parser = parser;
  }

  @Override
  protected void decode(ChannelHandlerContext ctx, ByteBuf frame, List<Object> out) throws IOException {
    if (frame.readableBytes() < 4) {
      throw new CorruptedFrameException("frame of " + frame.readableBytes() + " bytes has no header length");
    }
    int headerLength = frame.readInt();
    if (headerLength < 0 || headerLength > frame.readableBytes()) {
      throw new CorruptedFrameException("header length " + headerLength + " exceeds the frame ("
          + frame.readableBytes() + " bytes left)");
    }
    M header;
    try (ByteBufInputStream in = new ByteBufInputStream(frame.readSlice(headerLength))) {
      header = parser.parseFrom(in);
    } catch (InvalidProtocolBufferException e) {
      throw new CorruptedFrameException("unparseable header: " + e.getMessage());
    }
    ByteBuf body = frame.readableBytes() > 0 ? frame.readRetainedSlice(frame.readableBytes()) : null;
    out.add(new Frame<>(header, body));
  }
}
