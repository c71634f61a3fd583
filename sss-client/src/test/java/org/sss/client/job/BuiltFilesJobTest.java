package org.sss.client.job;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.TreeMap;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.sss.client.BulkWriter;
import org.sss.client.ScanOptions;
import org.sss.client.SssClient;
import org.sss.client.TableScan;
import org.sss.client.cluster.CopyCheck;
import org.sss.client.cluster.SssCluster;
import org.sss.client.io.BulkIO;
import org.sss.core.api.Emitter;
import org.sss.core.api.Mapper;
import org.sss.core.api.Pair;
import org.sss.core.api.Serdes;
import org.sss.kvs.PartitionFiles;

/**
 * A job's output of two copies travels as SST files its writers build once for every copy
 * (docs/replication.md, Writes): on an embedded cluster of three nodes, outputs are checked
 * against answers computed here, and the two copies of every partition against each other, for writers that stay in key order and
 * for one whose keys go back (its files first, then its pairs, the last value of a key winning).
 */
class BuiltFilesJobTest {
  static final int ROWS = 20_000;
  static SssCluster cluster;
  static SssClient client;

  @BeforeAll
  static void start() throws Exception {
    cluster = SssCluster.embedded(3, 24, 2);
    client = cluster.client();
    client.createTable("rows", BulkIO.textTable(), false);
    try (BulkWriter w = client.writer("rows", BulkIO.textTable().types())) {
      for (long i = 1; i <= ROWS; i++) {
        w.put(Serdes.LONG.encodeKey(i), Serdes.STRING.encodeValue("row " + i));
      }
    }
  }

  @AfterAll
  static void stop() {
    client.close();
    cluster.close();
  }

  /**
   * Emits each row but the task's first, then at the task's end that first row and every tenth
   * row again, with "again", in ascending order: the first goes below the partition's file and
   * the rest rise through it, so the writer sends its files and then these as pairs. Were those
   * pairs kept as a stream of their own on the receiver, their file would begin first, be
   * ingested first, and the file's older values would win.
   */
  public static final class EmitsTenthAgainFromBelow implements Mapper<Long, String, Long, String> {
    private Long first;
    private final List<Long> tenths = new ArrayList<>();

    @Override
    public void map(Long key, String value, Emitter<Long, String> out) {
      if (first == null) {
        first = key;
      } else {
        out.emit(key, value);
      }
      if (key % 10 == 0) {
        tenths.add(key);
      }
    }

    @Override
    public void cleanup(Emitter<Long, String> out) {
      if (first != null && first % 10 != 0) {
        out.emit(first, "row " + first);
      }
      for (long key : tenths) {
        out.emit(key, "again " + key);
      }
    }
  }

  static Map<Long, String> read(String table) {
    Map<Long, String> out = new TreeMap<>();
    try (TableScan s = client.scan(table, ScanOptions.inKeyOrder())) {
      while (s.hasNext()) {
        Pair p = s.next();
        out.put(Serdes.LONG.decodeKey(p.key()), Serdes.STRING.decodeValue(p.value()));
      }
    }
    return out;
  }

  /** The two maps equal; on failure, names the first keys that differ rather than printing both. */
  static void assertSame(Map<Long, String> expected, Map<Long, String> actual) {
    List<String> differ = new ArrayList<>();
    for (Map.Entry<Long, String> e : expected.entrySet()) {
      if (!e.getValue().equals(actual.get(e.getKey())) && differ.size() < 5) {
        differ.add(e.getKey() + ": expected '" + e.getValue() + "', read '" + actual.get(e.getKey()) + "'");
      }
    }
    assertEquals(List.of(), differ, "keys read with another value");
    assertEquals(expected.size(), actual.size(), "pairs read");
  }

  /** Every partition's two copies hold the same pairs (their digests cover keys and values). */
  static void assertCopiesAgree(String table) {
    CopyCheck.Report r = CopyCheck.run(client, table);
    assertEquals(24, r.partitions().size());
    for (CopyCheck.Partition p : r.partitions()) {
      assertEquals(2, p.copies().size(), "partition " + p.partition());
    }
    assertEquals(List.of(), r.differing(), "copies that differ");
    assertEquals(List.of(), r.incomplete(), "copies not compared");
  }

  @Test
  void aCopyInKeyOrder_travelsInBuiltFiles_andEveryCopyHoldsIt() {
    JobResult r = client.submit(Job.named("copy").input("rows", Serdes.LONG, Serdes.STRING)
        .map(Mapper.Identity.class, Serdes.LONG, Serdes.STRING).output("copied").overwrite().build()).await();
    Map<Long, String> expected = new TreeMap<>();
    for (long i = 1; i <= ROWS; i++) {
      expected.put(i, "row " + i);
    }
    assertEquals(ROWS, r.counter(JobResult.BUILT_FILE_PAIRS_COUNTER), "every pair in a built file (counted once,"
        + " however many copies it went to): " + r.counters());
    assertSame(expected, read("copied"));
    assertCopiesAgree("copied");
  }

  @Test
  void aWriterGoingBack_sendsItsFilesThenItsPairs_andTheLastValueWins() {
    JobResult r = client.submit(Job.named("again").input("rows", Serdes.LONG, Serdes.STRING)
        .map(EmitsTenthAgainFromBelow.class, Serdes.LONG, Serdes.STRING).output("again").overwrite().build()).await();
    Map<Long, String> expected = new TreeMap<>();
    for (long i = 1; i <= ROWS; i++) {
      expected.put(i, i % 10 == 0 ? "again " + i : "row " + i);
    }
    long built = r.counter(JobResult.BUILT_FILE_PAIRS_COUNTER);
    assertTrue(built > 0 && built < ROWS + ROWS / 10, "some pairs in built files, not all: " + r.counters());
    assertSame(expected, read("again"));
    assertCopiesAgree("again");
  }

  /**
   * A writer keeps a file open per partition it writes to; over more partitions than it may keep
   * open it would send files of a few pairs each, so it sends pairs, as with one copy.
   */
  @Test
  void overMorePartitionsThanOpenFiles_theOutputTravelsAsPairs() throws Exception {
    int partitions = PartitionFiles.MAX_OPEN_FILES + 9;
    try (SssCluster wide = SssCluster.embedded(3, partitions, 2); SssClient c = wide.client()) {
      c.createTable("rows", BulkIO.textTable(), false);
      Map<Long, String> expected = new TreeMap<>();
      try (BulkWriter w = c.writer("rows", BulkIO.textTable().types())) {
        for (long i = 1; i <= 5_000; i++) {
          w.put(Serdes.LONG.encodeKey(i), Serdes.STRING.encodeValue("row " + i));
          expected.put(i, "row " + i);
        }
      }
      JobResult r = c.submit(Job.named("copy").input("rows", Serdes.LONG, Serdes.STRING)
          .map(Mapper.Identity.class, Serdes.LONG, Serdes.STRING).output("copied").overwrite().build()).await();
      assertEquals(0, r.counter(JobResult.BUILT_FILE_PAIRS_COUNTER), r.counters().toString());
      Map<Long, String> out = new TreeMap<>();
      try (TableScan s = c.scan("copied", ScanOptions.inKeyOrder())) {
        while (s.hasNext()) {
          Pair p = s.next();
          out.put(Serdes.LONG.decodeKey(p.key()), Serdes.STRING.decodeValue(p.value()));
        }
      }
      assertSame(expected, out);
    }
  }

  @Test
  void aReducedOutput_travelsInBuiltFiles() {
    JobResult r = client.submit(Job.named("modten").input("rows", Serdes.LONG, Serdes.STRING)
        .map(TestJobs.ModTen.class, Serdes.LONG, Serdes.LONG)
        .reduce(TestJobs.SumLongs.class, Serdes.LONG, Serdes.LONG)
        .output("sums").overwrite().build()).await();
    Map<Long, Long> expected = new TreeMap<>();
    for (long i = 1; i <= ROWS; i++) {
      expected.merge(i % 10, 1L, Long::sum);
    }
    assertTrue(r.counter(JobResult.BUILT_FILE_PAIRS_COUNTER) >= expected.size(), r.counters().toString());
    Map<Long, Long> out = new TreeMap<>();
    try (TableScan s = client.scan("sums", ScanOptions.inKeyOrder())) {
      while (s.hasNext()) {
        Pair p = s.next();
        out.put(Serdes.LONG.decodeKey(p.key()), Serdes.LONG.decodeValue(p.value()));
      }
    }
    assertEquals(expected, out);
    assertCopiesAgree("sums");
  }
}
