package org.sss.client.job;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import org.sss.client.BulkWriter;
import org.sss.client.ScanOptions;
import org.sss.client.SssClient;
import org.sss.client.TableScan;
import org.sss.client.TableSpec;
import org.sss.client.TableStatus;
import org.sss.client.io.BulkIO;
import org.sss.core.api.Pair;
import org.sss.core.keys.PairTypes;

/** The table and job operations a differential case needs, on one client. */
final class DiffTables {
  static final String TEMPORARY_PREFIX = "sss-tmp-";

  private final SssClient client;

  DiffTables(SssClient client) {
    this.client = client;
  }

  /** Creates a single-valued table of the given types and writes the pairs into it. */
  void load(String table, DiffType keyType, DiffType valueType, List<Pair> pairs) {
    client.createTable(table, TableSpec.of(PairTypes.of(keyType.serde.dataType(), valueType.serde.dataType())), false);
    try (BulkWriter w = client.writer(table, PairTypes.of(keyType.serde, valueType.serde))) {
      for (Pair p : pairs) {
        w.put(p.key(), p.value());
      }
    }
  }

  /**
   * Every pair of a table in key order, keys without the uniquifier of a multi-valued table.
   *
   * @throws IllegalStateException when a multi-valued table holds keys too short to end with
   *                               a uniquifier (pairs not written by a multi-valued shuffle)
   */
  List<Pair> scan(String table) {
    TableSpec options = options(table);
    List<Pair> out = new ArrayList<>();
    int tooShort = 0;
    byte[] example = null;
    try (TableScan s = client.scan(table, ScanOptions.inKeyOrder())) {
      while (s.hasNext()) {
        Pair p = s.next();
        if (options.multiValued() && p.key().length < org.sss.core.keys.StoredKeys.UNIQUIFIER_BYTES) {
          tooShort++;
          example = example == null ? p.key() : example;
        } else {
          out.add(new Pair(BulkIO.userKey(options, p.key()), p.value()));
        }
      }
    }
    if (tooShort > 0) {
      throw new IllegalStateException("multi-valued table '" + table + "' holds " + tooShort + " keys (of "
          + (out.size() + tooShort) + ") shorter than the " + org.sss.core.keys.StoredKeys.UNIQUIFIER_BYTES + "-byte uniquifier, e.g. 0x"
          + java.util.HexFormat.of().formatHex(example) + ": pairs stored without one");
    }
    return out;
  }

  /**
   * Writes a table as {@code sss dump} does, to a temporary file deleted afterwards: the
   * declared key and value types must let tools print every pair.
   */
  void dump(String table) throws IOException {
    Path file = Files.createTempFile("diff-dump", ".tsv");
    try {
      BulkIO.dump(client, table, file, bytes -> { });
    } finally {
      Files.delete(file);
    }
  }

  TableSpec options(String table) {
    return client.tableStats(table).spec();
  }

  boolean exists(String table) {
    return client.listTables().stream().anyMatch(t -> t.name().equals(table));
  }

  /** Tables named like a job's intermediate tables. */
  List<String> temporaryTables() {
    List<String> out = new ArrayList<>();
    for (TableStatus t : client.listTables()) {
      if (t.name().startsWith(TEMPORARY_PREFIX)) {
        out.add(t.name());
      }
    }
    return out;
  }

  void drop(String table) {
    client.dropTable(table, true);
  }

  /**
   * Runs a job to its end, cancelling it after {@code timeout}.
   *
   * @throws JobFailedException when it fails
   * @throws AssertionError     when it does not end in time
   */
  JobResult run(Job job, Duration timeout) throws InterruptedException {
    RunningJob running = client.submit(job);
    long deadline = System.nanoTime() + timeout.toNanos();
    while (!running.isDone()) {
      if (System.nanoTime() > deadline) {
        running.cancel();
        throw new AssertionError("job " + job.name() + " did not end within " + timeout.toSeconds() + " s");
      }
      Thread.sleep(2);
    }
    return running.await();
  }
}
