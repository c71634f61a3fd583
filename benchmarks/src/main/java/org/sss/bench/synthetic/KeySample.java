package org.sss.bench.synthetic;

import java.util.Arrays;

/**
 * The keys a run reads back by key, besides its full scan: up to {@link #MAX_KEYS} keys spread
 * evenly over 0 .. keys-1, always the first and the last, and no more than {@link #MAX_BYTES}
 * of values in all (16 MiB outputs: four keys), so that the reads cost little next to the job.
 */
public final class KeySample {
  public static final int MAX_KEYS = 1000;
  public static final long MAX_BYTES = 64L << 20;

  private KeySample() {}

  /**
   * @param keys        the unique keys
   * @param bytesPerKey the bytes of one key's output values
   * @return distinct keys in increasing order
   */
  public static long[] of(long keys, long bytesPerKey, int maxKeys, long maxBytes) {
    long n = Math.min(keys, Math.min(maxKeys, Math.max(2, maxBytes / Math.max(1, bytesPerKey))));
    if (n <= 1) {
      return keys < 1 ? new long[0] : new long[] {0};
    }
    long[] out = new long[(int) n];
    for (int i = 0; i < n; i++) {
      // i * (keys - 1) may overflow a long only past 2^31 keys, which the parameters refuse
      out[i] = Math.round((double) i * (keys - 1) / (n - 1));
    }
    return Arrays.stream(out).distinct().sorted().toArray();
  }

  public static long[] of(long keys, long bytesPerKey) {
    return of(keys, bytesPerKey, MAX_KEYS, MAX_BYTES);
  }
}
