package org.sss.kvs;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.io.IOException;
import java.nio.ByteBuffer;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.Random;
import java.util.TreeMap;
import java.util.stream.Stream;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;
import org.sss.core.keys.KeyCodec;
import org.sss.core.keys.StoredKeys;
import org.sss.core.proto.Compression;
import org.sss.core.proto.ErrorCode;
import org.sss.core.proto.TableOptions;

/**
 * Files a writer builds of its pairs, once for every copy ({@link PartitionFiles}), sent whole
 * to another node's table and kept in its own: both copies must hold what was written, the last
 * write of a key winning within a writer, across the point where the writer's pairs stop
 * following their partition's order and go as pairs. Checked against a model of the writes.
 * A received file that is not what its sender announced is refused and leaves nothing.
 */
class PartitionFilesTest {
  private static final TableOptions DEFAULTS = TableOptions.getDefaultInstance();
  private static final int PARTITIONS = 6;

  private static StoreTable jobOutput(NodeStore store) {
    return store.createForJob("j1", "sss-tmp-j1-0", DEFAULTS, "out", false);
  }

  private static byte[] stored(long key) {
    return StoredKeys.storedKey((int) Math.floorMod(key, PARTITIONS), KeyCodec.encodeLong(key));
  }

  /** One writer on the sending node: what {@code ShuffleWriter} does with a stream of a replicated output. */
  private static final class Writer {
    final int id;
    final StoreTable sender;
    final StoreTable receiver;
    PartitionFiles files;
    boolean sendsPairs;
    int filesSent;

    Writer(int id, StoreTable sender, StoreTable receiver) {
      this.id = id;
      this.sender = sender;
      this.receiver = receiver;
    }

    void write(byte[] storedKey, byte[] value) {
      int partition = StoredKeys.partitionOf(storedKey);
      if (!sendsPairs) {
        if (files == null) {
          files = new PartitionFiles(sender, PartitionFiles.MAX_FILE_BYTES);
        }
        if (files.add(partition, storedKey, storedKey.length, value)) {
          for (PartitionFiles.BuiltFile f = files.takeFinished(); f != null; f = files.takeFinished()) {
            ship(f);
          }
          return;
        }
        for (PartitionFiles.BuiltFile f : files.finishAll()) {
          ship(f);
        }
        files.close();
        files = null;
        sendsPairs = true;
      }
      for (StoreTable t : List.of(sender, receiver)) {
        PackedBatch b = t.newPackedBatch(1 << 10, PackedBatch.stream(0, id));
        b.put(storedKey, value);
        b.commit();
      }
    }

    void finish() {
      if (files != null) {
        for (PartitionFiles.BuiltFile f : files.finishAll()) {
          ship(f);
        }
        files.close();
        files = null;
      }
    }

    private void ship(PartitionFiles.BuiltFile f) {
      try (f) {
        ByteBuffer body = ByteBuffer.allocateDirect(Math.toIntExact(f.size()));
        f.readAll(body);
        body.flip();
        receiver.receiveBuiltFile(PackedBatch.stream(0, id), body, f.pairs(), f.firstKey(), f.lastKey(), f.pairBytes());
        f.keep(PackedBatch.stream(0, id));
        filesSent++;
      }
    }
  }

  private static long ingestFiles(Path dir) throws IOException {
    if (!Files.isDirectory(dir.resolve("ingest"))) {
      return 0;
    }
    try (Stream<Path> files = Files.list(dir.resolve("ingest"))) {
      return files.count();
    }
  }

  @Test
  void writersBuildingFiles_thenBreaking_leaveBothCopiesAsWritten(@TempDir Path dir) {
    Random random = new Random(11);
    TreeMap<byte[], byte[]> model = new TreeMap<>(Arrays::compareUnsigned);
    try (NodeStore a = NodeStore.open(dir.resolve("a")); NodeStore b = NodeStore.open(dir.resolve("b"))) {
      StoreTable sender = jobOutput(a);
      StoreTable receiver = jobOutput(b);
      List<Writer> writers = new ArrayList<>();
      for (int w = 1; w <= 4; w++) {
        writers.add(new Writer(w, sender, receiver));
      }
      long[] next = new long[5];
      int[] written = new int[5];
      for (int step = 0; step < 40_000; step++) {
        Writer w = writers.get(random.nextInt(writers.size()));
        long key = w.id * 10_000_000L + next[w.id];
        int dice = random.nextInt(10_000);
        // writer 4 goes back after a few thousand pairs, writer 3 writes a large value once
        if (w.id == 4 && next[4] > 3_000 && dice < 200) {
          key = 4 * 10_000_000L + random.nextInt((int) next[4]); // again, or back
        } else {
          next[w.id] += 1 + random.nextInt(3);
        }
        byte[] value = new byte[w.id == 3 && ++written[3] == 5_000 ? StoreTable.LARGE_VALUE_BYTES + 1
            : 1 + random.nextInt(300)];
        random.nextBytes(value);
        byte[] k = stored(key);
        w.write(k, value);
        model.put(k, value);
      }
      // writer 1 over one partition past a file's size: its files roll over and stay in order
      for (long i = 0; i < PartitionFiles.MAX_FILE_BYTES / 1000 + 100; i++) {
        byte[] k = StoredKeys.storedKey(0, KeyCodec.encodeLong(50_000_000L + i));
        byte[] value = new byte[990];
        random.nextBytes(value);
        writers.get(0).write(k, value);
        model.put(k, value);
      }
      writers.forEach(Writer::finish);
      assertTrue(writers.get(0).filesSent > PARTITIONS, "writer 1's files rolled over: " + writers.get(0).filesSent);
      assertTrue(writers.get(3).sendsPairs, "writer 4 broke");
      assertTrue(writers.get(2).sendsPairs && writers.get(2).filesSent > 0, "writer 3 broke at its large value");
      assertFalse(writers.get(1).sendsPairs, "writer 2 kept its order");
      assertTrue(writers.get(3).filesSent > 0, "writer 4 sent files before it broke");
      a.commit("j1");
      b.commit("j1");
      OrderedStreamsTest.assertHolds(a.require("out"), model);
      OrderedStreamsTest.assertHolds(b.require("out"), model);
    }
  }

  /**
   * The writer's pairs after its break begin below its file and then rise through it, in key
   * order: left a stream of their own, they would make a file that begins first and so is
   * ingested first, under the older file.
   */
  @Test
  void pairsAfterTheBreak_fromBelowTheFileThroughIt_keepTheirLaterValues(@TempDir Path dir) {
    TreeMap<byte[], byte[]> model = new TreeMap<>(Arrays::compareUnsigned);
    try (NodeStore a = NodeStore.open(dir.resolve("a")); NodeStore b = NodeStore.open(dir.resolve("b"))) {
      Writer w = new Writer(1, jobOutput(a), jobOutput(b));
      long[] keys = {100, 101, 102, 103, 50, 101, 102, 104};
      for (int i = 0; i < keys.length; i++) {
        byte[] k = StoredKeys.storedKey(0, KeyCodec.encodeLong(keys[i]));
        byte[] value = {(byte) i};
        w.write(k, value);
        model.put(k, value);
      }
      w.finish();
      assertEquals(1, w.filesSent);
      a.commit("j1");
      b.commit("j1");
      OrderedStreamsTest.assertHolds(a.require("out"), model);
      OrderedStreamsTest.assertHolds(b.require("out"), model);
    }
  }

  /** As above, with a read of both copies (which seals them) between the files and the pairs. */
  @Test
  void aSealBetweenTheFilesAndTheBreak_keepsTheLaterValues(@TempDir Path dir) {
    TreeMap<byte[], byte[]> model = new TreeMap<>(Arrays::compareUnsigned);
    try (NodeStore a = NodeStore.open(dir.resolve("a")); NodeStore b = NodeStore.open(dir.resolve("b"))) {
      Writer w = new Writer(1, jobOutput(a), jobOutput(b));
      long[] keys = {100, 101, 102, 103, 50, 101, 102, 104};
      for (int i = 0; i < keys.length; i++) {
        byte[] k = StoredKeys.storedKey(0, KeyCodec.encodeLong(keys[i]));
        byte[] value = {(byte) i};
        if (i == 4) {
          w.finish(); // the files sent
          OrderedStreamsTest.assertHolds(a.require("sss-tmp-j1-0"), model);
          OrderedStreamsTest.assertHolds(b.require("sss-tmp-j1-0"), model);
          w.sendsPairs = true;
        }
        w.write(k, value);
        model.put(k, value);
      }
      a.commit("j1");
      b.commit("j1");
      OrderedStreamsTest.assertHolds(a.require("out"), model);
      OrderedStreamsTest.assertHolds(b.require("out"), model);
    }
  }

  @Test
  void filesStayWithinTheFrameTheyTravelIn_andAPairOverTheirSizeIsRefused(@TempDir Path dir) {
    int frame = 1 << 20; // the smallest frame limit a node accepts
    long cap = PartitionFiles.maxFileBytesFor(frame);
    assertEquals(frame / 4, cap);
    Random random = new Random(5);
    TableOptions uncompressed = TableOptions.newBuilder().setCompression(Compression.NONE).build();
    try (NodeStore a = NodeStore.open(dir)) {
      // values that do not compress; and the tiniest pairs, uncompressed, whose files are a few times their bytes
      for (StoreTable t : List.of(jobOutput(a), a.createForJob("j1", "sss-tmp-j1-1", uncompressed, "out2", false))) {
        boolean tiny = t.name().endsWith("1");
        PartitionFiles files = new PartitionFiles(t, cap);
        List<PartitionFiles.BuiltFile> built = new ArrayList<>();
        int n = tiny ? 300_000 : 3_000;
        for (long i = 0; i < n; i++) {
          byte[] value = new byte[tiny ? 0 : 1_000];
          random.nextBytes(value);
          byte[] key = tiny ? StoredKeys.storedKey(1, new byte[] {(byte) (i >>> 16), (byte) (i >>> 8), (byte) i})
              : StoredKeys.storedKey(1, KeyCodec.encodeLong(i));
          assertTrue(files.add(1, key, key.length, value));
          for (PartitionFiles.BuiltFile f = files.takeFinished(); f != null; f = files.takeFinished()) {
            built.add(f);
          }
        }
        built.addAll(files.finishAll());
        assertTrue(built.size() > 3, t.name() + ": " + built.size() + " files");
        long pairs = 0;
        byte[] before = null;
        for (PartitionFiles.BuiltFile f : built) {
          assertTrue(f.pairBytes() <= cap, f.pairBytes() + " bytes of pairs");
          assertTrue(f.size() + 2 * f.lastKey().length + (4 << 10) < frame, t.name() + ": " + f.size() + " bytes on disk");
          assertTrue(before == null || Arrays.compareUnsigned(before, f.firstKey()) < 0, "files follow each other");
          before = f.lastKey();
          pairs += f.pairs();
          f.close();
        }
        assertEquals(n, pairs);
        assertFalse(files.add(2, StoredKeys.storedKey(2, KeyCodec.encodeLong(1)), 10, new byte[(int) cap]),
            "a pair over a file's size goes as a pair");
        byte[] longKey = new byte[(int) cap / 8 + 1];
        assertFalse(files.add(3, longKey, longKey.length, new byte[0]), "a key that would crowd the frame goes as a pair");
        files.close();
      }
    }
  }

  @Test
  void moreOpenFilesThanAllowed_finishTheOldestFirst(@TempDir Path dir) {
    try (NodeStore a = NodeStore.open(dir)) {
      PartitionFiles files = new PartitionFiles(jobOutput(a), PartitionFiles.MAX_FILE_BYTES);
      List<Integer> finished = new ArrayList<>();
      for (int p = 0; p < PartitionFiles.MAX_OPEN_FILES + 10; p++) {
        assertTrue(files.add(p, StoredKeys.storedKey(p, KeyCodec.encodeLong(p)), 10, new byte[] {1}));
        for (PartitionFiles.BuiltFile f = files.takeFinished(); f != null; f = files.takeFinished()) {
          finished.add(f.partition());
          f.close();
        }
      }
      assertEquals(List.of(0, 1, 2, 3, 4, 5, 6, 7, 8, 9), finished);
      List<PartitionFiles.BuiltFile> rest = files.finishAll();
      assertEquals(PartitionFiles.MAX_OPEN_FILES, rest.size());
      rest.forEach(PartitionFiles.BuiltFile::close);
      files.close();
    }
  }

  @Test
  void aReceivedFileNotAsAnnounced_isRefusedAndLeavesNothing(@TempDir Path dir) throws IOException {
    try (NodeStore a = NodeStore.open(dir.resolve("a")); NodeStore b = NodeStore.open(dir.resolve("b"))) {
      StoreTable sender = jobOutput(a);
      StoreTable receiver = jobOutput(b);
      PartitionFiles files = new PartitionFiles(sender, PartitionFiles.MAX_FILE_BYTES);
      for (long i = 0; i < 100; i++) {
        assertTrue(files.add(1, StoredKeys.storedKey(1, KeyCodec.encodeLong(i)), 10, new byte[] {(byte) i}));
      }
      try (PartitionFiles.BuiltFile f = files.finishAll().get(0)) {
        ByteBuffer body = ByteBuffer.allocate(Math.toIntExact(f.size()));
        f.readAll(body);
        long stream = PackedBatch.stream(0, 1);
        assertRefused(() -> receiver.receiveBuiltFile(stream, body.duplicate().flip(), 99, f.firstKey(), f.lastKey(), 1),
            "entries");
        assertRefused(() -> receiver.receiveBuiltFile(stream, body.duplicate().flip(), 100, f.lastKey(), f.lastKey(), 1),
            "begin and end");
        assertRefused(() -> receiver.receiveBuiltFile(stream, body.duplicate().flip(), 100, f.firstKey(), f.firstKey(), 1),
            "begin and end");
        ByteBuffer cut = body.duplicate().flip().limit(body.position() / 2);
        assertRefused(() -> receiver.receiveBuiltFile(stream, cut, 100, f.firstKey(), f.lastKey(), 1), "SST");
        assertEquals(0, ingestFiles(dir.resolve("b")), "a refused file is deleted");
        // pairs of the stream first: a file after them would land before them
        PackedBatch p = receiver.newPackedBatch(1 << 10, stream);
        p.put(StoredKeys.storedKey(2, KeyCodec.encodeLong(7)), new byte[] {7});
        p.commit();
        assertRefused(() -> receiver.receiveBuiltFile(stream, body.duplicate().flip(), 100, f.firstKey(), f.lastKey(), 1),
            "came after pairs");
      }
      b.commit("j1");
      assertEquals(1, b.require("out").count(), "only the pair written, nothing of a refused file");
      files.close();
    }
  }

  @Test
  void aFileForADroppedTable_isRefusedAndDeleted(@TempDir Path dir) throws IOException {
    try (NodeStore a = NodeStore.open(dir.resolve("a")); NodeStore b = NodeStore.open(dir.resolve("b"))) {
      PartitionFiles files = new PartitionFiles(jobOutput(a), PartitionFiles.MAX_FILE_BYTES);
      assertTrue(files.add(1, StoredKeys.storedKey(1, KeyCodec.encodeLong(1)), 10, new byte[] {1}));
      StoreTable receiver = jobOutput(b);
      b.drop("sss-tmp-j1-0", false);
      try (PartitionFiles.BuiltFile f = files.finishAll().get(0)) {
        ByteBuffer body = ByteBuffer.allocate(Math.toIntExact(f.size()));
        f.readAll(body);
        StoreException e = assertThrows(StoreException.class, () -> receiver.receiveBuiltFile(PackedBatch.stream(0, 1),
            body.flip(), 1, f.firstKey(), f.lastKey(), 1));
        assertEquals(ErrorCode.NO_SUCH_TABLE, e.code(), e.getMessage());
      }
      assertEquals(0, ingestFiles(dir.resolve("b")));
      assertEquals(0, ingestFiles(dir.resolve("a")), "a file closed unkept is deleted");
    }
  }

  private static void assertRefused(Runnable r, String why) {
    StoreException e = assertThrows(StoreException.class, r::run);
    assertEquals(ErrorCode.BAD_REQUEST, e.code(), e.getMessage());
    assertTrue(e.getMessage().contains(why), e.getMessage());
  }
}
