package org.sss.bench.engine;

import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.Comparator;
import java.util.List;
import java.util.Locale;
import java.util.SplittableRandom;
import java.util.concurrent.Callable;
import org.sss.bench.ResultsDir;
import org.sss.client.BulkWriter;
import org.sss.client.SssClient;
import org.sss.client.TableSpec;
import org.sss.client.cluster.LocalProcessCluster;
import org.sss.client.cluster.SssCluster;
import org.sss.client.job.Job;
import org.sss.client.job.JobResult;
import org.sss.client.job.ProgressListener;
import org.sss.core.api.Serdes;
import org.sss.core.keys.PairTypes;
import org.sss.core.keys.StoredKeys;
import org.sss.core.proto.Compression;
import org.sss.core.proto.DataType;
import org.sss.core.proto.TableOptions;
import org.sss.kvs.KeyRanges;
import org.sss.kvs.NodeStore;
import org.sss.kvs.StoreCursor;
import org.sss.kvs.StoreTable;
import org.sss.kvs.TableBatch;
import picocli.CommandLine.Command;
import picocli.CommandLine.Option;

/**
 * The shuffle path against the machine's limit, and the fixed cost of a job.
 *
 * <p>Run: {@code bin/sss bench-engine --pairs 10000000 --value-bytes 100}
 *
 * <ol>
 *   <li><b>raw</b>: the same pairs written into one RocksDB column family with the options of
 *       an intermediate table (WAL off, no compaction, no compression) in write batches of
 *       1 MiB, then scanned: the write-then-scan rate a shuffle cannot beat on this machine.
 *   <li><b>sss</b>: a map stage emits the pairs (random long keys, so every node sends to
 *       every node) and a reduce stage reads every value of every key, on an embedded 1-node
 *       cluster and on a 3-process cluster. Counters prove every value arrived.
 *   <li><b>empty job</b>: map + reduce over an empty table on the 3-process cluster, median
 *       of repeated runs after warm-up.
 * </ol>
 */
@Command(name = "bench-engine", mixinStandardHelpOptions = true,
    description = "Shuffle throughput (map -> shuffle -> reduce) against raw RocksDB, and empty-job latency.")
public final class ShuffleBenchmark implements Callable<Integer> {
  @Option(names = "--pairs", defaultValue = "10000000", description = "pairs shuffled (default: ${DEFAULT-VALUE})")
  long pairs;

  @Option(names = "--value-bytes", defaultValue = "100", description = "bytes per value (default: ${DEFAULT-VALUE})")
  int valueBytes;

  @Option(names = "--rows", defaultValue = "96", description = "input rows (map calls) (default: ${DEFAULT-VALUE})")
  int rows;

  @Option(names = "--empty-runs", defaultValue = "30", description = "timed empty jobs (default: ${DEFAULT-VALUE})")
  int emptyRuns;

  @Option(names = "--skip-processes", description = "skip the process clusters (3 processes, and the hot key's)")
  boolean skipProcesses;

  @Option(names = "--empty-only", description = "measure only the empty job's latency")
  boolean emptyOnly;

  @Option(names = "--hot-key-only", description = "measure only the hot-key row's memory")
  boolean hotKeyOnly;

  @Option(names = "--hot-key-values", defaultValue = "144",
      description = "values of the hot-key row, all under one key; 0 skips it (default: ${DEFAULT-VALUE})")
  int hotKeyValues;

  @Option(names = "--hot-key-value-mib", defaultValue = "30",
      description = "MiB per value of the hot-key row (default: ${DEFAULT-VALUE})")
  int hotKeyValueMib;

  @Option(names = "--hot-key-heap", defaultValue = "1g",
      description = "heap of the hot-key row's node (default: ${DEFAULT-VALUE})")
  String hotKeyHeap;

  @Option(names = "--out", description = "results directory (default: a new directory under $TMPDIR/sss-results;"
      + " the published figures are in benchmarks/results/engine)")
  Path out;

  private final List<String[]> rowsOut = new ArrayList<>();
  private String hotKeyRow;

  @Override
  public Integer call() throws Exception {
    long perRow = pairs / rows;
    long total = perRow * rows;
    double mb = total * (8.0 + valueBytes) / 1e6;
    System.err.printf("shuffle benchmark: %,d pairs x (8 B key + %d B value) = %.0f MB%n", total, valueBytes, mb);
    double raw = Double.NaN;
    if (hotKeyOnly) {
      hotKey();
      write(Double.NaN);
      return 0;
    }
    if (!emptyOnly) {
      double perPair = rawWriteThenScan(total, false);
      double sorted = rawWriteThenScan(total, true);
      raw = Math.min(perPair, sorted); // the limit is the faster way to use RocksDB
      record("raw-rocksdb", "write (put per pair)+scan", total, perPair, mb, raw);
      record("raw-rocksdb", "sort+write (SST file, ingest)+scan", total, sorted, mb, raw);
      try (SssCluster c = SssCluster.embedded(1)) {
        double s = shuffle(c, perRow, total);
        record("sss-embedded-1", "map+shuffle+reduce", total, s, mb, raw);
      }
    }
    double emptyMedian = Double.NaN;
    if (!skipProcesses) {
      Path dir = Files.createTempDirectory("sss-bench-engine-");
      LocalProcessCluster c = LocalProcessCluster.start(dir, 3, 0, "2g");
      try {
        if (!emptyOnly) {
          double s = shuffle(c, perRow, total);
          record("sss-processes-3", "map+shuffle+reduce", total, s, mb, raw);
        }
        emptyMedian = emptyJob(c);
      } finally {
        c.stopAll();
      }
    }
    if (!emptyOnly && !skipProcesses && hotKeyValues > 0) {
      hotKey();
    }
    write(emptyMedian);
    return 0;
  }

  private void record(String path, String op, long n, double seconds, double mb, double rawSeconds) {
    rowsOut.add(new String[] {path, op, Long.toString(n), String.format("%.2f", seconds),
        String.format("%.0f", n / seconds), String.format("%.1f", mb / seconds),
        String.format("%.2f", rawSeconds / seconds)});
    System.err.printf("%-18s %-20s %,d pairs in %.2f s: %,.0f pairs/s, %.1f MB/s, %.0f%% of raw%n",
        path, op, n, seconds, n / seconds, mb / seconds, 100 * rawSeconds / seconds);
  }

  /**
   * Raw RocksDB with the intermediate table's options, then a scan of everything. Written
   * either into memtables in 1 MiB write batches with a JNI call per pair
   * ({@code WriteBatch.put}), or as RocksDB's fast path for bulk data: runs of 64 MiB sorted
   * in memory, written with {@code SstFileWriter} and ingested ({@link StoreTable#ingestSorted}).
   */
  private double rawWriteThenScan(long total, boolean sortedRuns) throws IOException {
    Path dir = Files.createTempDirectory("sss-bench-raw-");
    try (NodeStore store = NodeStore.open(dir)) {
      StoreTable t = store.create("raw", TableOptions.newBuilder().setMultiValued(true).setDisableWal(true)
          .setDisableAutoCompaction(true).setCompression(Compression.NONE).build(), false);
      byte[] value = new byte[valueBytes];
      long start = System.nanoTime();
      SplittableRandom random = new SplittableRandom(1);
      long bytes = 0;
      TableBatch b = sortedRuns ? null : t.newBatch();
      List<byte[][]> run = new ArrayList<>();
      long runBytes = 0;
      for (long i = 0; i < total; i++) {
        long k = random.nextLong();
        int p = (int) ((k >>> 1) % 24);
        byte[] encoded = new byte[8];
        for (int j = 0; j < 8; j++) {
          encoded[j] = (byte) (k >>> (56 - 8 * j));
        }
        byte[] key = StoredKeys.withUniquifier(StoredKeys.storedKey(p, encoded), 0, i);
        if (sortedRuns) {
          run.add(new byte[][] {key, value});
          runBytes += key.length + value.length;
          if (runBytes >= 64 << 20) {
            ingestRun(t, run);
            runBytes = 0;
          }
          continue;
        }
        b.put(key, value);
        bytes += key.length + value.length;
        if (bytes >= 1 << 20) {
          b.commit();
          b.close();
          b = t.newBatch();
          bytes = 0;
        }
      }
      if (sortedRuns) {
        ingestRun(t, run);
      } else {
        b.commit();
        b.close();
      }
      long scanned = 0;
      for (int p = 0; p < 24; p++) {
        List<byte[][]> ranges = new ArrayList<>();
        ranges.add(KeyRanges.partition(p, new byte[0]));
        try (StoreCursor c = t.scanRanges(ranges, false)) {
          for (; c.valid(); c.next()) {
            scanned += c.value().length;
          }
        }
      }
      double seconds = (System.nanoTime() - start) / 1e9;
      if (scanned != total * valueBytes) {
        throw new IllegalStateException("raw scan read " + scanned + " value bytes, expected " + total * valueBytes);
      }
      return seconds;
    } finally {
      deleteTree(dir);
    }
  }

  private static void ingestRun(StoreTable t, List<byte[][]> run) {
    run.sort((x, y) -> Arrays.compareUnsigned(x[0], y[0]));
    t.ingestSorted(run);
    run.clear();
  }

  /** A table of {@code rows} empty rows keyed 0..rows-1: one map call each. */
  private static void seed(SssClient client, String table, long rows) {
    client.createTable(table, TableSpec.of(PairTypes.of(DataType.LONG, DataType.BYTES)), true);
    try (BulkWriter w = client.writer(table, PairTypes.of(DataType.LONG, DataType.BYTES))) {
      for (long r = 0; r < rows; r++) {
        w.put(Serdes.LONG.encodeKey(r), new byte[0]);
      }
    }
  }

  private double shuffle(SssCluster cluster, long perRow, long total) {
    try (SssClient client = cluster.client()) {
      seed(client, "seed", rows);
      Job job = Job.named("shuffle-bench").input("seed", Serdes.LONG, Serdes.BYTES)
          .map(ShuffleFunctions.Spray.class, Serdes.LONG, Serdes.BYTES)
          .reduce(ShuffleFunctions.CountOnly.class, Serdes.LONG, Serdes.BYTES)
          .output("shuffle-out").overwrite().jarByClass(ShuffleFunctions.class)
          .config("pairs.per.row", Long.toString(perRow))
          .config("value.bytes", Integer.toString(valueBytes))
          .build();
      JobResult r = client.submit(job).await(ProgressListener.console());
      System.err.println();
      if (r.counter("values") != total || r.counter("value.bytes") != total * valueBytes) {
        throw new IllegalStateException("reduce saw " + r.counter("values") + " values, expected " + total);
      }
      client.dropTable("seed", true);
      client.dropTable("shuffle-out", true);
      return r.seconds();
    }
  }

  private double emptyJob(SssCluster cluster) {
    try (SssClient client = cluster.client()) {
      client.createTable("empty", TableSpec.of(PairTypes.of(DataType.LONG, DataType.BYTES)), true);
      Job job = Job.named("empty").input("empty", Serdes.LONG, Serdes.BYTES)
          .map(ShuffleFunctions.Nothing.class, Serdes.LONG, Serdes.BYTES)
          .reduce(ShuffleFunctions.NothingReduced.class, Serdes.LONG, Serdes.BYTES)
          .output("empty-out").overwrite().jarByClass(ShuffleFunctions.class).build();
      for (int i = 0; i < 10; i++) {
        client.submit(job).await();
      }
      double[] times = new double[emptyRuns];
      for (int i = 0; i < emptyRuns; i++) {
        long t0 = System.nanoTime();
        client.submit(job).await();
        times[i] = (System.nanoTime() - t0) / 1e6;
      }
      Arrays.sort(times);
      double median = times[times.length / 2];
      System.err.printf("empty job (map + reduce, 3 processes): median %.1f ms, min %.1f ms, max %.1f ms%n",
          median, times[0], times[times.length - 1]);
      rowsOut.add(new String[] {"sss-processes-3", "empty job (median)", "0", String.format("%.4f", median / 1000),
          "", "", ""});
      return median;
    }
  }

  /**
   * One key whose values are large, reduced on a 1-node process cluster: the node's peak
   * resident memory (the kernel's high-water mark, heap and native memory together) against
   * its heap, since a container is sized to what the process really holds.
   */
  private void hotKey() throws IOException {
    Path dir = Files.createTempDirectory("sss-bench-hotkey-");
    LocalProcessCluster c = LocalProcessCluster.start(dir, 1, 0, hotKeyHeap);
    try (SssClient client = c.client()) {
      int valueBytes = hotKeyValueMib << 20;
      seed(client, "hot-seed", hotKeyValues);
      Job job = Job.named("hot-key").input("hot-seed", Serdes.LONG, Serdes.BYTES)
          .map(ShuffleFunctions.OneKey.class, Serdes.LONG, Serdes.BYTES)
          .reduce(ShuffleFunctions.CountOnly.class, Serdes.LONG, Serdes.BYTES)
          .output("hot-out").overwrite().jarByClass(ShuffleFunctions.class)
          .config("value.bytes", Integer.toString(valueBytes))
          .build();
      JobResult r = client.submit(job).await(ProgressListener.console());
      System.err.println();
      long expectedBytes = (long) hotKeyValues * valueBytes;
      if (r.counter("values") != hotKeyValues || r.counter("value.bytes") != expectedBytes) {
        throw new IllegalStateException("reduce saw " + r.counter("values") + " values, expected " + hotKeyValues);
      }
      long pid = c.pid(0).orElseThrow(() -> new IllegalStateException("node 0 has no process"));
      long peakKiB = peakResidentKiB(pid);
      long heapMiB = heapMiB(hotKeyHeap);
      double gb = expectedBytes / 1e9;
      hotKeyRow = String.format("| %d x %d MiB under one key (%.1f GB) | %s | %.2f | %.1f | %.0f | %.1f |",
          hotKeyValues, hotKeyValueMib, gb, hotKeyHeap, r.seconds(), expectedBytes / 1e6 / r.seconds(),
          peakKiB / 1024.0, peakKiB / 1024.0 / heapMiB);
      System.err.printf("hot key: %d x %d MiB in %.2f s; node peak resident %.0f MiB with a %s heap (%.1fx)%n",
          hotKeyValues, hotKeyValueMib, r.seconds(), peakKiB / 1024.0, hotKeyHeap, peakKiB / 1024.0 / heapMiB);
    } finally {
      c.stopAll();
      deleteTree(dir);
    }
  }

  /** The kernel's high-water mark of a process's resident memory ({@code VmHWM}), in KiB. */
  static long peakResidentKiB(long pid) throws IOException {
    for (String line : Files.readAllLines(Path.of("/proc/" + pid + "/status"))) {
      if (line.startsWith("VmHWM:")) {
        return Long.parseLong(line.replaceAll("[^0-9]", ""));
      }
    }
    throw new IOException("no VmHWM in /proc/" + pid + "/status");
  }

  /** MiB of a heap size written as for {@code -Xmx} (512m, 1g). */
  static long heapMiB(String heap) {
    String h = heap.trim().toLowerCase(Locale.ROOT);
    long n = Long.parseLong(h.replaceAll("[^0-9]", ""));
    return h.endsWith("g") ? n << 10 : h.endsWith("k") ? n >> 10 : h.endsWith("m") ? n : n >> 20;
  }

  private void write(double emptyMedianMs) throws IOException {
    out = ResultsDir.orFresh(out, "engine");
    Files.createDirectories(out);
    StringBuilder csv = new StringBuilder("path,operation,pairs,seconds,pairs_per_s,mb_per_s,ratio_to_raw\n");
    StringBuilder md = new StringBuilder("# Shuffle throughput and job latency\n\n");
    String command = hotKeyOnly ? "bin/sss bench-engine --hot-key-only"
        : (emptyOnly ? "bin/sss bench-engine --empty-only"
            : "bin/sss bench-engine --pairs " + pairs + " --value-bytes " + valueBytes)
            + (emptyRuns != 30 ? " --empty-runs " + emptyRuns : "");
    md.append("Command: `").append(command).append("`\n\n").append(Machine.describe()).append("\n\n");
    if (!rowsOut.isEmpty()) {
      md.append("| path | operation | pairs | seconds | pairs/s | MB/s | ratio to raw |\n|---|---|---|---|---|---|---|\n");
    }
    for (String[] r : rowsOut) {
      csv.append(String.join(",", Arrays.stream(r).map(ShuffleBenchmark::csvField).toList())).append('\n');
      md.append("| ").append(String.join(" | ", r)).append(" |\n");
    }
    if (!Double.isNaN(emptyMedianMs)) {
      md.append("\nEmpty job (map + reduce over an empty table, 3 processes): median **")
          .append(String.format("%.1f", emptyMedianMs)).append(" ms** over ").append(emptyRuns).append(" runs.\n");
    }
    if (hotKeyRow != null) {
      md.append("\n## One hot key of large values: memory\n\n")
          .append("A 1-node process cluster reduces one key holding every value (`--hot-key-values ")
          .append(hotKeyValues).append(" --hot-key-value-mib ").append(hotKeyValueMib).append(" --hot-key-heap ")
          .append(hotKeyHeap).append("`). Peak resident memory is the node's `VmHWM`: heap and native memory.\n\n")
          .append("| values | heap | seconds | MB/s | peak resident MiB | peak resident / heap |\n")
          .append("|---|---|---|---|---|---|\n").append(hotKeyRow).append('\n');
    }
    Files.writeString(out.resolve("results.csv"), csv, StandardCharsets.UTF_8);
    Files.writeString(out.resolve("results.md"), md, StandardCharsets.UTF_8);
    System.err.println("results in " + out.toAbsolutePath());
  }

  /** A CSV field: quoted (RFC 4180) when it holds a comma, a quote or a line break. */
  static String csvField(String f) {
    return f.contains(",") || f.contains("\"") || f.contains("\n") ? "\"" + f.replace("\"", "\"\"") + "\"" : f;
  }

  static void deleteTree(Path dir) throws IOException {
    try (var paths = Files.walk(dir)) {
      paths.sorted(Comparator.reverseOrder()).forEach(p -> p.toFile().delete());
    }
  }
}
