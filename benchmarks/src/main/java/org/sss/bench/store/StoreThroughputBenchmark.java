package org.sss.bench.store;

import java.io.IOException;
import java.io.OutputStream;
import java.io.PrintStream;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.Comparator;
import java.util.List;
import java.util.Locale;
import java.util.concurrent.Callable;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.function.BooleanSupplier;
import java.util.function.Function;
import java.util.stream.Collectors;
import java.util.stream.Stream;
import org.sss.bench.ResultsDir;
import org.sss.bench.classic.ClassicBench;
import org.sss.bench.store.BenchPairs.Checksum;
import org.sss.bench.store.ResultReport.Row;
import org.sss.client.BulkWriter;
import org.sss.client.ScanOptions;
import org.sss.client.SssClient;
import org.sss.client.TableScan;
import org.sss.client.TableSpec;
import org.sss.client.cluster.LocalProcessCluster;
import org.sss.client.cluster.SssCluster;
import org.sss.client.io.BulkIO;
import org.sss.client.job.ProgressListener;
import org.sss.core.api.Pair;
import org.sss.core.keys.PairTypes;
import org.sss.core.proto.Compression;
import org.sss.core.proto.DataType;
import org.sss.core.proto.TableOptions;
import org.sss.kvs.NodeStore;
import org.sss.kvs.StoreCursor;
import org.sss.kvs.StoreTable;
import org.sss.kvs.TableBatch;
import picocli.CommandLine;
import picocli.CommandLine.Command;
import picocli.CommandLine.Option;

/**
 * Put and full-scan throughput of the store, first on raw RocksDB and then through the SSS
 * client into an embedded 1-node cluster and a 3-process local cluster, for two shapes of data:
 * many small pairs (default 10M x (16 B key + 100 B value)) and few large ones (default 16K x
 * (16 B + 64 KiB)).
 *
 * <h2>Running it</h2>
 * From the repository root, after {@code mvn -o -q -B -DskipTests package}:
 *
 * <pre>
 *   bin/sss bench-store --shape both
 * </pre>
 *
 * or without the launcher (same JVM flags as {@code bin/sss}):
 *
 * <pre>
 *   java -Xmx4g -XX:+UseParallelGC -cp 'benchmarks/target/benchmarks-0.1.0-SNAPSHOT.jar:benchmarks/target/lib/*' \
 *       org.sss.bench.store.StoreThroughputBenchmark --shape both
 * </pre>
 *
 * Results go to {@code --out} (default: a new directory under {@code $TMPDIR/sss-results}) as
 * {@code results.md} and {@code results.csv}, with the machine and the command.
 *
 * <h2>What is compared</h2>
 * <ul>
 *   <li>{@code raw-rocksdb}: {@link NodeStore} and {@link StoreTable} in this JVM, with no
 *       network: {@link TableBatch} of {@code --batch-pairs} pairs per commit, then one
 *       {@link StoreTable#scan} over the whole table.</li>
 *   <li>{@code client-embedded-1}: {@link SssClient#writer} ({@link BulkWriter}) and
 *       {@link SssClient#scan} against one node in this JVM, over loopback TCP.</li>
 *   <li>{@code client-processes-3}: the same against three server processes
 *       ({@link LocalProcessCluster}), each with {@code --server-heap}.</li>
 * </ul>
 * Every table has the same {@link TableOptions}: {@code disable_wal=true} and
 * {@code --compression}. The client paths also time a put into a table with the WAL, for
 * information.
 *
 * <h2>Honesty</h2>
 * Every phase is verified, and a mismatch fails the run: the exact count must equal the pairs
 * written and every scan must return pairs whose order-independent checksum equals that of the
 * written pairs (see {@link BenchPairs}). Put times include the final flush (all pairs
 * acknowledged by their node); scan times include reading and hashing every byte returned.
 * Scans run on the data as loaded (no forced compaction) in every path, each once every store
 * of the path reports no flush or compaction pending or running and the path's processes are
 * idle (the wait is untimed).
 *
 * <h2>Warm-up</h2>
 * The server processes start once and serve every shape, as long-running servers do. Before
 * its timed operations, every path (raw included) writes {@code --warmup-bytes} of pairs in a
 * scratch table, scans it until at least {@link #WARMUP_SCAN_PAIRS} pairs have been read,
 * untimed, and drops it: without it, the first scan through freshly started server JVMs cost
 * twice the CPU of later ones (JIT compilation in three JVMs on two cores), which measured the
 * JIT rather than the store.
 */
@Command(name = "bench-store", mixinStandardHelpOptions = true, sortOptions = false,
    description = {"Store put and full-scan throughput, raw RocksDB against the client.",
        "Measures raw RocksDB, then the client into an embedded 1-node cluster and a 3-process local cluster.",
        "Writes results.md and results.csv."})
public final class StoreThroughputBenchmark implements Callable<Integer> {
  static final String TABLE = "bench_store";
  static final String WAL_TABLE = "bench_store_wal";
  static final String WARMUP_TABLE = "bench_store_warmup";

  @Option(names = "--shape", defaultValue = "both",
      description = "small, large, both, or text (the --text-bytes rows only) (default: ${DEFAULT-VALUE})")
  String shape;

  @Option(names = "--pairs", defaultValue = "10000000",
      description = "pairs of the small shape (default: ${DEFAULT-VALUE})")
  long pairs;

  @Option(names = "--value-bytes", defaultValue = "100",
      description = "value bytes of the small shape (default: ${DEFAULT-VALUE})")
  int valueBytes;

  @Option(names = "--large-pairs", defaultValue = "16384",
      description = "pairs of the large shape (default: ${DEFAULT-VALUE})")
  long largePairs;

  @Option(names = "--large-value-bytes", defaultValue = "65536",
      description = "value bytes of the large shape (default: ${DEFAULT-VALUE})")
  int largeValueBytes;

  @Option(names = "--batch-pairs", defaultValue = "1000",
      description = "pairs per raw RocksDB write batch (default: ${DEFAULT-VALUE})")
  int batchPairs;

  @Option(names = "--compression", defaultValue = "lz4",
      description = "table compression: lz4, zstd or none (default: ${DEFAULT-VALUE})")
  String compression;

  @Option(names = "--out",
      description = "directory for results.md and results.csv (default: a new directory under $TMPDIR/sss-results;"
          + " the published figures are in benchmarks/results/store)")
  Path out;

  @Option(names = "--work-dir", description = "where the stores live while measured (default: java.io.tmpdir)")
  Path workDir;

  @Option(names = "--server-heap", defaultValue = "2g",
      description = "-Xmx of each server process (default: ${DEFAULT-VALUE})")
  String serverHeap;

  @Option(names = "--warmup-bytes", defaultValue = "67108864",
      description = "per path and shape, write and scan this many bytes of pairs into a scratch table "
          + "first, untimed (default: ${DEFAULT-VALUE}; 0: no warm-up)")
  long warmupBytes;

  @Option(names = "--replication", defaultValue = "1",
      description = "copies of each partition on the 3-process cluster (default: ${DEFAULT-VALUE})")
  int replication;

  @Option(names = "--settle-seconds", defaultValue = "60",
      description = "before each timed scan, wait at most this long for the stores and processes to be idle"
          + " (default: ${DEFAULT-VALUE})")
  int settleSeconds;

  @Option(names = "--text-bytes", defaultValue = "0",
      description = "bytes of RandomTextWriter text for load and dump rows, beside `dd` of the same file"
          + " (default: none; the published run: 1073741824)")
  long textBytes;

  @Option(names = "--drop-caches", description = "drop the machine's page cache before dd's read (root only;"
      + " without it the read row is read-cached)")
  boolean dropCaches;

  @Option(names = "--skip-processes", description = "skip the 3-process cluster")
  boolean skipProcesses;

  @Option(names = "--skip-embedded", description = "skip the embedded 1-node cluster")
  boolean skipEmbedded;

  @Option(names = "--skip-wal-put", description = "skip the (informational) put with the WAL on")
  boolean skipWalPut;

  @Option(names = "--skip-ordered-scan", description = "skip the (informational) ordered scan")
  boolean skipOrderedScan;

  @Option(names = "--scan-repeats", defaultValue = "3",
      description = "full scans per path and order, each verified; the median is reported (default: ${DEFAULT-VALUE})")
  int scanRepeats;

  @CommandLine.Spec
  CommandLine.Model.CommandSpec spec;

  /** How this command was invoked, for the record; the extension sets the launcher's form. */
  String entryPoint = "java -Xmx4g -XX:+UseParallelGC -cp 'benchmarks/target/benchmarks-0.1.0-SNAPSHOT.jar:"
      + "benchmarks/target/lib/*' org.sss.bench.store.StoreThroughputBenchmark";

  private final PrintStream log = System.out;
  /** Directories this run created, deleted at the end (also on Ctrl-C). */
  private final List<Path> scratchDirs = new CopyOnWriteArrayList<>();
  private ResultReport report;

  public static void main(String[] args) {
    if (System.getProperty("sss.log.level") == null) {
      System.setProperty("sss.log.level", "WARN");
    }
    System.exit(new CommandLine(new StoreThroughputBenchmark()).execute(args));
  }

  @Override
  public Integer call() throws Exception {
    if (!List.of("small", "large", "both", "text").contains(shape)) {
      throw new CommandLine.ParameterException(spec.commandLine(), "--shape must be small, large, both or text");
    }
    if (shape.equals("text") && textBytes <= 0) {
      throw new CommandLine.ParameterException(spec.commandLine(), "--shape text needs --text-bytes");
    }
    if (pairs < 1 || largePairs < 1 || valueBytes < 0 || largeValueBytes < 0 || batchPairs < 1) {
      throw new CommandLine.ParameterException(spec.commandLine(), "sizes must be positive");
    }
    if (workDir == null) {
      workDir = Path.of(System.getProperty("java.io.tmpdir"));
    }
    Files.createDirectories(workDir);
    report = new ResultReport(entryPoint + " " + spec.commandLine().getParseResult().originalArgs().stream()
        .map(a -> a.matches("[A-Za-z0-9_./=:,+-]+") ? a : "'" + a + "'").collect(Collectors.joining(" ")));
    report.setting("table options", "compression=" + options(true).getCompression()
        + ", disable_wal=true (put-wal: disable_wal=false), other TableOptions at their defaults");
    report.setting("raw RocksDB batch", batchPairs + " pairs per WriteBatch");
    report.setting("client writer", "SssClient.writer(table): 1 MiB batches, 4 in flight per node");
    report.setting("server heap (processes)", serverHeap);
    report.setting("replication (processes)", replication + (replication == 1 ? " copy" : " copies") + " of each partition");
    report.setting("scans", scanRepeats + " per path and order, each verified; the median is reported");
    report.setting("work dir", workDir.toAbsolutePath().toString());
    report.setting("warm-up", warmupBytes == 0 ? "none" : String.format(Locale.ROOT,
        "per path and shape, %.0f MiB of pairs written in a scratch table and scanned until %,d pairs were read, "
        + "untimed, then dropped; every timed scan starts once the path's stores report no flush or compaction "
        + "pending or running and its processes are idle (untimed)", warmupBytes / 1048576.0, WARMUP_SCAN_PAIRS));
    long t0 = System.nanoTime();
    Path clusterDir = skipProcesses ? null : Files.createTempDirectory(workDir, "sss-bench-cluster-");
    // on Ctrl-C or kill: stop the servers and delete what this run created
    Thread cleanUpOnExit = new Thread(() -> {
      stopQuietly(clusterDir);
      scratchDirs.forEach(StoreThroughputBenchmark::deleteTree);
    }, "sss-bench-clean-up");
    Runtime.getRuntime().addShutdownHook(cleanUpOnExit);
    if (clusterDir != null) {
      scratchDirs.add(clusterDir);
    }
    try {
      LocalProcessCluster processes = null;
      if (clusterDir != null) {
        // started once and kept for every shape, as servers are: the later shapes meet warm JVMs
        log.printf("starting 3 server processes (heap %s) in %s%n", serverHeap, clusterDir);
        processes = LocalProcessCluster.start(clusterDir, 3, 0, replication, serverHeap);
      }
      if (shape.equals("small") || shape.equals("both")) {
        runShape(shapeName(valueBytes), new BenchPairs(pairs, valueBytes), processes);
      }
      if (shape.equals("large") || shape.equals("both")) {
        runShape(shapeName(largeValueBytes), new BenchPairs(largePairs, largeValueBytes), processes);
      }
      if (textBytes > 0) {
        runText(processes);
      }
    } finally {
      stopQuietly(clusterDir);
      try {
        Runtime.getRuntime().removeShutdownHook(cleanUpOnExit);
      } catch (IllegalStateException shuttingDown) {
        // the hook runs anyway
      }
      scratchDirs.forEach(StoreThroughputBenchmark::deleteTree);
    }
    report.setting("total run time", String.format(Locale.ROOT, "%.0f s", (System.nanoTime() - t0) / 1e9));
    out = ResultsDir.orFresh(out, "store");
    report.write(out);
    log.println();
    log.print(report.markdown());
    log.printf("%nwrote %s and %s%n", out.resolve("results.md"), out.resolve("results.csv"));
    return 0;
  }

  static String shapeName(int valueBytes) {
    String v = valueBytes >= 1024 && valueBytes % 1024 == 0 ? (valueBytes / 1024) + "KiB" : valueBytes + "B";
    return BenchPairs.KEY_BYTES + "B+" + v;
  }

  /** The tables' spec, as the client creates them. */
  private TableSpec tableSpec(boolean disableWal) {
    TableSpec.Compression c = switch (compression.toLowerCase(Locale.ROOT)) {
      case "lz4" -> TableSpec.Compression.LZ4;
      case "zstd" -> TableSpec.Compression.ZSTD;
      case "none" -> TableSpec.Compression.NONE;
      default -> throw new CommandLine.ParameterException(spec.commandLine(),
          "--compression must be lz4, zstd or none");
    };
    return TableSpec.defaults().compression(c).writeAheadLog(!disableWal);
  }

  /** The same tables' options as the store itself takes them (the raw RocksDB paths). */
  private TableOptions options(boolean disableWal) {
    return TableOptions.newBuilder().setCompression(Compression.valueOf(tableSpec(disableWal).compression().name()))
        .setDisableWal(disableWal).build();
  }

  private void runShape(String shapeName, BenchPairs data, LocalProcessCluster processes) throws IOException {
    log.printf("%n== shape %s: %,d pairs, %.1f MB ==%n", shapeName, data.pairs(), data.totalBytes() / 1e6);
    long t0 = System.nanoTime();
    Checksum expected = data.expected();
    log.printf("expected checksum: %s (generated in %.1f s)%n", expected, (System.nanoTime() - t0) / 1e9);

    raw(shapeName, data, expected);
    if (!skipEmbedded) {
      try (SssCluster cluster = SssCluster.embedded(1)) {
        client(shapeName, "client-embedded-1", cluster, new CpuMeter(List.of()), data, expected);
      }
    }
    if (processes != null) {
      List<Long> pids = new ArrayList<>();
      for (int i = 0; i < processes.spec().nodeCount(); i++) {
        pids.add(processes.pid(i).orElseThrow(() -> new IllegalStateException("a server process is not running")));
      }
      client(shapeName, "client-processes-3" + (replication > 1 ? "-r" + replication : ""), processes, new CpuMeter(pids), data, expected);
    }
  }

  // ---- text files in and out, beside dd ---------------------------------------------------

  static final String TEXT_SHAPE = "text";
  static final String DD = "dd";
  private static final String TEXT_TABLE = "bench-text";

  /**
   * The edges: a RandomTextWriter text loaded into a table (the nodes read the file: a job) and
   * dumped into part files (every node writes its partitions), each path after `dd` of the same
   * file, so that a row's ratio to the disk is in the same run.
   */
  private void runText(LocalProcessCluster processes) throws IOException {
    log.printf("%n== shape %s: %,d bytes of RandomTextWriter text ==%n", TEXT_SHAPE, textBytes);
    Path dir = Files.createTempDirectory(workDir, "sss-bench-text-");
    scratchDirs.add(dir);
    Path text = dir.resolve("text.txt");
    long lines = ClassicBench.writeText(text, textBytes, 1);
    long bytes = Files.size(text);
    Path copy = dir.resolve("dd.out");
    try {
      report.add(dd(lines, bytes, "write-cached", copy, "if=" + text, "of=" + copy, "bs=4M"));
      Files.delete(copy);
      report.add(dd(lines, bytes, "write", copy, "if=" + text, "of=" + copy, "bs=4M", "conv=fsync"));
      boolean dropped = dropCaches && dropCaches();
      report.add(dd(lines, bytes, dropped ? "read" : "read-cached", null, "if=" + copy, "of=/dev/null", "bs=4M"));
      Files.delete(copy);
    } catch (IOException e) {
      report.setting("dd", "not measured: " + e.getMessage());
      Files.deleteIfExists(copy);
    }
    report.setting("text rows", "no warm-up: the load is the first job of the embedded node (the processes ran the"
        + " other shapes before)");
    if (!skipEmbedded) {
      try (SssCluster cluster = SssCluster.embedded(1)) {
        textPath("client-embedded-1", cluster, new CpuMeter(List.of()), text, lines, bytes, dir);
      }
    }
    if (processes != null) {
      List<Long> pids = new ArrayList<>();
      for (int i = 0; i < processes.spec().nodeCount(); i++) {
        pids.add(processes.pid(i).orElseThrow(() -> new IllegalStateException("a server process is not running")));
      }
      textPath("client-processes-3" + (replication > 1 ? "-r" + replication : ""), processes, new CpuMeter(pids), text,
          lines, bytes, dir);
    }
    deleteTree(dir);
  }

  /** `dd` itself, as a process: the disk's rate for the same bytes; {@code made}, the file it writes, is checked. */
  private Row dd(long lines, long bytes, String op, Path made, String... args) throws IOException {
    List<String> cmd = new ArrayList<>(List.of("dd"));
    cmd.addAll(List.of(args));
    long t0 = System.nanoTime();
    Process p = new ProcessBuilder(cmd).redirectErrorStream(true).start();
    String said = new String(p.getInputStream().readAllBytes(), StandardCharsets.UTF_8);
    try {
      check(p.waitFor() == 0, "dd " + String.join(" ", args) + " failed: " + said);
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
      throw new IOException(e);
    }
    double seconds = seconds(t0);
    check(made == null || Files.size(made) == bytes, "dd " + op + " wrote " + (made == null ? 0 : Files.size(made))
        + " bytes of " + bytes);
    check(made != null || said.contains(bytes + " bytes"), "dd " + op + " did not read " + bytes + " bytes: " + said);
    log.printf("[%s dd %s]: %,d bytes in %.2f s%n", TEXT_SHAPE, op, bytes, seconds);
    return new Row(TEXT_SHAPE, DD, op, lines, seconds, bytes, Double.NaN, CpuMeter.loadAverage());
  }

  /** Syncs, then drops the page cache, so that dd's read comes from the disk; false without root. */
  private boolean dropCaches() {
    try {
      new ProcessBuilder("sync").inheritIO().start().waitFor();
      Files.writeString(Path.of("/proc/sys/vm/drop_caches"), "3");
      return true;
    } catch (IOException | SecurityException notRoot) {
      return false;
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
      return false;
    }
  }

  private void textPath(String path, SssCluster cluster, CpuMeter cpu, Path text, long lines, long bytes, Path dir)
      throws IOException {
    try (SssClient client = cluster.client()) {
      double cpu0 = cpu.seconds();
      long t0 = System.nanoTime();
      long[] sentByClient = {0};
      long loaded = BulkIO.load(client, TEXT_TABLE, text, DataType.STRING, TableSpec.Compression.LZ4, false,
          n -> sentByClient[0] += n, ProgressListener.none());
      check(sentByClient[0] == 0, path + " load: the nodes did not read the file (the client sent it)");
      double seconds = seconds(t0);
      double cpuSeconds = cpu.seconds() - cpu0;
      double load = CpuMeter.loadAverage();
      check(loaded == lines && client.count(TEXT_TABLE) == lines, path + " load: " + loaded + " lines loaded, "
          + client.count(TEXT_TABLE) + " counted, " + lines + " in the file");
      log.printf("[%s %s load]: %,d lines in %.2f s, verified%n", TEXT_SHAPE, path, lines, seconds);
      report.add(new Row(TEXT_SHAPE, path, "load", lines, seconds, bytes, cpuSeconds, load));

      settle(path, cpu, () -> client.tableStats(TEXT_TABLE).backgroundWork());
      Path parts = dir.resolve("dump-" + path);
      cpu0 = cpu.seconds();
      t0 = System.nanoTime();
      long[] writtenByClient = {0};
      long dumped = BulkIO.dumpParts(client, TEXT_TABLE, parts, false, ProgressListener.none(),
          n -> writtenByClient[0] += n);
      check(writtenByClient[0] == 0 && Files.exists(parts.resolve("_SUCCESS")), path + " dump: the nodes did not"
          + " write the part files (the client did), or no _SUCCESS");
      seconds = seconds(t0);
      cpuSeconds = cpu.seconds() - cpu0;
      load = CpuMeter.loadAverage();
      long partLines = 0;
      long partBytes = 0;
      try (Stream<Path> files = Files.list(parts)) {
        for (Path f : files.filter(f -> f.getFileName().toString().startsWith("part-")).toList()) {
          partBytes += Files.size(f);
          try (Stream<String> l = Files.lines(f, StandardCharsets.ISO_8859_1)) {
            partLines += l.count();
          }
        }
      }
      check(dumped == lines && partLines == lines, path + " dump: " + dumped + " pairs dumped, " + partLines
          + " lines in the part files, " + lines + " loaded");
      log.printf("[%s %s dump]: %,d lines, %,d bytes in %.2f s, verified%n", TEXT_SHAPE, path, lines, partBytes,
          seconds);
      report.add(new Row(TEXT_SHAPE, path, "dump", lines, seconds, partBytes, cpuSeconds, load));
      deleteTree(parts);
      client.dropTable(TEXT_TABLE, true);
    }
  }

  // ---- raw RocksDB ------------------------------------------------------------------------

  private void raw(String shapeName, BenchPairs data, Checksum expected) throws IOException {
    String path = ResultReport.RAW;
    Path dir = Files.createTempDirectory(workDir, "sss-bench-raw-");
    scratchDirs.add(dir);
    try (NodeStore store = NodeStore.open(dir)) {
      long warm = warmupPairs(data);
      if (warm > 0) {
        StoreTable scratch = store.create(WARMUP_TABLE, options(true), false);
        byte[] k = data.newKey();
        byte[] v = data.newValue();
        for (long i = 0; i < warm; ) {
          try (TableBatch batch = scratch.newBatch()) {
            for (; i < warm && batch.count() < batchPairs; i++) {
              BenchPairs.key(i, k);
              BenchPairs.value(i, v);
              batch.put(k, v);
            }
            batch.commit();
          }
        }
        for (int round = 0; round < warmupScans(warm); round++) {
          Checksum scanned = scanRaw(scratch, path, silentProgress(warm, data));
          check(scanned.count() == warm, path + " warm-up: scanned " + scanned.count() + " of " + warm);
        }
        store.drop(WARMUP_TABLE, false);
        log.printf("%s: warm-up of %,d pairs done (untimed)%n", phase(shapeName, path, ""), warm);
      }
      StoreTable table = store.create(TABLE, options(true), false);
      byte[] k = data.newKey();
      byte[] v = data.newValue();
      CpuMeter cpu = new CpuMeter(List.of());
      PhaseProgress progress = new PhaseProgress(phase(shapeName, path, "put"), data.pairs(), data.pairBytes(), log);
      double cpu0 = cpu.seconds();
      long t0 = System.nanoTime();
      TableBatch batch = table.newBatch();
      try {
        for (long i = 0; i < data.pairs(); i++) {
          BenchPairs.key(i, k);
          BenchPairs.value(i, v);
          batch.put(k, v);
          progress.add();
          if (batch.count() == batchPairs) {
            batch.commit();
            batch.close();
            batch = table.newBatch();
          }
        }
        if (batch.count() > 0) {
          batch.commit();
        }
      } finally {
        batch.close();
      }
      double seconds = seconds(t0);
      double cpuSeconds = cpu.seconds() - cpu0;
      double load = CpuMeter.loadAverage();
      long count = table.count();
      check(count == data.pairs(), path + " put: count " + count + " != " + data.pairs());
      progress.finish("count verified");
      report.add(new Row(shapeName, path, "put", data.pairs(), seconds, data.totalBytes(), cpuSeconds, load));

      report.add(timedScan(cpu, shapeName, path, "scan", data, expected,
          () -> settle(path, cpu, () -> table.info().getBackgroundWork()), pr -> scanRaw(table, path, pr)));
    } finally {
      deleteTree(dir);
    }
  }

  // ---- through the client -----------------------------------------------------------------

  /** Stops whatever nodes of the cluster in {@code dir} still run (also after a failed start). */
  private static void stopQuietly(Path dir) {
    try {
      if (dir != null && Files.exists(dir.resolve("cluster.properties"))) {
        LocalProcessCluster.attach(dir).stopAll();
      }
    } catch (IOException | RuntimeException ignored) {
      // best effort: the directory may be gone already
    }
  }

  private void client(String shapeName, String path, SssCluster cluster, CpuMeter cpu, BenchPairs data,
                      Checksum expected) {
    System.gc();
    try (SssClient client = cluster.client()) {
      client.ping();
      long warm = warmupPairs(data);
      if (warm > 0) {
        client.createTable(WARMUP_TABLE, tableSpec(true), false);
        byte[] k = data.newKey();
        byte[] v = data.newValue();
        try (BulkWriter w = client.writer(WARMUP_TABLE, PairTypes.BYTES)) {
          for (long i = 0; i < warm; i++) {
            BenchPairs.key(i, k);
            BenchPairs.value(i, v);
            w.put(k, v);
          }
        }
        for (int round = 0; round < warmupScans(warm); round++) {
          // small chunks and the timed scans' own, in turns: see WARMUP_CHUNK_BYTES
          ScanOptions options = round % 2 == 0 ? ScanOptions.anyOrder().withChunkBytes(WARMUP_CHUNK_BYTES)
              : ScanOptions.anyOrder();
          Checksum scanned = scanClient(client, WARMUP_TABLE, options, path, silentProgress(warm, data));
          check(scanned.count() == warm, path + " warm-up: scanned " + scanned.count() + " of " + warm);
        }
        client.dropTable(WARMUP_TABLE, false);
        log.printf("%s: warm-up of %,d pairs done (untimed)%n", phase(shapeName, path, ""), warm);
      }
      client.createTable(TABLE, tableSpec(true), false);
      report.add(put(client, cpu, TABLE, shapeName, path, "put", data));
      report.add(scan(client, cpu, shapeName, path, "scan", ScanOptions.anyOrder(), data, expected));
      if (!skipOrderedScan) {
        report.add(scan(client, cpu, shapeName, path, "scan-ordered", ScanOptions.inKeyOrder(), data, expected));
      }
      client.dropTable(TABLE, false);
      if (!skipWalPut) {
        client.createTable(WAL_TABLE, tableSpec(false), false);
        report.add(put(client, cpu, WAL_TABLE, shapeName, path, "put-wal", data));
        client.dropTable(WAL_TABLE, false);
      }
    }
  }

  private Row put(SssClient client, CpuMeter cpu, String table, String shapeName, String path, String op,
                  BenchPairs data) {
    byte[] k = data.newKey();
    byte[] v = data.newValue();
    PhaseProgress progress = new PhaseProgress(phase(shapeName, path, op), data.pairs(), data.pairBytes(), log);
    double cpu0 = cpu.seconds();
    long t0 = System.nanoTime();
    try (BulkWriter w = client.writer(table, PairTypes.BYTES)) {
      for (long i = 0; i < data.pairs(); i++) {
        BenchPairs.key(i, k);
        BenchPairs.value(i, v);
        w.put(k, v);
        progress.add();
      }
      w.flush();
      check(w.acknowledged() == data.pairs(), path + " " + op + ": " + w.acknowledged()
          + " pairs acknowledged, " + data.pairs() + " written");
    }
    double seconds = seconds(t0);
    double cpuSeconds = cpu.seconds() - cpu0;
    double load = CpuMeter.loadAverage();
    long count = client.count(table);
    check(count == data.pairs(), path + " " + op + ": count " + count + " != " + data.pairs());
    progress.finish("count verified");
    return new Row(shapeName, path, op, data.pairs(), seconds, data.totalBytes(), cpuSeconds, load);
  }

  private Row scan(SssClient client, CpuMeter cpu, String shapeName, String path, String op, ScanOptions options,
                   BenchPairs data, Checksum expected) {
    return timedScan(cpu, shapeName, path, op, data, expected,
        () -> settle(path, cpu, () -> client.tableStats(TABLE).backgroundWork()),
        pr -> scanClient(client, TABLE, options, path + " " + op, pr));
  }

  /**
   * Runs a full scan {@code --scan-repeats} times, verifying each, and reports the one of
   * median time. A scan changes nothing, so repeats measure the same store; the median keeps a
   * scan that met a late JIT compilation or a collector's pause from deciding the row.
   */
  private Row timedScan(CpuMeter cpu, String shapeName, String path, String op, BenchPairs data, Checksum expected,
                        Runnable settle, Function<PhaseProgress, Checksum> scanOnce) {
    List<Row> rows = new ArrayList<>();
    for (int i = 0; i < scanRepeats; i++) {
      settle.run();
      String name = op + (scanRepeats > 1 ? " #" + (i + 1) : "");
      PhaseProgress progress = new PhaseProgress(phase(shapeName, path, name), data.pairs(), data.pairBytes(), log);
      double cpu0 = cpu.seconds();
      long t0 = System.nanoTime();
      Checksum got = scanOnce.apply(progress);
      double seconds = seconds(t0);
      double cpuSeconds = cpu.seconds() - cpu0;
      verify(path + " " + name, got, expected);
      progress.finish("checksum verified");
      rows.add(new Row(shapeName, path, op, data.pairs(), seconds, data.totalBytes(), cpuSeconds,
          CpuMeter.loadAverage()));
    }
    rows.sort(Comparator.comparingDouble(Row::seconds));
    return rows.get(rows.size() / 2);
  }

  // ---- helpers ----------------------------------------------------------------------------

  private static String phase(String shapeName, String path, String op) {
    return "[" + shapeName + " " + path + (op.isEmpty() ? "" : " " + op) + "]";
  }

  /**
   * Progress that prints nowhere, for warm-up scans: they run the timed scans' code, progress
   * included, so the JIT compiles it with the same profile (a warm-up without progress left a
   * branch the timed scans took, and their compiled loops were thrown away and recompiled).
   */
  private static PhaseProgress silentProgress(long pairs, BenchPairs data) {
    return new PhaseProgress("warm-up", pairs, data.pairBytes(), new PrintStream(OutputStream.nullOutputStream()));
  }

  /**
   * Reads a whole table straight from RocksDB into a checksum, checking key order. The warm-up
   * runs this very method, so that the timed scan runs code the JIT has already compiled.
   */
  private static Checksum scanRaw(StoreTable table, String what, PhaseProgress progress) {
    Checksum got = new Checksum();
    try (StoreCursor c = table.scan(null, null)) {
      byte[] previous = null;
      for (; c.valid(); c.next()) {
        byte[] key = c.key();
        got.add(key, c.value());
        if (previous != null && Arrays.compareUnsigned(previous, key) >= 0) {
          throw new IllegalStateException(what + " scan: keys out of order");
        }
        previous = key;
        progress.add();
      }
    }
    return got;
  }

  /** The client's counterpart of {@link #scanRaw}; checks key order for ordered scans. */
  private static Checksum scanClient(SssClient client, String table, ScanOptions options, String what,
                                     PhaseProgress progress) {
    Checksum got = new Checksum();
    try (TableScan s = client.scan(table, options)) {
      byte[] previous = null;
      while (s.hasNext()) {
        Pair p = s.next();
        got.add(p.key(), p.value());
        if (options.ordered()) {
          if (previous != null && Arrays.compareUnsigned(previous, p.key()) >= 0) {
            throw new IllegalStateException(what + ": keys out of order");
          }
          previous = p.key();
        }
        progress.add();
      }
    }
    return got;
  }

  /**
   * Waits, untimed, until the path's stores report no flush or compaction pending or running and
   * its processes are idle (at most {@code --settle-seconds}), so that every path's scan reads a settled store
   * on quiet JVMs, as a scan long after the load would. Otherwise two kinds of leftover work
   * share the two cores with the scan, by amounts that vary from run to run: compacting what the
   * put just wrote (the raw scan alone ranged from 0.38 to 0.86 s), and the JIT's queue of
   * methods that crossed their compile thresholds while the warm-up kept every core busy
   * (profiled: compiler threads took 40% of the CPU during timed client scans).
   */
  private void settle(String path, CpuMeter cpu, BooleanSupplier busy) {
    long t0 = System.nanoTime();
    long deadline = t0 + settleSeconds * 1_000_000_000L;
    try {
      while (System.nanoTime() < deadline) {
        double c0 = cpu.seconds();
        Thread.sleep(IDLE_WINDOW_MILLIS);
        boolean idle = cpu.seconds() - c0 < IDLE_CPU_FRACTION * IDLE_WINDOW_MILLIS / 1000.0;
        if (idle && !busy.getAsBoolean()) {
          break;
        }
      }
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
    }
    log.printf("%s: stores and processes settled after %.1f s (untimed)%n", path, seconds(t0));
  }

  /** Processes count as idle when they used under 10% of one core over 300 ms. */
  private static final long IDLE_WINDOW_MILLIS = 300;
  private static final double IDLE_CPU_FRACTION = 0.10;

  /**
   * Pairs the warm-up scans read in all, at least: the JIT compiles a method fully after about
   * 15,000 calls, so a warm-up of a thousand large pairs, scanned once, left the per-pair code of
   * the client and of every server (each serving a third of the pairs) to be compiled during the
   * timed scan (profiled: a third of the CPU in compiler threads).
   */
  static final long WARMUP_SCAN_PAIRS = 150_000;

  /**
   * Chunk size of the client's warm-up scans. Code that runs once per chunk (a request's
   * decoding, the reply's framing) runs a thousand times per GiB at the default 1 MiB: the
   * warm-up's few GiB of large pairs left it to be compiled during the timed scans (profiled:
   * compiler threads at 30-40% of the CPU in every timed scan, compiling request and response
   * parsers). Small warm-up chunks run it once per pair or two. Warm-up scans alternate them
   * with the default chunks, so that the compiled code also knows the branches large frames take
   * (small chunks alone left those untaken, and the timed scans threw the code away again).
   */
  static final int WARMUP_CHUNK_BYTES = 64 << 10;

  /**
   * How many times the warm-up table is scanned: until {@link #WARMUP_SCAN_PAIRS} were read, at
   * most {@link #MAX_WARMUP_SCANS} times (a warm-up of a few pairs is a test's, whose thousands
   * of scans would take half a minute and warm nothing that is measured).
   */
  static long warmupScans(long warmPairs) {
    return Math.max(1, Math.min(MAX_WARMUP_SCANS, (WARMUP_SCAN_PAIRS + warmPairs - 1) / warmPairs));
  }

  /** More than the default large shape needs (64 MiB of 64 KiB pairs: 147 scans). */
  static final long MAX_WARMUP_SCANS = 200;

  /** Pairs of the untimed warm-up: {@code --warmup-bytes} worth, at most the measured count. */
  private long warmupPairs(BenchPairs data) {
    return Math.min(data.pairs(), warmupBytes / data.pairBytes());
  }

  private static double seconds(long startNanos) {
    return (System.nanoTime() - startNanos) / 1e9;
  }

  private static void verify(String what, Checksum got, Checksum expected) {
    check(got.matches(expected), what + ": got " + got + ", expected " + expected);
  }

  private static void check(boolean ok, String message) {
    if (!ok) {
      throw new IllegalStateException("verification failed: " + message);
    }
  }

  private static void deleteTree(Path dir) {
    if (!Files.exists(dir)) {
      return;
    }
    try (Stream<Path> paths = Files.walk(dir)) {
      paths.sorted(Comparator.reverseOrder()).forEach(p -> p.toFile().delete());
    } catch (IOException ignored) {
      // best effort: a temporary directory
    }
  }
}
