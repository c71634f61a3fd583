package org.sss.server.execution;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertInstanceOf;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;
import static org.sss.server.execution.StageFixture.contents;

import java.nio.file.Path;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Random;
import java.util.TreeMap;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.io.TempDir;
import org.sss.core.api.Emitter;
import org.sss.core.api.Mapper;
import org.sss.core.api.Reducer;
import org.sss.core.api.Serdes;
import org.sss.core.api.TaskContext;
import org.sss.core.cluster.ClusterSpec;
import org.sss.core.cluster.PartitionMap;
import org.sss.core.keys.PairTypes;
import org.sss.core.keys.StoredKeys;
import org.sss.core.proto.DataType;
import org.sss.core.proto.StageReport;
import org.sss.core.proto.StageSpec;
import org.sss.kvs.StoreTable;
import org.sss.kvs.TableBatch;
import org.sss.server.NodeConfig;

/**
 * Map tasks of one node (of one, so that every pair stays local) over a real table: each task
 * maps its partition's pairs, decoded, into the runner's output, and user code that throws fails
 * the task with its own message and writes nothing more.
 */
@Timeout(value = 60, unit = TimeUnit.SECONDS, threadMode = Timeout.ThreadMode.SEPARATE_THREAD)
class MapTaskTest {
  private static final int PARTITIONS = 8;
  private static final String[] WORDS = {"a", "ab", "abc", "b", "the", "quick", "brown", "fox", "jumps", "over",
      "lazy", "dog", "é", "x"};

  @TempDir
  Path dir;

  private final ClusterSpec spec = StageFixture.cluster(1, PARTITIONS);
  private final PartitionMap map = spec.partitionMap();
  private StageFixture node;

  /** What the user code of the last stage saw, by class (user objects are made by the engine). */
  static final AtomicInteger mapped = new AtomicInteger();
  static final AtomicInteger mappedAfterFailure = new AtomicInteger();
  static final AtomicInteger cleanups = new AtomicInteger();
  static volatile long poisonedLine = -1;

  @BeforeEach
  void open() {
    node = new StageFixture(dir, spec, 0);
    mapped.set(0);
    mappedAfterFailure.set(0);
    cleanups.set(0);
    poisonedLine = -1;
  }

  @AfterEach
  void close() {
    node.close();
  }

  /** Splits a line into words, each counted once. */
  static final class WordSplit implements Mapper<Long, String, String, Long> {
    @Override
    public void map(Long line, String text, Emitter<String, Long> out) {
      mapped.incrementAndGet();
      for (String w : text.split(" ")) {
        if (!w.isEmpty()) {
          out.emit(w, 1L);
        }
      }
    }
  }

  /** Sums counts: a combiner. */
  static final class Sum implements Reducer<String, Long, String, Long> {
    @Override
    public void reduce(String word, Iterable<Long> counts, Emitter<String, Long> out) {
      long sum = 0;
      for (long c : counts) {
        sum += c;
      }
      out.emit(word, sum);
    }
  }

  /** Emits (value, key): a mapper over a multi-valued table of string keys and long values. */
  static final class Swap implements Mapper<String, Long, Long, String> {
    @Override
    public void map(String key, Long value, Emitter<Long, String> out) {
      out.emit(value, key);
    }
  }

  /** Emits (line, the partition its task says it maps), through the task's context. */
  static final class Where implements Mapper<Long, String, Long, Long> {
    private int partition = -1;

    @Override
    public void setup(TaskContext context) {
      partition = context.partition();
    }

    @Override
    public void map(Long line, String text, Emitter<Long, Long> out) {
      out.emit(line, (long) partition);
    }
  }

  /** Counts words until the poisoned line, and throws there. */
  static final class Poisoned implements Mapper<Long, String, String, Long> {
    private boolean failed;

    @Override
    public void map(Long line, String text, Emitter<String, Long> out) {
      if (failed) {
        mappedAfterFailure.incrementAndGet();
      }
      mapped.incrementAndGet();
      if (line == poisonedLine) {
        failed = true;
        throw new IllegalStateException("poison pill in line " + line);
      }
      out.emit(text, 1L);
    }

    @Override
    public void cleanup(Emitter<String, Long> out) {
      cleanups.incrementAndGet();
    }
  }

  /** A table of numbered lines of words, stored as a client stores them (key partition, then key). */
  private Map<Long, String> writeLines(int n) {
    StoreTable t = node.store.create("lines", StageFixture.options(false, DataType.LONG, DataType.STRING), false);
    Map<Long, String> lines = new HashMap<>();
    Random random = new Random(11);
    try (TableBatch b = t.newBatch()) {
      for (long i = 0; i < n; i++) {
        StringBuilder s = new StringBuilder();
        for (int w = random.nextInt(12); w > 0; w--) {
          s.append(WORDS[random.nextInt(WORDS.length)]).append(random.nextInt(4) == 0 ? "  " : " ");
        }
        lines.put(i, s.toString());
        byte[] key = Serdes.LONG.encodeKey(i);
        b.put(StoredKeys.storedKey(map.partitionOf(key), key), Serdes.STRING.encodeValue(s.toString()));
      }
      b.commit();
    }
    return lines;
  }

  private static StageSpec.Builder stage(String input, String output, Class<?> mapper) {
    return StageSpec.newBuilder().setIndex(0).setKind(StageSpec.Kind.MAP).setInputTable(input).setOutputTable(output)
        .setOutputMultiValued(true).setFunctionClass(mapper.getName())
        .setInputKeySerde(Serdes.LongSerde.class.getName()).setInputValueSerde(Serdes.StringSerde.class.getName())
        .setOutputKeySerde(Serdes.StringSerde.class.getName()).setOutputValueSerde(Serdes.LongSerde.class.getName());
  }

  private StageContext context(StageSpec spec, StoreTable output, PairTypes types) {
    StoreTable input = node.store.require(spec.getInputTable());
    return node.context(spec, input, node.shuffle(output, types, NodeConfig.DEFAULT_MAX_VALUE));
  }

  /** Runs every task of this node's partitions as one runner does: one output, finished at the end. */
  private void runAllTasks(StageContext stage) {
    MapOutput<Object, Object> output = null;
    for (int p : map.partitionsOf(0)) {
      if (output == null) {
        output = new MapOutput<>(stage, p);
      }
      new MapTask<Object, Object, Object, Object>(stage, p, node.readers, output).run();
    }
    output.finish();
  }

  /** The output's values by decoded key, checking each stored key's partition and uniquifier on the way. */
  private Map<Object, List<Object>> valuesByKey(StoreTable out, org.sss.core.api.Serde<?> keys,
                                               org.sss.core.api.Serde<?> values) {
    Map<Object, List<Object>> got = new HashMap<>();
    contents(out).forEach((stored, v) -> {
      byte[] key = StoredKeys.encodedKey(stored, true);
      assertEquals(map.partitionOf(key), StoredKeys.partitionOf(stored), "hash partition of the emitted key");
      int at = stored.length - StoredKeys.UNIQUIFIER_BYTES;
      assertEquals(0, ((stored[at] & 0xFF) << 8) | (stored[at + 1] & 0xFF), "uniquifier source: this node");
      got.computeIfAbsent(keys.decodeKey(key), x -> new ArrayList<>()).add(values.decodeValue(v));
    });
    return got;
  }

  @Test
  void wordCount_everyWordOfEveryLineIsEmittedOnce() {
    Map<Long, String> lines = writeLines(2000);
    StoreTable out = node.jobTable(0, StageFixture.options(true, DataType.STRING, DataType.LONG));
    StageContext stage = context(stage("lines", out.name(), WordSplit.class).build(), out,
        PairTypes.of(DataType.STRING, DataType.LONG));
    runAllTasks(stage);

    Map<String, Long> expected = new TreeMap<>();
    long words = 0;
    for (String line : lines.values()) {
      for (String w : line.split(" ")) {
        if (!w.isEmpty()) {
          expected.merge(w, 1L, Long::sum);
          words++;
        }
      }
    }
    Map<String, Long> counted = new TreeMap<>();
    valuesByKey(out, Serdes.STRING, Serdes.LONG).forEach((w, ones) -> {
      ones.forEach(one -> assertEquals(1L, one));
      counted.put((String) w, (long) ones.size());
    });
    assertEquals(expected, counted);
    assertEquals(2000, mapped.get(), "every line mapped once");
    assertEquals(2000, stage.recordsIn.sum());
    assertEquals(words, stage.recordsOut.sum());
    assertEquals(words, stage.shuffle.pairsShuffled.get());
  }

  @Test
  void wordCount_withACombiner_keepsEveryWordsSum() {
    Map<Long, String> lines = writeLines(2000);
    StoreTable out = node.jobTable(0, StageFixture.options(true, DataType.STRING, DataType.LONG));
    StageContext stage = context(stage("lines", out.name(), WordSplit.class).setCombinerClass(Sum.class.getName())
        .build(), out, PairTypes.of(DataType.STRING, DataType.LONG));
    runAllTasks(stage);

    Map<String, Long> expected = new TreeMap<>();
    for (String line : lines.values()) {
      for (String w : line.split(" ")) {
        if (!w.isEmpty()) {
          expected.merge(w, 1L, Long::sum);
        }
      }
    }
    Map<String, Long> summed = new TreeMap<>();
    valuesByKey(out, Serdes.STRING, Serdes.LONG).forEach((w, counts) ->
        summed.put((String) w, counts.stream().mapToLong(c -> (Long) c).sum()));
    assertEquals(expected, summed);
    assertTrue(out.count() < stage.recordsOut.sum(), "the combiner merged: " + out.count() + " pairs stored");
  }

  @Test
  void multiValuedInput_theMapperSeesEveryValueUnderItsKeyWithoutTheUniquifier() {
    StoreTable in = node.store.create("grouped", StageFixture.options(true, DataType.STRING, DataType.LONG), false);
    Map<Object, List<Object>> expected = new HashMap<>();
    Random random = new Random(5);
    int[] sources = {0xFFFF, 0, 1, 7}; // a client's puts, and shuffles from several nodes
    try (TableBatch b = in.newBatch()) {
      for (int i = 0; i < 1500; i++) {
        String key = WORDS[random.nextInt(WORDS.length)] + random.nextInt(30);
        long value = random.nextLong();
        byte[] k = Serdes.STRING.encodeKey(key);
        b.put(StoredKeys.withUniquifier(StoredKeys.storedKey(map.partitionOf(k), k), sources[i % 4], i),
            Serdes.LONG.encodeValue(value));
        expected.computeIfAbsent(value, x -> new ArrayList<>()).add(key);
      }
      b.commit();
    }
    StoreTable out = node.jobTable(0, StageFixture.options(true, DataType.LONG, DataType.STRING));
    StageSpec spec = stage("grouped", out.name(), Swap.class).setInputMultiValued(true)
        .setInputKeySerde(Serdes.StringSerde.class.getName()).setInputValueSerde(Serdes.LongSerde.class.getName())
        .setOutputKeySerde(Serdes.LongSerde.class.getName()).setOutputValueSerde(Serdes.StringSerde.class.getName())
        .build();
    StageContext stage = context(spec, out, PairTypes.of(DataType.LONG, DataType.STRING));
    runAllTasks(stage);
    Map<Object, List<Object>> got = valuesByKey(out, Serdes.LONG, Serdes.STRING);
    got.values().forEach(l -> l.sort(null));
    expected.values().forEach(l -> l.sort(null));
    assertEquals(expected, got);
    assertEquals(1500, stage.recordsIn.sum());
  }

  @Test
  void eachTaskMapsExactlyThePairsOfItsOwnPartition() {
    Map<Long, String> lines = writeLines(500);
    StoreTable out = node.jobTable(0, StageFixture.options(true, DataType.LONG, DataType.LONG));
    StageSpec spec = stage("lines", out.name(), Where.class).setOutputKeySerde(Serdes.LongSerde.class.getName())
        .build();
    runAllTasks(context(spec, out, PairTypes.of(DataType.LONG, DataType.LONG)));
    Map<Object, List<Object>> got = valuesByKey(out, Serdes.LONG, Serdes.LONG);
    assertEquals(lines.keySet(), got.keySet());
    got.forEach((line, partitions) -> assertEquals(List.of((long) map.partitionOf(Serdes.LONG.encodeKey((Long) line))),
        partitions, "line " + line));
  }

  /** A line of this node's {@code partition}. */
  private long aLineOf(int partition) {
    for (long i = 0; ; i++) {
      if (map.partitionOf(Serdes.LONG.encodeKey(i)) == partition) {
        return i;
      }
    }
  }

  @Test
  void aMapperThatThrows_failsItsTaskWithItsOwnMessage_andMapsNothingMore() {
    writeLines(2000);
    int partition = 5;
    poisonedLine = aLineOf(partition);
    StoreTable out = node.jobTable(0, StageFixture.options(true, DataType.STRING, DataType.LONG));
    StageContext stage = context(stage("lines", out.name(), Poisoned.class).build(), out,
        PairTypes.of(DataType.STRING, DataType.LONG));
    MapOutput<Object, Object> output = new MapOutput<>(stage, partition);
    UserCodeException e = assertThrows(UserCodeException.class,
        () -> new MapTask<Object, Object, Object, Object>(stage, partition, node.readers, output).run());
    assertTrue(e.getMessage().startsWith("map task of job " + StageFixture.JOB + " stage 0 (node 0, partition "
        + partition + "): "), e.getMessage());
    assertTrue(e.getMessage().contains("IllegalStateException: poison pill in line " + poisonedLine), e.getMessage());
    assertInstanceOf(IllegalStateException.class, e.getCause());
    assertEquals(0, mappedAfterFailure.get(), "no pair is mapped after the mapper threw");
    assertEquals(0, cleanups.get(), "a failed task does not clean up as if it had finished");
    assertTrue(mapped.get() >= 1);
  }

  @Test
  void aMapperThatThrows_failsTheStage_andNoneOfItsOutputIsWritten() throws Exception {
    writeLines(2000);
    int partition = 5; // the tasks of partitions 0 to 4 emitted before it: their pairs must not land
    poisonedLine = aLineOf(partition);
    long linesBefore = 0;
    for (long i = 0; i < 2000; i++) {
      if (map.partitionOf(Serdes.LONG.encodeKey(i)) < partition) {
        linesBefore++;
      }
    }
    StoreTable out = node.jobTable(0, StageFixture.options(true, DataType.STRING, DataType.LONG));
    StageContext stage = context(stage("lines", out.name(), Poisoned.class).build(), out,
        PairTypes.of(DataType.STRING, DataType.LONG));
    ExecutorService runners = Executors.newCachedThreadPool();
    try {
      var result = new StageExecution(stage, map.partitionsOf(0), 1, node.readers, runners, TaskTaking.NONE, (t, p) -> false).start();
      ExecutionException e = assertThrows(ExecutionException.class, () -> result.get(30, TimeUnit.SECONDS));
      UserCodeException user = assertInstanceOf(UserCodeException.class, e.getCause());
      assertTrue(user.getMessage().contains("poison pill in line " + poisonedLine), user.getMessage());
    } finally {
      runners.shutdownNow();
    }
    assertTrue(stage.recordsOut.sum() >= linesBefore, "the earlier tasks did emit");
    assertEquals(0, out.count(), "a failed stage's output is dropped, not written");
    assertTrue(mapped.get() > linesBefore, "the tasks before the failed one ran whole");
    assertFalse(mapped.get() > linesBefore + countLinesOf(partition), "no task after the failed one mapped a line");
    assertEquals(0, mappedAfterFailure.get());
  }

  private long countLinesOf(int partition) {
    long n = 0;
    for (long i = 0; i < 2000; i++) {
      if (map.partitionOf(Serdes.LONG.encodeKey(i)) == partition) {
        n++;
      }
    }
    return n;
  }

  @Test
  void aStageThatSucceeds_reportsWhatItMapped() throws Exception {
    writeLines(300);
    StoreTable out = node.jobTable(0, StageFixture.options(true, DataType.STRING, DataType.LONG));
    StageContext stage = context(stage("lines", out.name(), WordSplit.class).build(), out,
        PairTypes.of(DataType.STRING, DataType.LONG));
    ExecutorService runners = Executors.newCachedThreadPool();
    StageReport report;
    try {
      report = new StageExecution(stage, map.partitionsOf(0), 3, node.readers, runners, TaskTaking.NONE, (t, p) -> false).start().get(30, TimeUnit.SECONDS);
    } finally {
      runners.shutdownNow();
    }
    assertEquals(PARTITIONS, report.getTasksDone());
    assertEquals(300, report.getRecordsIn());
    assertEquals(out.count(), report.getRecordsOut());
    assertEquals(out.count(), report.getRecordsShuffled());
  }

  @Test
  void tasksHandedOverWhileRunnersTakeThem_eachRunsOnceHereOrIsHandedOver() throws Exception {
    writeLines(2000);
    for (int round = 0; round < 20; round++) {
      StoreTable out = node.jobTable(100 + round, StageFixture.options(true, DataType.STRING, DataType.LONG));
      StageContext stage = context(stage("lines", out.name(), WordSplit.class).build(), out,
          PairTypes.of(DataType.STRING, DataType.LONG));
      ExecutorService runners = Executors.newCachedThreadPool();
      List<Integer> own = map.partitionsOf(0);
      List<Integer> handed = java.util.Collections.synchronizedList(new ArrayList<>());
      StageReport report;
      try {
        StageExecution execution = new StageExecution(stage, own, 3, node.readers, runners, TaskTaking.NONE,
            (taker, p) -> taker == 1);
        Thread taker = new Thread(() -> {
          while (handed.size() < own.size() / 2) {
            Integer p = execution.handOver(1, own);
            if (p == null) {
              return;
            }
            handed.add(p);
          }
        });
        handed.add(execution.handOver(1, own)); // one before any runner starts: always some handed over
        var result = execution.start();
        taker.start();
        assertNull(execution.handOver(2, own), "node 2 may take nothing");
        report = result.get(30, TimeUnit.SECONDS);
        taker.join();
      } finally {
        runners.shutdownNow();
      }
      List<Integer> all = new ArrayList<>(report.getPartitionsRunList());
      all.addAll(handed);
      java.util.Collections.sort(all);
      assertEquals(own, all, "round " + round + ": ran here " + report.getPartitionsRunList() + ", handed over " + handed);
      assertEquals(own.size() - handed.size(), report.getTasksTotal());
      assertEquals(report.getTasksDone(), report.getTasksTotal());
    }
  }
}
