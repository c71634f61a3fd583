package org.sss.bench.synthetic;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.io.PrintWriter;
import java.io.StringWriter;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.HashMap;
import java.util.HexFormat;
import java.util.List;
import java.util.Map;
import java.util.TreeMap;
import java.util.concurrent.atomic.AtomicReference;
import java.util.zip.CRC32C;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.CsvSource;
import org.sss.bench.synthetic.SyntheticParams.PartitionMethod;
import org.sss.client.ScanOptions;
import org.sss.client.SssClient;
import org.sss.client.TableScan;
import org.sss.client.cluster.SssCluster;
import org.sss.client.internal.ClientInternals;
import org.sss.client.internal.NodeChannels;
import org.sss.client.job.JobResult;
import org.sss.core.api.Pair;
import org.sss.core.keys.KeyCodec;
import org.sss.core.proto.Request;
import org.sss.core.proto.Response;
import org.sss.core.proto.ScanNext;
import org.sss.core.proto.ScanOpen;
import org.sss.core.transport.Frame;
import org.sss.core.transport.PairBlock;

/**
 * Tiny synthetic runs on both engines. Besides the runner's own verification, every SSS run's
 * tables are read back and compared with what the benchmark's documentation says they must
 * hold, worked out here by plain loops ({@link Reference}) rather than by the benchmark's data
 * helpers; where each node's share went is read from the nodes themselves.
 */
class SyntheticRunTest {
  @TempDir
  Path dir;

  static SyntheticParams shuffle(int nodes, PartitionMethod m, boolean combine) {
    // 24 inputs, 3072 intermediate values of 40 bytes over 12 keys, 20-byte outputs
    return new SyntheticParams("t", nodes, 2, 24, 100, 3072, 40, 12, 20, m, combine, 8);
  }

  /**
   * What a run must produce, from the documented layout alone. Input value i: the pattern with i
   * (little-endian) in its first 8 bytes. Map call i emits pairs g = i*m .. i*m+m-1 (m =
   * mapout/initial), or, with fewer pairs than calls, every (initial/mapout)-th call emits pair
   * i/(initial/mapout); pair g has key g mod unique and a raw value: byte 0 = 0, then g in the
   * next 8 bytes, then the pattern. A key's output value: the number of values reduced, the sum
   * of their CRC32C checksums and the key, little-endian, truncated to the output length. With
   * local or shifted placement each node's map output is reduced apart (on that node or the
   * next), so a key has one output value per node whose input reached it.
   *
   * <p>The pattern (a filler whose byte i depends on i only) is taken from the input values the
   * run stored, after checking that they all carry the same one.
   *
   * @param count  values per source group (one group, or one per node) and key
   * @param crcSum checksum sums per source group and key
   */
  record Reference(long inputCrc, long[][] count, long[][] crcSum) {
    /** @param sourceOf the node holding each input key, or null when the keys are reduced together */
    static Reference of(SyntheticParams p, Map<Long, byte[]> inputs, Map<Long, Integer> sourceOf, int nodes) {
      int inLength = p.initialValueLength();
      assertEquals(p.initialKeyCount(), inputs.size(), "input pairs");
      assertTrue(inLength >= p.mapoutValueLength(), "the reference takes the raw values' pattern from the inputs");
      byte[] tail = null;
      long inputCrc = 0;
      for (long i = 0; i < p.initialKeyCount(); i++) {
        byte[] v = inputs.get(i);
        assertEquals(inLength, v.length, "input " + i);
        for (int b = 0; b < Math.min(8, inLength); b++) {
          assertEquals((byte) (i >>> (8 * b)), v[b], "byte " + b + " of input " + i);
        }
        byte[] rest = Arrays.copyOfRange(v, Math.min(8, inLength), inLength);
        if (tail == null) {
          tail = rest;
        }
        assertArrayEquals(tail, rest, "input " + i + " carries the same pattern as input 0");
        inputCrc += SyntheticData.inputDigest(i, crc(v)); // key and value together
      }
      int u = Math.toIntExact(p.mapoutUniqueKeyCount());
      int groups = sourceOf == null ? 1 : nodes;
      long[][] count = new long[groups][u];
      long[][] crcSum = new long[groups][u];
      long initial = p.initialKeyCount();
      long mapout = p.mapoutKeyCount();
      for (long i = 0; i < initial; i++) {
        List<Long> pairs = new ArrayList<>();
        if (mapout >= initial) {
          for (long j = 0; j < mapout / initial; j++) {
            pairs.add(i * (mapout / initial) + j);
          }
        } else if (i % (initial / mapout) == 0) {
          pairs.add(i / (initial / mapout));
        }
        int group = sourceOf == null ? 0 : sourceOf.get(i);
        for (long g : pairs) {
          byte[] raw = new byte[p.mapoutValueLength()];
          for (int b = 9; b < raw.length; b++) {
            raw[b] = tail[b - 8]; // pattern byte b (the input's tail starts at pattern byte 8)
          }
          raw[0] = 0;
          for (int b = 1; b < Math.min(9, raw.length); b++) {
            raw[b] = (byte) (g >>> (8 * (b - 1)));
          }
          int key = (int) (g % u);
          count[group][key]++;
          crcSum[group][key] += crc(raw);
        }
      }
      return new Reference(inputCrc, count, crcSum);
    }

    /** Values per key, over all groups. */
    long[] perKey() {
      long[] out = new long[count[0].length];
      for (long[] g : count) {
        for (int k = 0; k < g.length; k++) {
          out[k] += g[k];
        }
      }
      return out;
    }

    long values() {
      return Arrays.stream(perKey()).sum();
    }

    /** Reduce calls of a correct run: one per (group, key) that received values. */
    long groups() {
      return Arrays.stream(count).flatMapToLong(Arrays::stream).filter(c -> c > 0).count();
    }

    long crcTotal() {
      long t = 0;
      for (long[] g : crcSum) {
        t += Arrays.stream(g).sum();
      }
      return t;
    }

    /** The first bytes (at most 24) of every output value of every key, sorted per key, in hex. */
    Map<Long, List<String>> outputHeads(int length) {
      Map<Long, List<String>> out = new TreeMap<>();
      for (int g = 0; g < count.length; g++) {
        for (int k = 0; k < count[g].length; k++) {
          if (count[g][k] > 0) {
            out.computeIfAbsent((long) k, x -> new ArrayList<>()).add(head(k, count[g][k], crcSum[g][k], length));
          }
        }
      }
      out.values().forEach(l -> l.sort(null));
      return out;
    }

    static String head(long key, long count, long crcSum, int length) {
      byte[] v = new byte[Math.min(24, length)];
      for (int b = 0; b < v.length; b++) {
        long field = b < 8 ? count : b < 16 ? crcSum : key;
        v[b] = (byte) (field >>> (8 * (b % 8)));
      }
      return HexFormat.of().formatHex(v);
    }
  }

  static long crc(byte[] b) {
    CRC32C c = new CRC32C();
    c.update(b, 0, b.length);
    return c.getValue();
  }

  /**
   * The pairs of {@code table} that node {@code node} stores (keys without their partition
   * prefix), read with a scan sent to that node alone.
   */
  static List<Pair> scanNode(SssClient client, int node, String table) {
    List<Pair> out = new ArrayList<>();
    Frame<Response> r = NodeChannels.await(ClientInternals.channels(client).get(node).call(Request.newBuilder()
        .setScanOpen(ScanOpen.newBuilder().setTable(table).setChunkBytes(1 << 20))), Duration.ofSeconds(30));
    while (true) {
      try {
        PairBlock.forEach(r.body().duplicate(), (k, v) -> out.add(new Pair(Arrays.copyOfRange(k, 2, k.length), v)));
      } finally {
        r.release();
      }
      if (r.header().getScan().getDone()) {
        return out;
      }
      long cursor = r.header().getScan().getCursor();
      r = NodeChannels.await(ClientInternals.channels(client).get(node).call(Request.newBuilder()
          .setScanNext(ScanNext.newBuilder().setCursor(cursor))), Duration.ofSeconds(30));
    }
  }

  /**
   * Checks a run's tables and counters against the {@link Reference}, and returns it. Where each
   * input key lives is read from the nodes (a scan of each node), not from the partition map.
   */
  static Reference checkTables(SyntheticParams p, SssClient client, String input, String output, JobResult r) {
    int nodes = client.spec().nodeCount();
    Map<Long, byte[]> inputs = new TreeMap<>();
    Map<Long, Integer> sourceOf = new HashMap<>();
    for (int n = 0; n < nodes; n++) {
      for (Pair pair : scanNode(client, n, input)) {
        long key = KeyCodec.decodeLong(pair.key(), 0);
        assertTrue(sourceOf.put(key, n) == null, "input key " + key + " stored on two nodes");
        inputs.put(key, pair.value());
      }
    }
    Reference ref = Reference.of(p, inputs,
        p.partitionMethod() == PartitionMethod.AVERAGE ? null : sourceOf, nodes);
    assertEquals(p.initialKeyCount(), r.counter(SyntheticData.INPUT_RECORDS));
    assertEquals(ref.inputCrc(), r.counter(SyntheticData.INPUT_CRC));
    assertEquals(p.mapoutKeyCount(), r.counter(SyntheticData.REDUCE_VALUES));
    assertEquals(ref.crcTotal(), r.counter(SyntheticData.REDUCE_CRC));
    assertEquals(ref.groups(), r.counter(SyntheticData.REDUCE_KEYS));

    int outLength = p.reduceoutValueLength();
    Map<Long, List<String>> heads = new TreeMap<>();
    byte[] outTail = null;
    try (TableScan s = client.scan(output, ScanOptions.anyOrder())) {
      while (s.hasNext()) {
        Pair pair = s.next();
        long key = KeyCodec.decodeLong(pair.key(), 0); // multi-valued keys carry a uniquifier after it
        byte[] v = pair.value();
        assertEquals(outLength, v.length, "output value length");
        heads.computeIfAbsent(key, x -> new ArrayList<>())
            .add(HexFormat.of().formatHex(Arrays.copyOf(v, Math.min(24, outLength))));
        if (outLength > 24) {
          byte[] t = Arrays.copyOfRange(v, 24, outLength);
          if (outTail == null) {
            outTail = t;
          }
          assertArrayEquals(outTail, t, "every output value carries the same pattern");
        }
      }
    }
    heads.values().forEach(l -> l.sort(null));
    assertEquals(ref.outputHeads(outLength), heads, "output values per key (count, checksum sum, key)");
    return ref;
  }

  static RunResult runChecked(SssCluster c, SyntheticParams p, AtomicReference<Reference> ref) throws Exception {
    return new SssSyntheticRunner(c, false).run(p, Progress.none(),
        (client, in, out, r) -> ref.set(checkTables(p, client, in, out, r)));
  }

  @ParameterizedTest
  @CsvSource({"1,AVERAGE,false", "3,AVERAGE,false", "3,AVERAGE,true", "1,LOCAL,false", "3,LOCAL,false",
      "3,SHIFTED,false", "3,SHIFTED,true"})
  void sss_embedded_verifies(int nodes, PartitionMethod m, boolean combine) throws Exception {
    SyntheticParams p = shuffle(nodes, m, combine);
    p.validate();
    AtomicReference<Reference> ref = new AtomicReference<>();
    try (SssCluster c = SssCluster.embedded(nodes)) {
      RunResult r = runChecked(c, p, ref);
      assertTrue(r.verified(), r.problem());
      assertTrue(ref.get() != null, "the tables were checked");
      // 24 map calls of 128 pairs each, over 12 keys: 256 values per key
      long[] perKey = new long[12];
      Arrays.fill(perKey, 256);
      assertArrayEquals(perKey, ref.get().perKey());
      assertEquals(3072, r.counters().get("map.recordsOut"));
      if (combine) {
        assertTrue(r.counters().get("map.recordsShuffled") < 3072 / 4, r.counters().toString());
      } else {
        assertEquals(3072, r.counters().get("map.recordsShuffled"));
      }
      if (m == PartitionMethod.AVERAGE) {
        assertEquals(12, r.counters().get("reduce.recordsOut"));
      }
    }
  }

  @Test
  void sss_readShape_andWriteShape_verify() throws Exception {
    try (SssCluster c = SssCluster.embedded(2)) {
      // read shape: fewer intermediate pairs than inputs (every 8th map call emits one)
      SyntheticParams readShape = new SyntheticParams("r", 2, 1, 512, 2048, 64, 1, 16, 1,
          PartitionMethod.AVERAGE, false, 2);
      AtomicReference<Reference> ref = new AtomicReference<>();
      RunResult read = runChecked(c, readShape, ref);
      assertTrue(read.verified(), read.problem());
      long[] fourEach = new long[16];
      Arrays.fill(fourEach, 4);
      assertArrayEquals(fourEach, ref.get().perKey());
      // write shape: many unique keys, big outputs
      SyntheticParams writeShape = new SyntheticParams("w", 2, 1, 16, 1, 8192, 1, 4096, 256,
          PartitionMethod.AVERAGE, false, 2);
      RunResult write = runChecked(c, writeShape, ref);
      assertTrue(write.verified(), write.problem());
      long[] twoEach = new long[4096];
      Arrays.fill(twoEach, 2);
      assertArrayEquals(twoEach, ref.get().perKey());
    }
  }

  @Test
  void sss_embeddedKeepingTwoCopies_verifies_andItsInputAndOutputKeepTwo() throws Exception {
    try (SssCluster c = SssCluster.embedded(3, 24, 2)) {
      assertEquals(2, c.spec().replication());
      SyntheticParams writeShape = new SyntheticParams("w", 3, 1, 16, 1, 8192, 1, 4096, 256,
          PartitionMethod.AVERAGE, false, 2);
      AtomicReference<Reference> ref = new AtomicReference<>();
      int[] copies = new int[2];
      RunResult write = new SssSyntheticRunner(c, false).run(writeShape, Progress.none(), (client, in, out, r) -> {
        copies[0] = client.tableStats(in).spec().replication();
        copies[1] = client.tableStats(out).spec().replication();
        ref.set(checkTables(writeShape, client, in, out, r));
      });
      assertTrue(write.verified(), write.problem());
      assertArrayEquals(new int[] {2, 2}, copies, "input and output tables keep the cluster's two copies");
      long[] twoEach = new long[4096];
      Arrays.fill(twoEach, 2);
      assertArrayEquals(twoEach, ref.get().perKey());
    }
  }

  @Test
  void hadoop_local_verifies_withAndWithoutCombiner_andAgreesWithTheReference() throws Exception {
    // the reference of these parameters, from the input an SSS run stored (same values on both engines)
    AtomicReference<Reference> ref = new AtomicReference<>();
    try (SssCluster c = SssCluster.embedded(1)) {
      assertTrue(runChecked(c, shuffle(1, PartitionMethod.AVERAGE, false), ref).verified());
    }
    HadoopSyntheticRunner h = new HadoopSyntheticRunner(null);
    for (boolean combine : new boolean[] {false, true}) {
      RunResult run = h.run(shuffle(2, PartitionMethod.AVERAGE, combine), Progress.none());
      assertTrue(run.verified(), run.problem());
      Map<String, Long> counters = run.counters();
      assertEquals(24, counters.get("synthetic." + SyntheticData.INPUT_RECORDS));
      assertEquals(ref.get().inputCrc(), counters.get("synthetic." + SyntheticData.INPUT_CRC));
      assertEquals(3072, counters.get("synthetic." + SyntheticData.REDUCE_VALUES));
      assertEquals(ref.get().crcTotal(), counters.get("synthetic." + SyntheticData.REDUCE_CRC));
      assertEquals(12, counters.get("synthetic." + SyntheticData.REDUCE_KEYS));
      assertEquals(12, counters.get("verify.keysReadByKey"));
      assertEquals(3072, counters.get("MAP_OUTPUT_RECORDS"));
      assertEquals(12, counters.get("REDUCE_OUTPUT_RECORDS"));
      if (combine) {
        assertTrue(counters.get("REDUCE_INPUT_RECORDS") < 3072, counters.toString());
      } else {
        assertEquals(3072, counters.get("REDUCE_INPUT_RECORDS"));
      }
    }
  }

  @Test
  void bench_warmsUp_repeats_andWritesResults_andSkipsHadoopForLocalPlacement() throws Exception {
    Path params = dir.resolve("tiny.properties");
    Files.writeString(params, String.join("\n",
        "workloads=avg,loc",
        "nodes=2", "threadsPerNode=1", "totalBytes=64KiB", "initialKeyCount=8", "initialValueLength=4",
        "sweep.mapoutKeyCount=64,256", "mapoutUniqueKeyCount=4", "reduceoutValueLength=8",
        "repeats=2", "warmups=1", "loc.partitionMethod=local", ""));
    List<SweepPlan.Workload> ws = SweepPlan.load(params);
    Path out = dir.resolve("out");
    Report report = new Report(out);
    StringWriter console = new StringWriter();
    List<Record> records = new BenchCommand.Bench(null, Progress.none(), new PrintWriter(console, true))
        .run(ws, report);
    report.finish(ws, records, "test", Report.machine());
    assertTrue(records.stream().filter(r -> r.result() != null).allMatch(Record::verified));
    // one warm-up per series, before its first timed run, of that run's point
    List<Record> warmups = records.stream().filter(Record::warmup).toList();
    assertEquals(List.of("avg sss 64", "avg hadoop 64", "loc sss 64"), warmups.stream()
        .map(r -> r.point().workload() + " " + r.engine() + " " + r.point().value()).toList());
    for (String series : List.of("avg sss", "avg hadoop", "loc sss")) {
      int first = -1;
      for (int i = 0; i < records.size(); i++) {
        Record r = records.get(i);
        if ((r.point().workload() + " " + r.engine()).equals(series) && r.result() != null) {
          first = i;
          break;
        }
      }
      assertTrue(records.get(first).warmup(), series + ": the first run is a warm-up");
    }
    List<String> csv = Files.readAllLines(out.resolve("results.csv"));
    assertEquals(Report.CSV_HEADER, csv.get(0));
    // avg: (2 points x 2 repeats + 1 warm-up) x 2 engines x 2 phases; loc: (2 x 2 + 1) x sss x 2 phases
    assertEquals(1 + 20 + 10, csv.size(), String.join("\n", csv));
    assertTrue(csv.get(1).startsWith("avg,mapoutKeyCount,64,sss,false,warmup,1,load,"), csv.get(1));
    assertTrue(csv.get(3).startsWith("avg,mapoutKeyCount,64,sss,false,timed,1,load,"), csv.get(3));
    assertTrue(csv.get(5).startsWith("avg,mapoutKeyCount,64,sss,false,timed,2,load,"), csv.get(5));
    List<String> summary = Files.readAllLines(out.resolve("summary.csv"));
    assertEquals(Report.SUMMARY_HEADER, summary.get(0));
    // avg: 2 points x 2 engines x 2 phases; loc: 2 points x sss x 2 phases (hadoop skipped)
    assertEquals(1 + 8 + 4, summary.size(), String.join("\n", summary));
    String[] first = summary.get(2).split(",");
    assertEquals("avg,mapoutKeyCount,64,sss,false,job,1,2", String.join(",", List.of(first).subList(0, 8)));
    double median = Double.parseDouble(first[8]);
    double min = Double.parseDouble(first[9]);
    double max = Double.parseDouble(first[10]);
    assertTrue(min <= median && median <= max && min > 0, summary.get(2));
    assertEquals("true", first[11]);
    String md = Files.readString(out.resolve("report.md"));
    assertTrue(md.contains("Hadoop cannot place reducers"), md);
    assertTrue(md.contains("median of 2 timed runs") && md.contains("after 1 untimed warm-up run"), md);
    assertTrue(md.contains("Warm-up runs (untimed") && md.contains("| warm-up 1 |"), md);
    assertTrue(md.contains("every " + JobClock.POLL_MILLIS + " ms on both engines"), md);
    assertTrue(Files.size(out.resolve("avg.png")) > 1000);
    assertTrue(console.toString().contains("hadoop/sss job"), console.toString());
    assertTrue(console.toString().contains("sss job range"), console.toString());
    assertTrue(console.toString().contains("median of 2 timed runs"), console.toString());
    assertFalse(md.contains("FAILED"));
  }
}
