package org.sss.client.it;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNotNull;
import static org.junit.jupiter.api.Assertions.assertThrows;

import java.util.ArrayList;
import java.util.Arrays;
import java.util.HexFormat;
import java.util.List;
import java.util.Map;
import java.util.NavigableMap;
import java.util.Random;
import java.util.TreeMap;
import org.junit.jupiter.api.function.Executable;
import org.sss.client.BulkWriter;
import org.sss.client.SssClient;
import org.sss.core.api.Pair;
import org.sss.core.keys.KeyCodec;
import org.sss.core.proto.ErrorCode;
import org.sss.core.transport.SssException;

/** Reference data for integration tests: random pairs kept in a map sorted as the store sorts. */
public final class TestPairs {
  private TestPairs() {}

  /** A map ordered by unsigned bytes, the order RocksDB and ordered scans use. */
  public static NavigableMap<byte[], byte[]> sortedMap() {
    return new TreeMap<>(Arrays::compareUnsigned);
  }

  /**
   * {@code n} distinct random pairs: keys are encoded random byte strings of 1..24 bytes (zero
   * bytes included, so escaping is exercised), values are 0..200 random bytes (empty included).
   */
  public static NavigableMap<byte[], byte[]> randomPairs(long seed, int n) {
    Random r = new Random(seed);
    NavigableMap<byte[], byte[]> out = sortedMap();
    while (out.size() < n) {
      byte[] raw = new byte[1 + r.nextInt(24)];
      r.nextBytes(raw);
      byte[] value = new byte[r.nextInt(201)];
      r.nextBytes(value);
      out.put(KeyCodec.encodeBytes(raw), value);
    }
    return out;
  }

  /** Loads pairs through a {@link BulkWriter}; returns the pairs the writer saw acknowledged. */
  public static long load(SssClient client, String table, Map<byte[], byte[]> pairs) {
    try (BulkWriter w = client.writer(table, client.tableStats(table).spec().types())) {
      for (Map.Entry<byte[], byte[]> e : pairs.entrySet()) {
        w.put(e.getKey(), e.getValue());
      }
      w.flush();
      return w.acknowledged();
    }
  }

  /** Every {@code step}-th key of the map. */
  public static List<byte[]> sampleKeys(NavigableMap<byte[], byte[]> pairs, int step) {
    List<byte[]> out = new ArrayList<>();
    int i = 0;
    for (byte[] k : pairs.keySet()) {
      if (i++ % step == 0) {
        out.add(k);
      }
    }
    return out;
  }

  /** Checks that the values of {@code keys} read back with multiGet equal the reference. */
  public static void assertValues(SssClient client, String table, NavigableMap<byte[], byte[]> reference,
                                  List<byte[]> keys) {
    List<byte[]> got = client.multiGet(table, keys);
    assertEquals(keys.size(), got.size());
    for (int i = 0; i < keys.size(); i++) {
      byte[] key = keys.get(i);
      assertNotNull(got.get(i), () -> "missing key " + hex(key));
      assertArrayEquals(reference.get(key), got.get(i), () -> "wrong value of key " + hex(key));
    }
  }

  /** Asserts that {@code op} fails with an {@link SssException} of the given code. */
  public static SssException assertCode(ErrorCode code, Executable op) {
    SssException e = assertThrows(SssException.class, op);
    assertEquals(code, e.code(), () -> "expected " + code + " but got " + e.code() + ": " + e.getMessage());
    return e;
  }

  public static List<Pair> asPairs(Map<byte[], byte[]> map) {
    List<Pair> out = new ArrayList<>(map.size());
    map.forEach((k, v) -> out.add(new Pair(k, v)));
    return out;
  }

  public static String hex(byte[] b) {
    return HexFormat.of().formatHex(b);
  }
}
