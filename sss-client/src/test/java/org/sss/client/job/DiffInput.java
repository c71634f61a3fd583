package org.sss.client.job;

import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.List;
import java.util.Random;
import org.sss.core.api.Pair;

/**
 * A generated input table: its types and the pairs written to it (encoded), with repeated
 * keys, empty values and, rarely, one value of several MiB.
 *
 * @param bigValues how many values are over 1 MiB
 */
record DiffInput(DiffType keyType, DiffType valueType, List<Pair> pairs, int bigValues) {
  static final int MAX_BIG_VALUE = 9 << 20;

  /** 0 to a few thousand pairs, mostly small inputs. */
  static DiffInput random(Random rng) {
    int roll = rng.nextInt(10);
    int n = roll == 0 ? 0 : roll < 3 ? 1 + rng.nextInt(10) : roll < 7 ? 10 + rng.nextInt(290) : 300 + rng.nextInt(2700);
    return random(rng, n, rng.nextInt(12) == 0);
  }

  /** {@code n} pairs; with {@code big}, one of them (if the value type allows) holds 1 to 9 MiB. */
  static DiffInput random(Random rng, int n, boolean big) {
    DiffType[] types = DiffType.values();
    DiffType k = types[rng.nextInt(types.length)];
    DiffType v = types[rng.nextInt(types.length)];
    int distinct = Math.max(1, rng.nextBoolean() ? n : n / 3);
    long[] keyPool = new long[distinct];
    for (int i = 0; i < distinct; i++) {
      keyPool[i] = rng.nextInt(4) == 0 ? rng.nextLong() : rng.nextInt(4 * distinct);
    }
    List<Pair> pairs = new ArrayList<>(n);
    for (int i = 0; i < n; i++) {
      Object key = k.make(keyPool[rng.nextInt(distinct)]);
      pairs.add(new Pair(k.serde.encodeKey(key), v.serde.encodeValue(v.make(rng.nextLong()))));
    }
    int bigValues = 0;
    if (big && n > 0 && !v.numeric()) {
      int at = rng.nextInt(n);
      pairs.set(at, new Pair(pairs.get(at).key(), v.serde.encodeValue(bigValue(rng, v))));
      bigValues = 1;
    }
    return new DiffInput(k, v, pairs, bigValues);
  }

  private static Object bigValue(Random rng, DiffType type) {
    return bigValue(rng, type, (1 << 20) + rng.nextInt(MAX_BIG_VALUE - (1 << 20) + 1));
  }

  /** A random string (of ASCII letters) or byte array of {@code size} bytes. */
  static Object bigValue(Random rng, DiffType type, int size) {
    byte[] b = new byte[size];
    rng.nextBytes(b);
    if (type == DiffType.BYTES) {
      return b;
    }
    for (int i = 0; i < b.length; i++) {
      b[i] = (byte) ('a' + (b[i] & 0x0f));
    }
    return new String(b, StandardCharsets.US_ASCII);
  }

  @Override
  public String toString() {
    return "(" + keyType + "," + valueType + ") x " + pairs.size() + (bigValues > 0 ? " with a value over 1 MiB" : "");
  }
}
