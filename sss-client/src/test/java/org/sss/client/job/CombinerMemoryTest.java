package org.sss.client.job;

import static org.junit.jupiter.api.Assertions.assertEquals;

import java.nio.file.Path;
import java.util.Optional;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;
import org.sss.client.BulkWriter;
import org.sss.client.SssClient;
import org.sss.client.cluster.LocalProcessCluster;
import org.sss.client.io.BulkIO;
import org.sss.core.api.Emitter;
import org.sss.core.api.Mapper;
import org.sss.core.api.Reducer;
import org.sss.core.api.Serdes;

/**
 * The combining buffer's memory bound holds for many distinct large keys with small values, on
 * a server whose heap is small: 363,000 keys of about 1 KB (350 MB of keys) through a combiner
 * on a 384 MiB node. Counting only the values, the buffer held every key and the node died of
 * "GC overhead limit exceeded".
 */
class CombinerMemoryTest {
  static final int ROWS = 363;
  static final int KEYS_PER_ROW = 1000;
  static final String PAD = "x".repeat(1000);

  @TempDir
  Path dir;

  /** Emits a thousand distinct keys of about 1 KB per row, each with the value 1. */
  public static final class WideKeys implements Mapper<Long, String, String, Long> {
    @Override
    public void map(Long row, String value, Emitter<String, Long> out) {
      for (int j = 0; j < KEYS_PER_ROW; j++) {
        out.emit(row + "/" + j + "/" + PAD, 1L);
      }
    }
  }

  /** Sums longs. */
  public static final class Sum implements Reducer<String, Long, String, Long> {
    @Override
    public void reduce(String key, Iterable<Long> values, Emitter<String, Long> out) {
      long s = 0;
      for (long v : values) {
        s += v;
      }
      out.emit(key, s);
    }
  }

  @Test
  void distinctKilobyteKeysThroughACombiner_onA384MiBNode_complete() throws Exception {
    LocalProcessCluster cluster = LocalProcessCluster.start(dir, 1, 0, "384m");
    try (SssClient client = SssClient.connect(cluster.spec())) {
      client.createTable("rows", BulkIO.textTable(), false);
      try (BulkWriter w = client.writer("rows", BulkIO.textTable().types())) {
        for (long i = 1; i <= ROWS; i++) {
          w.put(Serdes.LONG.encodeKey(i), Serdes.STRING.encodeValue("r" + i));
        }
      }
      Job job = Job.named("wide-keys").input("rows", Serdes.LONG, Serdes.STRING)
          .map(WideKeys.class, Serdes.STRING, Serdes.LONG)
          .combine(Sum.class)
          .reduce(Sum.class, Serdes.STRING, Serdes.LONG)
          .output("wide-out").threads(1).build();
      client.submit(job).await();
      assertEquals((long) ROWS * KEYS_PER_ROW, client.count("wide-out"));
      for (long row : new long[] {1, ROWS / 2, ROWS}) {
        for (int j : new int[] {0, KEYS_PER_ROW - 1}) {
          Optional<byte[]> v = client.get("wide-out", Serdes.STRING.encodeKey(row + "/" + j + "/" + PAD));
          assertEquals(1L, Serdes.LONG.decodeValue(v.orElseThrow(() -> new AssertionError("missing key of row "
              + row + ", number " + j))));
        }
      }
    } finally {
      cluster.stop();
    }
  }
}
