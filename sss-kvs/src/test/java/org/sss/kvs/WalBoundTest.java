package org.sss.kvs;

import static org.junit.jupiter.api.Assertions.assertTrue;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.stream.Stream;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;
import org.sss.core.proto.TableOptions;

/**
 * Write-ahead logs stay bounded while tables come and go: jobs create and drop tables all day,
 * and the logs of dropped tables must not pile up until the next restart.
 */
class WalBoundTest {
  @TempDir
  Path dir;

  private long walBytes() throws IOException {
    try (Stream<Path> files = Files.list(dir.resolve("rocksdb"))) {
      return files.filter(p -> p.getFileName().toString().endsWith(".log"))
          .mapToLong(p -> p.toFile().length()).sum();
    }
  }

  @Test
  void tablesWrittenAndDropped_leaveTheWriteAheadLogsBounded() throws IOException {
    long writtenTotal = 0;
    long peak = 0;
    byte[] value = new byte[16 << 10];
    try (NodeStore store = NodeStore.open(dir)) {
      for (int round = 0; round < 40; round++) {
        String name = "t" + round;
        StoreTable t = store.create(name, TableOptions.getDefaultInstance(), false);
        try (TableBatch b = t.newBatch()) {
          for (int i = 0; i < 512; i++) { // 8 MiB a table, written through the WAL
            b.put(new byte[] {0, 0, (byte) (i >>> 8), (byte) i}, value);
          }
          b.commit();
        }
        writtenTotal += 512L * value.length;
        store.drop(name, false);
        peak = Math.max(peak, walBytes());
      }
    }
    assertTrue(writtenTotal > 2 * NodeStore.MAX_TOTAL_WAL_BYTES, "the test writes more than the bound");
    assertTrue(peak <= NodeStore.MAX_TOTAL_WAL_BYTES + (32L << 20),
        "write-ahead logs reached " + (peak >> 20) + " MiB after " + (writtenTotal >> 20)
            + " MiB written to dropped tables; bound " + (NodeStore.MAX_TOTAL_WAL_BYTES >> 20) + " MiB");
  }
}
