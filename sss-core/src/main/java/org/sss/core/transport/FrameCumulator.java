package org.sss.core.transport;

import io.netty.buffer.ByteBuf;
import io.netty.buffer.ByteBufAllocator;
import io.netty.handler.codec.ByteToMessageDecoder;

/**
 * Gathers socket reads into one buffer per frame, sized for the whole frame as soon as the
 * frame's 4-byte length prefix has arrived.
 *
 * <p>Netty's default (merging) cumulator grows its buffer by doubling as reads arrive, copying
 * what it holds at each step: a 1 MiB put batch or scan chunk, arriving in 64 KiB reads, was
 * copied about twice on top of the one copy out of the read buffers (profiled:
 * {@code PoolArena.reallocate} and {@code expandCumulation} under
 * {@code ByteToMessageDecoder.channelRead}). This cumulator copies each byte once.
 *
 * <p>It never grows a buffer in place: it only appends within the current capacity, or moves
 * the unread bytes to a new buffer, so a retained slice of an earlier frame (a request body
 * still being worked on) never sees its memory move.
 *
 * <p>Every frame within the connection's current {@link FrameLimit} is presized, with some room
 * past its end ({@link #room}). Before the peer
 * has authenticated that limit is small, so a stranger cannot make the node reserve more than
 * that by announcing a frame it never sends. Frames were once presized only up to 16 MiB; a
 * frame holding a value of 16 MiB (the synthetic benchmark's write-intensive point of 64 keys)
 * is a few bytes more, and grew in Netty's steps of 4 MiB, copied at each: 40 MiB copied per
 * frame, and a fresh allocation (beyond the pool's 16 MiB chunks, so page faults) at each step.
 * An announced frame over the limit is refused by the frame decoder before it gets here.
 */
final class FrameCumulator implements ByteToMessageDecoder.Cumulator {
  private final FrameLimit limit;

  FrameCumulator(FrameLimit limit) {
    this.limit = limit;
  }

  @Override
  public ByteBuf cumulate(ByteBufAllocator alloc, ByteBuf cumulation, ByteBuf in) {
    if (cumulation == in) {
      in.release();
      return cumulation;
    }
    if (!cumulation.isReadable() && in.isContiguous()) {
      cumulation.release();
      return in;
    }
    try {
      int required = in.readableBytes();
      if (required <= cumulation.writableBytes() && !cumulation.isReadOnly()) {
        cumulation.writeBytes(in, in.readerIndex(), required);
        in.readerIndex(in.writerIndex());
        return cumulation;
      }
      return expand(alloc, cumulation, in);
    } finally {
      in.release();
    }
  }

  /**
   * Room past a presized frame's end: frames sent back to back (a bulk writer's batches in
   * flight) end in a read that also brings the next one's start, which would otherwise not fit
   * and move the whole frame to a bigger buffer. An eighth of the frame, at most one read. A
   * frame that fits in a pool chunk keeps to it (a buffer beyond a chunk is allocated and freed
   * on its own, every page faulted in anew) with what room the chunk leaves, unless that is
   * less than an eighth of a read: then it gets a whole read's room outside the pool, since a
   * frame moved later costs a copy of all of it on top.
   */
  static long room(long frameEnd) {
    long room = Math.min(frameEnd / 8, Pipelines.MAX_READ);
    long chunkLeft = Buffers.CHUNK_BYTES - frameEnd;
    if (frameEnd > Buffers.CHUNK_BYTES || room <= chunkLeft) {
      return room;
    }
    return chunkLeft >= Pipelines.MAX_READ / 8 ? chunkLeft : Pipelines.MAX_READ;
  }

  private ByteBuf expand(ByteBufAllocator alloc, ByteBuf cumulation, ByteBuf in) {
    int held = cumulation.readableBytes();
    int arriving = in.readableBytes();
    int total = held + arriving;
    int capacity = alloc.calculateNewCapacity(total, Integer.MAX_VALUE);
    if (held >= 4) {
      long frameEnd = 4L + cumulation.getInt(cumulation.readerIndex());
      if (frameEnd > total && frameEnd <= 4L + limit.current()) {
        capacity = (int) Math.min(Integer.MAX_VALUE - 8, frameEnd + room(frameEnd));
      }
    }
    ByteBuf bigger = alloc.buffer(capacity);
    ByteBuf toRelease = bigger;
    try {
      bigger.writeBytes(cumulation, cumulation.readerIndex(), held);
      bigger.writeBytes(in, in.readerIndex(), arriving);
      in.readerIndex(in.writerIndex());
      toRelease = cumulation;
      return bigger;
    } finally {
      toRelease.release();
    }
  }
}
