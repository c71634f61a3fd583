package org.sss.bench.store;

import java.lang.invoke.MethodHandles;
import java.lang.invoke.VarHandle;
import java.nio.ByteOrder;

/**
 * The benchmark's data: pair {@code i} is a deterministic function of {@code i}, so that every
 * phase writes the same pairs and a scan can be checked against what was written without
 * keeping it.
 *
 * <pre>
 *   key   (16 B) | mix64(i) big-endian | i big-endian |     unique, scattered over the key space
 *   value (n B)  | splitmix64 stream seeded by i       |     incompressible
 * </pre>
 *
 * <h2>Checksum</h2>
 * A set of pairs is summarised as (count, sum of {@link #hash(byte[], byte[])} over its pairs);
 * the sum does not depend on order, so an unordered scan is checked the same way as an ordered
 * one. A scan that drops, duplicates or corrupts a pair changes the sum (with probability
 * 1 - 2^-64 per error).
 */
final class BenchPairs {
  static final int KEY_BYTES = 16;

  private static final VarHandle LONG_BE =
      MethodHandles.byteArrayViewVarHandle(long[].class, ByteOrder.BIG_ENDIAN);
  private static final VarHandle LONG_LE =
      MethodHandles.byteArrayViewVarHandle(long[].class, ByteOrder.LITTLE_ENDIAN);
  private static final long GOLDEN = 0x9E3779B97F4A7C15L;
  private static final long P1 = 0xC2B2AE3D27D4EB4FL;
  private static final long P2 = 0x165667B19E3779F9L;

  private final long pairs;
  private final int valueBytes;

  BenchPairs(long pairs, int valueBytes) {
    this.pairs = pairs;
    this.valueBytes = valueBytes;
  }

  long pairs() {
    return pairs;
  }

  int valueBytes() {
    return valueBytes;
  }

  /** Key plus value bytes of one pair. */
  long pairBytes() {
    return KEY_BYTES + (long) valueBytes;
  }

  /** Key plus value bytes of all pairs. */
  long totalBytes() {
    return pairs * pairBytes();
  }

  byte[] newKey() {
    return new byte[KEY_BYTES];
  }

  byte[] newValue() {
    return new byte[valueBytes];
  }

  /** Writes key {@code i} into {@code out} (16 bytes). */
  static void key(long i, byte[] out) {
    LONG_BE.set(out, 0, mix64(i));
    LONG_BE.set(out, 8, i);
  }

  /** Writes value {@code i} into {@code out} (all of it). */
  static void value(long i, byte[] out) {
    long s = mix64(i ^ GOLDEN);
    int j = 0;
    for (; j + 8 <= out.length; j += 8) {
      s += GOLDEN;
      LONG_LE.set(out, j, mix64(s));
    }
    long r = mix64(s + GOLDEN);
    for (; j < out.length; j++) {
      out[j] = (byte) r;
      r >>>= 8;
    }
  }

  /** The checksum of all pairs, computed by generating them (not timed). */
  Checksum expected() {
    byte[] k = newKey();
    byte[] v = newValue();
    Checksum c = new Checksum();
    for (long i = 0; i < pairs; i++) {
      key(i, k);
      value(i, v);
      c.add(k, v);
    }
    return c;
  }

  /** Stafford's mix13 finaliser (splitmix64): a bijection on longs. */
  static long mix64(long z) {
    z = (z ^ (z >>> 30)) * 0xBF58476D1CE4E5B9L;
    z = (z ^ (z >>> 27)) * 0x94D049BB133111EBL;
    return z ^ (z >>> 31);
  }

  /** A 64-bit hash of a pair; reads every byte of both. */
  static long hash(byte[] key, byte[] value) {
    return mix64(hashBytes(value, hashBytes(key, 0x5D588B656C078965L)));
  }

  /** Four independent lanes over 32-byte stripes, so hashing runs at several GB/s. */
  private static long hashBytes(byte[] b, long seed) {
    long a = seed + P1;
    long c = seed + P2;
    long d = seed ^ GOLDEN;
    long e = seed - P1;
    int n = b.length;
    int i = 0;
    for (; i + 32 <= n; i += 32) {
      a = Long.rotateLeft(a + (long) LONG_LE.get(b, i) * P2, 31) * P1;
      c = Long.rotateLeft(c + (long) LONG_LE.get(b, i + 8) * P2, 31) * P1;
      d = Long.rotateLeft(d + (long) LONG_LE.get(b, i + 16) * P2, 31) * P1;
      e = Long.rotateLeft(e + (long) LONG_LE.get(b, i + 24) * P2, 31) * P1;
    }
    long h = Long.rotateLeft(a, 1) + Long.rotateLeft(c, 7) + Long.rotateLeft(d, 12) + Long.rotateLeft(e, 18);
    for (; i + 8 <= n; i += 8) {
      h = Long.rotateLeft(h ^ ((long) LONG_LE.get(b, i) * P2), 27) * P1 + GOLDEN;
    }
    for (; i < n; i++) {
      h = Long.rotateLeft(h ^ ((b[i] & 0xFFL) * P1), 11) * P2;
    }
    return mix64(h + n);
  }

  /** Count and order-independent sum of pair hashes. */
  static final class Checksum {
    private long count;
    private long sum;

    void add(byte[] key, byte[] value) {
      count++;
      sum += hash(key, value);
    }

    long count() {
      return count;
    }

    long sum() {
      return sum;
    }

    boolean matches(Checksum other) {
      return count == other.count && sum == other.sum;
    }

    @Override
    public String toString() {
      return String.format("%,d pairs, sum %016x", count, sum);
    }
  }
}
