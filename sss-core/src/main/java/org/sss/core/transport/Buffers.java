package org.sss.core.transport;

import io.netty.buffer.ByteBufAllocator;
import io.netty.buffer.PooledByteBufAllocator;

/**
 * The buffer pool of every SSS connection and of the bulk paths (put batches, scan chunks).
 *
 * <h2>Why not Netty's default pool</h2>
 * Bulk data moves in buffers of about 1 MiB (the default put batch and scan chunk). Netty's
 * default pool carves buffers out of 4 MiB chunks and frees a chunk once it has been more than
 * a quarter full and is empty again: a 1 MiB buffer is exactly a quarter, so every batch took
 * a fresh chunk from the operating system and gave it back, and the JDK zeroed all 4 MiB of it
 * each time (profiled: {@code Unsafe.setMemory} under {@code PoolArena.allocateNormal} on
 * both ends of a scan). This pool uses 16 MiB chunks, so a few bulk buffers in flight keep a
 * chunk below a quarter full, where Netty keeps it for reuse.
 */
public final class Buffers {
  /** Chunks of {@code pageSize << MAX_ORDER} = 8 KiB << 11 = 16 MiB. */
  static final int MAX_ORDER = 11;

  private static final ByteBufAllocator POOL = new PooledByteBufAllocator(
      PooledByteBufAllocator.defaultPreferDirect(),
      PooledByteBufAllocator.defaultNumHeapArena(),
      PooledByteBufAllocator.defaultNumDirectArena(),
      PooledByteBufAllocator.defaultPageSize(),
      MAX_ORDER,
      PooledByteBufAllocator.defaultSmallCacheSize(),
      PooledByteBufAllocator.defaultNormalCacheSize(),
      PooledByteBufAllocator.defaultUseCacheForAllThreads());

  private Buffers() {}

  /** The shared pool (thread-safe). */
  public static ByteBufAllocator allocator() {
    return POOL;
  }
}
