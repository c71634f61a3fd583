package org.sss.server.execution;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;
import static org.sss.server.execution.StageFixture.assertSameContents;
import static org.sss.server.execution.StageFixture.contents;

import java.nio.ByteBuffer;
import java.nio.file.Path;
import java.util.List;
import java.util.Random;
import java.util.TreeMap;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.io.TempDir;
import org.sss.core.api.Partitioner;
import org.sss.core.cluster.ClusterSpec;
import org.sss.core.cluster.PartitionMap;
import org.sss.core.keys.KeyCodec;
import org.sss.core.keys.PairTypes;
import org.sss.core.keys.StoredKeys;
import org.sss.core.proto.DataType;
import org.sss.kvs.StoreTable;
import org.sss.server.EmbeddedServers;
import org.sss.server.NodeConfig;
import org.sss.server.NodeListener;
import org.sss.server.SssServer;

/**
 * One task's side of the shuffle: each emitted pair lands, with the stored-key layout of
 * {@link StoredKeys}, in the copy of its partition's owner (this node's own table, or another
 * node's through a shuffle batch), and pairs that no node could store are refused before any
 * of them is written.
 */
@Timeout(value = 60, unit = TimeUnit.SECONDS, threadMode = Timeout.ThreadMode.SEPARATE_THREAD)
class ShuffleWriterTest {
  private static final int PARTITIONS = 8;
  private static final PairTypes LONG_BYTES = PairTypes.of(DataType.LONG, DataType.BYTES);

  @TempDir
  Path dir;

  /** The value of the i-th pair a test emits: its index, so a stored pair says when it was emitted. */
  private static byte[] value(int i, int length) {
    byte[] v = new byte[Math.max(4, length)];
    new Random(i).nextBytes(v);
    ByteBuffer.wrap(v).putInt(0, i);
    return v;
  }

  private static int indexOf(byte[] value) {
    return ByteBuffer.wrap(value).getInt(0);
  }

  @Test
  void localPairs_singleValued_landUnderPartitionAndKey_andALaterWriteOfAKeyWins() throws Exception {
    ClusterSpec spec = StageFixture.cluster(1, PARTITIONS);
    try (StageFixture node = new StageFixture(dir, spec, 0)) {
      StoreTable out = node.jobTable(0, StageFixture.options(false, DataType.LONG, DataType.BYTES));
      StageShuffle shuffle = node.shuffle(out, LONG_BYTES, NodeConfig.DEFAULT_MAX_VALUE);
      ShuffleWriter writer = new ShuffleWriter(shuffle, new Partitioner.Hash());
      TreeMap<byte[], byte[]> expected = StageFixture.sorted();
      Random random = new Random(1);
      for (int i = 0; i < 3000; i++) {
        byte[] key = KeyCodec.encodeLong(random.nextInt(1000) - 500); // repeats: the last value stays
        byte[] v = value(i, random.nextInt(300));
        expected.put(StoredKeys.storedKey(spec.partitionMap().partitionOf(key), key), v);
        writer.write(key, v);
      }
      writer.finish();
      shuffle.awaitAcks();
      assertNull(shuffle.failure());
      assertSameContents(expected, contents(out));
      assertEquals(3000, shuffle.pairsShuffled.get());
    }
  }

  /** Keeps every key on partitions of node 1: all of them local to a writer on node 1. */
  static final class OnNodeOne implements Partitioner {
    @Override
    public int partition(byte[] key, PartitionMap map, int sourceNode) {
      List<Integer> mine = map.partitionsOf(1);
      return mine.get((map.partitionOf(key) & 0x7fff) % mine.size());
    }
  }

  @Test
  void localPairs_multiValued_keepEveryValue_uniquifiedByThisNodeWithIncreasingSequences() throws Exception {
    ClusterSpec spec = StageFixture.cluster(2, PARTITIONS);
    try (StageFixture node = new StageFixture(dir, spec, 1)) { // node 1: a source that is not all zero bits
      StoreTable out = node.jobTable(0, StageFixture.options(true, DataType.LONG, DataType.BYTES));
      StageShuffle shuffle = node.shuffle(out, LONG_BYTES, NodeConfig.DEFAULT_MAX_VALUE);
      // two tasks of the stage on this node, writing the same keys
      ShuffleWriter first = new ShuffleWriter(shuffle, new OnNodeOne());
      ShuffleWriter second = new ShuffleWriter(shuffle, new OnNodeOne());
      int n = 1000;
      byte[][] keys = new byte[2 * n][];
      for (int i = 0; i < 2 * n; i++) {
        keys[i] = KeyCodec.encodeLong(i % 50);
        (i < n ? first : second).write(keys[i], value(i, 20));
      }
      first.finish();
      second.finish();
      shuffle.awaitAcks();

      TreeMap<byte[], byte[]> stored = contents(out);
      assertEquals(2 * n, stored.size(), "every value of a key is kept, none overwrites another");
      long[] sequenceOf = new long[2 * n];
      java.util.Arrays.fill(sequenceOf, -1);
      stored.forEach((storedKey, v) -> {
        int i = indexOf(v);
        byte[] key = StoredKeys.encodedKey(storedKey, true);
        assertEquals(java.util.HexFormat.of().formatHex(keys[i]), java.util.HexFormat.of().formatHex(key), "pair " + i);
        assertEquals(new OnNodeOne().partition(key, spec.partitionMap(), 1), StoredKeys.partitionOf(storedKey));
        ByteBuffer uniquifier = ByteBuffer.wrap(storedKey, storedKey.length - StoredKeys.UNIQUIFIER_BYTES,
            StoredKeys.UNIQUIFIER_BYTES);
        assertEquals(1, uniquifier.getShort() & 0xFFFF, "source of pair " + i);
        sequenceOf[i] = uniquifier.getLong();
        // the layout as StoredKeys draws it
        assertEquals(java.util.HexFormat.of().formatHex(StoredKeys.withUniquifier(
            StoredKeys.storedKey(StoredKeys.partitionOf(storedKey), keys[i]), 1, sequenceOf[i])),
            java.util.HexFormat.of().formatHex(storedKey));
      });
      for (int i = 1; i < 2 * n; i++) {
        if (i != n) { // within one writer: in the order written
          assertTrue(sequenceOf[i] > sequenceOf[i - 1], "pair " + i + ": " + sequenceOf[i] + " after " + sequenceOf[i - 1]);
        }
      }
    }
  }

  @Test
  void pairsOfAnotherNode_goThereInBatches_andNoneBeforeItsBufferIsSent() throws Exception {
    List<NodeListener> sockets = EmbeddedServers.bindAll(2, "127.0.0.1");
    ClusterSpec spec = ClusterSpec.of(EmbeddedServers.addresses(sockets, "127.0.0.1"), PARTITIONS, "s3cret");
    sockets.get(0).close(); // node 0 is this test's own store, not a server
    try (SssServer other = SssServer.start(NodeConfig.of(spec, 1, dir.resolve("node1")), sockets.get(1));
         StageFixture node = new StageFixture(dir.resolve("node0"), spec, 0)) {
      var options = StageFixture.options(true, DataType.LONG, DataType.BYTES);
      StoreTable local = node.jobTable(0, options);
      StoreTable remote = other.store().createForJob(StageFixture.JOB, local.name(), options, "", false);
      StageShuffle shuffle = node.shuffle(local, LONG_BYTES, NodeConfig.DEFAULT_MAX_VALUE);
      ShuffleWriter writer = new ShuffleWriter(shuffle, new Partitioner.Hash());
      PartitionMap map = spec.partitionMap();
      TreeMap<byte[], byte[]> expectedLocal = StageFixture.sorted();
      TreeMap<byte[], byte[]> expectedRemote = StageFixture.sorted();
      int i = 0;
      for (; i < 200; i++) { // a few KB: less than a batch for either node
        emit(writer, map, i, 16, expectedLocal, expectedRemote);
      }
      shuffle.awaitAcks(); // whatever was sent is stored by now
      assertEquals(0, remote.count(), "pairs for node 1 wait in its buffer until it fills or the task ends");
      for (; i < 1200; i++) { // 4 KB each: node 1's buffer fills (1 MiB) and is sent while the task runs
        emit(writer, map, i, 4096, expectedLocal, expectedRemote);
      }
      shuffle.awaitAcks();
      long sentEarly = remote.count();
      assertTrue(sentEarly > 0 && sentEarly < expectedRemote.size(), sentEarly + " of " + expectedRemote.size());
      writer.finish();
      shuffle.awaitAcks();
      assertNull(shuffle.failure());
      assertTrue(expectedLocal.size() > 0 && expectedRemote.size() > 0);
      assertSameContents(expectedLocal, contents(local));
      assertSameContents(expectedRemote, contents(remote));
    }
  }

  /** Emits pair {@code i}; its stored form goes into the model of the node owning its partition. */
  private static void emit(ShuffleWriter writer, PartitionMap map, int i, int valueLength,
                           TreeMap<byte[], byte[]> onNode0, TreeMap<byte[], byte[]> onNode1) throws Exception {
    byte[] key = KeyCodec.encodeLong(i * 7919L);
    byte[] v = value(i, valueLength);
    int partition = map.partitionOf(key);
    // one writer, one source (node 0): its i-th pair has sequence i, wherever it goes
    byte[] stored = StoredKeys.withUniquifier(StoredKeys.storedKey(partition, key), 0, i);
    (map.ownerOf(partition) == 0 ? onNode0 : onNode1).put(stored, v);
    writer.write(key, v);
  }

  @Test
  void aKeyOrValueOverTheLimitAsStored_isRefusedNamingItsSize_andTheOthersAreWritten() throws Exception {
    int limit = 100;
    for (boolean multiValued : new boolean[] {false, true}) {
      ClusterSpec spec = StageFixture.cluster(1, PARTITIONS);
      try (StageFixture node = new StageFixture(dir.resolve("mv-" + multiValued), spec, 0)) {
        StoreTable out = node.jobTable(0, StageFixture.options(multiValued, DataType.BYTES, DataType.BYTES));
        StageShuffle shuffle = node.shuffle(out, PairTypes.BYTES, limit);
        ShuffleWriter writer = new ShuffleWriter(shuffle, new Partitioner.Hash());
        int largestKey = limit - StoredKeys.storedLength(0, multiValued); // stored exactly at the limit
        byte[] fits = new byte[largestKey];
        byte[] tooLong = new byte[largestKey + 1];
        tooLong[0] = 1;
        writer.write(fits, new byte[limit]);
        IllegalArgumentException key = assertThrows(IllegalArgumentException.class,
            () -> writer.write(tooLong, new byte[1]));
        assertEquals("an emitted key of " + (limit + 1) + " bytes as stored exceeds the limit of " + limit
            + " bytes (max.value.bytes)", key.getMessage());
        IllegalArgumentException value = assertThrows(IllegalArgumentException.class,
            () -> writer.write(new byte[] {2}, new byte[limit + 1]));
        assertTrue(value.getMessage().startsWith("an emitted value of " + (limit + 1) + " bytes"), value.getMessage());
        writer.finish();
        TreeMap<byte[], byte[]> stored = contents(out);
        assertEquals(1, stored.size(), "only the pair within the limit");
        byte[] storedKey = stored.firstKey();
        assertEquals(limit, storedKey.length);
        assertTrue(StoredKeys.holdsKey(storedKey, fits, multiValued));
        assertEquals(1, shuffle.pairsShuffled.get(), "refused pairs are not counted as shuffled");
      }
    }
  }

  @Test
  void aPartitionerAnsweringOutsideThePartitions_failsNamingThePartition_andNothingIsWritten() throws Exception {
    ClusterSpec spec = StageFixture.cluster(1, PARTITIONS);
    try (StageFixture node = new StageFixture(dir, spec, 0)) {
      StoreTable out = node.jobTable(0, StageFixture.options(false, DataType.BYTES, DataType.BYTES));
      StageShuffle shuffle = node.shuffle(out, PairTypes.BYTES, NodeConfig.DEFAULT_MAX_VALUE);
      for (int bad : new int[] {PARTITIONS, -1, 65_535}) {
        ShuffleWriter writer = new ShuffleWriter(shuffle, (key, map, source) -> bad);
        IllegalArgumentException e = assertThrows(IllegalArgumentException.class,
            () -> writer.write(new byte[] {1}, new byte[] {2}));
        assertEquals("partitioner returned partition " + bad + " outside [0, " + PARTITIONS + ")", e.getMessage());
        writer.finish();
      }
      assertEquals(0, out.count());
    }
  }

  @Test
  void onceTheStageFailedOrWasAborted_aWriteIsRefused() throws Exception {
    ClusterSpec spec = StageFixture.cluster(1, PARTITIONS);
    try (StageFixture node = new StageFixture(dir, spec, 0)) {
      StoreTable out = node.jobTable(0, StageFixture.options(false, DataType.BYTES, DataType.BYTES));
      StageShuffle shuffle = node.shuffle(out, PairTypes.BYTES, NodeConfig.DEFAULT_MAX_VALUE);
      ShuffleWriter writer = new ShuffleWriter(shuffle, new Partitioner.Hash());
      writer.write(new byte[] {1}, new byte[] {1});
      node.aborted.set(true);
      assertThrows(StageAborted.class, () -> writer.write(new byte[] {2}, new byte[] {2}));
      node.aborted.set(false);
      node.failure.set(new IllegalStateException("node 1 went away"));
      assertThrows(StageAborted.class, () -> writer.write(new byte[] {3}, new byte[] {3}));
      writer.discard(); // what a failed task does with what it holds
      assertEquals(0, out.count());
      assertEquals(1, shuffle.pairsShuffled.get());
    }
  }
}
