package org.sss.kvs;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;

import java.nio.file.Path;
import java.util.Random;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;
import org.rocksdb.ColumnFamilyDescriptor;
import org.rocksdb.ColumnFamilyHandle;
import org.rocksdb.Options;
import org.rocksdb.RocksDB;
import org.rocksdb.WriteBatch;

/** The serialized batch made from packed pairs is byte for byte the one RocksJava's own puts make. */
class WriteBatchRepTest {
  @Test
  void madeFromABlock_equalsRocksDbsOwnSerializedBatch(@TempDir Path dir) throws Exception {
    RocksDB.loadLibrary();
    try (Options options = new Options().setCreateIfMissing(true);
         RocksDB db = RocksDB.open(options, dir.toString())) {
      // tables are never the default family (RocksDB writes that one without an id); ids from
      // 128 take two varint bytes: make enough families to reach one
      ColumnFamilyHandle first = db.createColumnFamily(new ColumnFamilyDescriptor("cf0".getBytes()));
      ColumnFamilyHandle handle = first;
      for (int i = 1; i < 130; i++) {
        handle = db.createColumnFamily(new ColumnFamilyDescriptor(("cf" + i).getBytes()));
      }
      for (ColumnFamilyHandle cf : new ColumnFamilyHandle[] {first, handle}) {
        Random random = new Random(cf.getID());
        PackedBatch block = new PackedBatch(null, 64, OrderedStreams.NONE);
        try (WriteBatch expected = new WriteBatch()) {
          for (int i = 0; i < 500; i++) {
            byte[] key = new byte[1 + random.nextInt(200)];
            byte[] value = new byte[random.nextInt(i % 50 == 0 ? 70_000 : 300)];
            random.nextBytes(key);
            random.nextBytes(value);
            block.put(key, value);
            expected.put(cf, key, value);
          }
          SortedRuns.Batch b = block.take();
          assertArrayEquals(expected.data(), WriteBatchRep.of(b.rep(), b.length(), b.count(), cf.getID()),
              "column family " + cf.getID());
          assertThrows(IllegalStateException.class, () -> WriteBatchRep.of(b.rep(), b.length(), b.count() - 1, 0),
              "a block holding more pairs than counted");
        }
      }
    }
  }
}
