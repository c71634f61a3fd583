package org.sss.core.transport;

import io.netty.buffer.ByteBufAllocator;
import io.netty.buffer.PooledByteBufAllocator;
import io.netty.util.internal.PlatformDependent;
import java.util.List;

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
 *
 * <h2>Chunks that are not zeroed</h2>
 * On Java 9 and later Netty gets a chunk from {@code ByteBuffer.allocateDirect}, which zeroes
 * it: every page of a 16 MiB chunk is touched (and faulted in) when the chunk is made, used or
 * not. A command on a 6-byte file made four of them in its first second, 16,000 of its 38,000
 * page faults. Given {@link #JVM_OPTIONS}, Netty allocates chunks itself, unzeroed, and a page
 * is touched when a buffer first uses it. Without them everything works, only slower:
 * {@link #unzeroedChunks()} says which path this JVM took.
 */
public final class Buffers {
  /** Chunks of {@code pageSize << MAX_ORDER} = 8 KiB << 11 = 16 MiB. */
  static final int MAX_ORDER = 11;
  /** The pool's chunk size: a buffer larger than this is allocated (and freed) on its own. */
  static final int CHUNK_BYTES = PooledByteBufAllocator.defaultPageSize() << MAX_ORDER;

  private static final ByteBufAllocator POOL = new PooledByteBufAllocator(
      PooledByteBufAllocator.defaultPreferDirect(),
      PooledByteBufAllocator.defaultNumHeapArena(),
      PooledByteBufAllocator.defaultNumDirectArena(),
      PooledByteBufAllocator.defaultPageSize(),
      MAX_ORDER,
      PooledByteBufAllocator.defaultSmallCacheSize(),
      PooledByteBufAllocator.defaultNormalCacheSize(),
      PooledByteBufAllocator.defaultUseCacheForAllThreads());

  /**
   * The JVM options that let Netty allocate its chunks without zeroing them: the private
   * constructor of {@code DirectByteBuffer} opened to it. Every SSS JVM is started with them
   * ({@code bin/sss}, the servers of {@code cluster start}, the image, the namespace script, the
   * tests).
   */
  public static final List<String> JVM_OPTIONS = List.of(
      "--add-opens=java.base/java.nio=ALL-UNNAMED", "-Dio.netty.tryReflectionSetAccessible=true");

  private Buffers() {}

  /** Whether this JVM's chunks come unzeroed (started with {@link #JVM_OPTIONS}). */
  public static boolean unzeroedChunks() {
    return PlatformDependent.useDirectBufferNoCleaner();
  }

  /** The shared pool (thread-safe). */
  public static ByteBufAllocator allocator() {
    return POOL;
  }
}
