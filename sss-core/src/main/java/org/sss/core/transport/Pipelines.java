package org.sss.core.transport;

import com.google.protobuf.MessageLite;
import com.google.protobuf.Parser;
import io.netty.channel.ChannelPipeline;
import io.netty.handler.codec.LengthFieldBasedFrameDecoder;
import java.nio.ByteOrder;

/** The framing handlers shared by both ends of every connection. */
public final class Pipelines {
  /**
   * The protocol both ends speak, sent in the challenge and the hello: a peer of another
   * version is refused by name rather than misread.
   */
  public static final int PROTOCOL_VERSION = 4;

  /** Default upper bound on one frame: 64 MiB. */
  public static final int DEFAULT_MAX_FRAME = 64 << 20;

  private static final FrameEncoder ENCODER = new FrameEncoder();

  private Pipelines() {}

  /** The largest socket read: a whole default scan chunk or write batch at once. */
  static final int MAX_READ = 1 << 20;

  /**
   * How much a channel reads per system call: Netty's adaptive guess, but up to 1 MiB instead of
   * 64 KiB. Bulk traffic (scan chunks, put and shuffle batches) comes in frames of about 1 MiB;
   * reading them 64 KiB at a time took sixteen system calls and wake-ups per frame, and a copy of
   * every byte into the frame's buffer, where one large read often holds a whole frame, which
   * the frame decoder then uses as it is.
   */
  public static io.netty.channel.RecvByteBufAllocator receiveBuffers() {
    return new io.netty.channel.AdaptiveRecvByteBufAllocator(64, 2048, MAX_READ);
  }

  /** Adds the length-bounded frame decoder, the header decoder and the encoder. */
  public static <M extends MessageLite> void addFraming(ChannelPipeline p, Parser<M> parser, int maxFrame) {
    addFraming(p, parser, FrameLimit.fixed(maxFrame));
  }

  /** As above, with a limit that may change while the connection lives (see {@link FrameLimit}). */
  public static <M extends MessageLite> void addFraming(ChannelPipeline p, Parser<M> parser, FrameLimit limit) {
    LengthFieldBasedFrameDecoder frames = new LimitedFrameDecoder(limit);
    frames.setCumulator(new FrameCumulator(limit));
    p.addLast("frame", frames);
    p.addLast("header", new FrameDecoder<>(parser));
    p.addLast("encoder", ENCODER);
  }

  /** A length-prefixed frame decoder that refuses frames over the limit in force when they are announced. */
  private static final class LimitedFrameDecoder extends LengthFieldBasedFrameDecoder {
    private final FrameLimit limit;

    LimitedFrameDecoder(FrameLimit limit) {
      super(limit.full(), 0, 4, 0, 4, true);
      this.limit = limit;
    }

    @Override
    protected long getUnadjustedFrameLength(io.netty.buffer.ByteBuf buf, int offset, int length,
                                            ByteOrder order) {
      long frameLength = super.getUnadjustedFrameLength(buf, offset, length, order);
      int now = limit.current();
      if (now < limit.full() && frameLength > now) {
        throw new io.netty.handler.codec.TooLongFrameException("a frame of " + frameLength
            + " bytes before authentication; the limit until then is " + now + " bytes");
      }
      return frameLength;
    }
  }
}
