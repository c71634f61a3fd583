package org.sss.server.execution;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertInstanceOf;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;
import static org.sss.server.execution.StageFixture.assertSameContents;
import static org.sss.server.execution.StageFixture.contents;

import java.nio.file.Path;
import java.util.ArrayList;
import java.util.Iterator;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Queue;
import java.util.Random;
import java.util.TreeMap;
import java.util.concurrent.ConcurrentLinkedQueue;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.io.TempDir;
import org.sss.core.api.Emitter;
import org.sss.core.api.Reducer;
import org.sss.core.api.Serdes;
import org.sss.core.api.TaskContext;
import org.sss.core.cluster.ClusterSpec;
import org.sss.core.cluster.PartitionMap;
import org.sss.core.keys.PairTypes;
import org.sss.core.keys.StoredKeys;
import org.sss.core.proto.DataType;
import org.sss.core.proto.StageSpec;
import org.sss.kvs.StoreTable;
import org.sss.kvs.TableBatch;
import org.sss.server.NodeConfig;

/**
 * Reduce tasks of one node over a real multi-valued table: each key of a partition is reduced
 * once, in key order, with all its values and only its own (also for keys that are prefixes of
 * others, and for values the reducer leaves unread), and a reducer that throws fails its task
 * with its own message and writes nothing.
 */
@Timeout(value = 60, unit = TimeUnit.SECONDS, threadMode = Timeout.ThreadMode.SEPARATE_THREAD)
class ReduceTaskTest {
  private static final int PARTITIONS = 8;
  /** Keys that are prefixes of one another, the empty key, and a non-ASCII one. */
  private static final String[] TRICKY = {"", "a", "ab", "abc", "b", "ba", "é", "z"};

  @TempDir
  Path dir;

  private final ClusterSpec spec = StageFixture.cluster(1, PARTITIONS);
  private final PartitionMap map = spec.partitionMap();
  private StageFixture node;

  /** What a reducer saw, in the order it saw it. */
  record Seen(int partition, String key, List<Long> values) {}

  static final Queue<Seen> seen = new ConcurrentLinkedQueue<>();
  static volatile String poisonedKey;

  @BeforeEach
  void open() {
    node = new StageFixture(dir, spec, 0);
    seen.clear();
    poisonedKey = null;
  }

  @AfterEach
  void close() {
    node.close();
  }

  /** Records each key with all its values, and emits their sum; throws at the poisoned key. */
  static final class RecordingSum implements Reducer<String, Long, String, Long> {
    private int partition;

    @Override
    public void setup(TaskContext context) {
      partition = context.partition();
    }

    @Override
    public void reduce(String key, Iterable<Long> values, Emitter<String, Long> out) {
      List<Long> all = new ArrayList<>();
      long sum = 0;
      for (long v : values) {
        all.add(v);
        sum += v;
      }
      seen.add(new Seen(partition, key, all));
      if (key.equals(poisonedKey)) {
        throw new IllegalArgumentException("cannot reduce '" + key + "'");
      }
      out.emit(key, sum);
    }
  }

  /** Reads the first value of keys starting with "a", none of the others. */
  static final class FirstOrNothing implements Reducer<String, Long, String, Long> {
    @Override
    public void reduce(String key, Iterable<Long> values, Emitter<String, Long> out) {
      Iterator<Long> it = values.iterator();
      out.emit(key, key.startsWith("a") ? it.next() : -1L);
    }
  }

  /**
   * Writes a multi-valued table as the shuffle and clients store it: every value under its
   * key's partition with a uniquifier, from several sources. Returns the model, by stored key.
   */
  private TreeMap<byte[], byte[]> writeGrouped(StoreTable t, int keys) {
    TreeMap<byte[], byte[]> model = StageFixture.sorted();
    Random random = new Random(9);
    int[] sources = {0xFFFF, 0, 1, 2};
    List<String> all = new ArrayList<>(List.of(TRICKY));
    for (int i = 0; i < keys; i++) {
      all.add(Long.toString(random.nextLong(), 36));
    }
    try (TableBatch b = t.newBatch()) {
      for (String key : all) {
        byte[] k = Serdes.STRING.encodeKey(key);
        byte[] stored = StoredKeys.storedKey(map.partitionOf(k), k);
        for (int v = 1 + random.nextInt(6); v > 0; v--) {
          byte[] s = StoredKeys.withUniquifier(stored, sources[random.nextInt(4)], random.nextInt(1 << 30));
          byte[] value = Serdes.LONG.encodeValue((long) random.nextInt(1000));
          model.put(s, value);
          b.put(s, value);
        }
      }
      b.commit();
    }
    return model;
  }

  /** The model's keys with their values as a reduce must see them: per partition, keys and values in store order. */
  private static Map<Integer, LinkedHashMap<String, List<Long>>> groups(TreeMap<byte[], byte[]> model) {
    Map<Integer, LinkedHashMap<String, List<Long>>> out = new TreeMap<>();
    model.forEach((stored, v) -> out.computeIfAbsent(StoredKeys.partitionOf(stored), p -> new LinkedHashMap<>())
        .computeIfAbsent(Serdes.STRING.decodeKey(StoredKeys.encodedKey(stored, true)), k -> new ArrayList<>())
        .add(Serdes.LONG.decodeValue(v)));
    return out;
  }

  private StageContext stage(Class<?> reducer, StoreTable in, StoreTable out) {
    StageSpec spec = StageSpec.newBuilder().setIndex(1).setKind(StageSpec.Kind.REDUCE).setInputTable(in.name())
        .setInputMultiValued(true).setOutputTable(out.name()).setFunctionClass(reducer.getName())
        .setInputKeySerde(Serdes.StringSerde.class.getName()).setInputValueSerde(Serdes.LongSerde.class.getName())
        .setOutputKeySerde(Serdes.StringSerde.class.getName()).setOutputValueSerde(Serdes.LongSerde.class.getName())
        .build();
    return node.context(spec, in,
        node.shuffle(out, PairTypes.of(DataType.STRING, DataType.LONG), NodeConfig.DEFAULT_MAX_VALUE));
  }

  private StoreTable input() {
    return node.store.create("grouped", StageFixture.options(true, DataType.STRING, DataType.LONG), false);
  }

  private StoreTable output() {
    return node.jobTable(1, StageFixture.options(false, DataType.STRING, DataType.LONG));
  }

  private static byte[] stored(PartitionMap map, String key) {
    byte[] k = Serdes.STRING.encodeKey(key);
    return StoredKeys.storedKey(map.partitionOf(k), k);
  }

  @Test
  void eachKeyIsReducedOnce_inKeyOrder_withAllItsValues() {
    StoreTable in = input();
    TreeMap<byte[], byte[]> model = writeGrouped(in, 400);
    StoreTable out = output();
    StageContext stage = stage(RecordingSum.class, in, out);
    for (int p : map.partitionsOf(0)) {
      new ReduceTask<String, Long, String, Long>(stage, p, null).run();
    }

    Map<Integer, LinkedHashMap<String, List<Long>>> expected = groups(model);
    Map<Integer, LinkedHashMap<String, List<Long>>> got = new TreeMap<>();
    for (Seen s : seen) {
      List<Long> before = got.computeIfAbsent(s.partition(), p -> new LinkedHashMap<>()).put(s.key(), s.values());
      assertEquals(null, before, "key '" + s.key() + "' reduced twice");
    }
    assertEquals(expected, got); // LinkedHashMap equality ignores order: checked below
    expected.forEach((p, keys) -> assertEquals(new ArrayList<>(keys.keySet()), new ArrayList<>(got.get(p).keySet()),
        "keys of partition " + p + " in the order of their encoding"));

    TreeMap<byte[], byte[]> sums = StageFixture.sorted();
    expected.values().forEach(keys -> keys.forEach((key, values) ->
        sums.put(stored(map, key), Serdes.LONG.encodeValue(values.stream().mapToLong(Long::longValue).sum()))));
    assertSameContents(sums, contents(out));
    assertEquals(model.size(), stage.recordsIn.sum());
    assertEquals(sums.size(), stage.recordsOut.sum());
  }

  @Test
  void valuesAReducerLeavesUnread_doNotReachTheNextKey() {
    StoreTable in = input();
    TreeMap<byte[], byte[]> model = writeGrouped(in, 300);
    StoreTable out = output();
    StageContext stage = stage(FirstOrNothing.class, in, out);
    for (int p : map.partitionsOf(0)) {
      new ReduceTask<String, Long, String, Long>(stage, p, null).run();
    }
    TreeMap<byte[], byte[]> expected = StageFixture.sorted();
    groups(model).values().forEach(keys -> keys.forEach((key, values) ->
        expected.put(stored(map, key), Serdes.LONG.encodeValue(key.startsWith("a") ? values.get(0) : -1L))));
    assertSameContents(expected, contents(out));
    assertEquals(model.size(), stage.recordsIn.sum(), "unread values are counted as read in");
  }

  @Test
  void aReducerThatThrows_failsItsTaskWithItsOwnMessage_andWritesNothing() {
    StoreTable in = input();
    TreeMap<byte[], byte[]> model = writeGrouped(in, 400);
    StoreTable out = output();
    // the third key of its partition: the two before it were reduced and emitted
    int partition = map.partitionOf(Serdes.STRING.encodeKey("ab"));
    List<String> keysOfPartition = new ArrayList<>(groups(model).get(partition).keySet());
    poisonedKey = keysOfPartition.get(2);
    StageContext stage = stage(RecordingSum.class, in, out);
    UserCodeException e = assertThrows(UserCodeException.class,
        () -> new ReduceTask<String, Long, String, Long>(stage, partition, null).run());
    assertTrue(e.getMessage().startsWith("reduce task of job " + StageFixture.JOB + " stage 1 (node 0, partition "
        + partition + "): "), e.getMessage());
    assertTrue(e.getMessage().contains("IllegalArgumentException: cannot reduce '" + poisonedKey + "'"), e.getMessage());
    assertInstanceOf(IllegalArgumentException.class, e.getCause());
    assertEquals(keysOfPartition.subList(0, 3), seen.stream().map(Seen::key).toList(), "no key after the failure");
    assertEquals(2, stage.recordsOut.sum(), "two keys emitted before the failure");
    assertEquals(0, out.count(), "what the failed task emitted is dropped");
    // the node's next task writes normally: nothing of the failed one comes with it
    poisonedKey = null;
    int next = (partition + 1) % PARTITIONS;
    new ReduceTask<String, Long, String, Long>(stage, next, null).run();
    assertEquals(groups(model).get(next).size(), out.count());
  }
}
