package org.sss.client.job;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.util.Map;
import java.util.TreeMap;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.sss.client.BulkWriter;
import org.sss.client.ScanOptions;
import org.sss.client.SssClient;
import org.sss.client.TableScan;
import org.sss.client.TableSpec;
import org.sss.client.cluster.SssCluster;
import org.sss.client.io.BulkIO;
import org.sss.core.api.Emitter;
import org.sss.core.api.Mapper;
import org.sss.core.api.Pair;
import org.sss.core.api.Partitioner;
import org.sss.core.api.Serdes;
import org.sss.core.api.TaskContext;
import org.sss.core.cluster.PartitionMap;

/**
 * Map tasks taken over by the other copy of their partition: an input whose every pair sits in
 * partitions node 0 leads, mapped slowly, is mapped by all three nodes of a cluster keeping two
 * copies, and the output is exactly the model's (a task run twice would double its counts, one
 * never run would lose them). Jobs whose partitioner is told the emitting node stay where their
 * partitions are led. (Every table of a cluster keeps its copies; tables of one copy, between
 * stages, are read by reduce stages, which take nothing.)
 */
class TaskTakingTest {
  private static final int ROWS = 480;

  private static SssCluster cluster;
  private static SssClient client;

  @BeforeAll
  static void start() throws Exception {
    cluster = SssCluster.embedded(3, 24, 2);
    client = SssClient.connect(cluster.spec());
  }

  @AfterAll
  static void stop() throws Exception {
    client.close();
    cluster.close();
  }

  /** Loads ROWS pairs whose keys all fall in partitions node 0 leads; returns the model of Slow's output. */
  private static Map<Long, Long> loadSkewed(String table, TableSpec spec) throws Exception {
    PartitionMap map = client.spec().partitionMap();
    client.createTable(table, spec, false);
    Map<Long, Long> model = new TreeMap<>();
    try (BulkWriter w = client.writer(table, spec.types())) {
      int n = 0;
      for (long k = 0; n < ROWS; k++) {
        byte[] key = Serdes.LONG.encodeKey(k);
        if (map.ownerOf(map.partitionOf(key)) == 0) {
          w.put(key, Serdes.STRING.encodeValue("row " + k));
          model.merge(k % 10, 1L, Long::sum);
          n++;
        }
      }
    }
    return model;
  }

  private static Map<Long, Long> read(String table) throws Exception {
    Map<Long, Long> out = new TreeMap<>();
    try (TableScan scan = client.scan(table, ScanOptions.anyOrder())) {
      while (scan.hasNext()) {
        Pair p = scan.next();
        out.put(Serdes.LONG.decodeKey(p.key()), Serdes.LONG.decodeValue(p.value()));
      }
    }
    return out;
  }

  /** Two tasks mapping rows on other nodes than node 0; node 0's first row waits for them (10 s at most). */
  static volatile CountDownLatch othersMapping = new CountDownLatch(2);

  /**
   * {@link TestJobs.Slow}, counting rows per node, whose first row on node 0 waits until two
   * tasks map rows elsewhere: only node 0's partitions hold rows, so those are tasks taken from
   * it, and the others find its tasks waiting.
   */
  public static final class GatedSlow implements Mapper<Long, String, Long, Long> {
    private final TestJobs.Slow slow = new TestJobs.Slow();
    private TaskContext context;
    private boolean first = true;

    @Override
    public void setup(TaskContext context) {
      this.context = context;
    }

    @Override
    public void map(Long key, String value, Emitter<Long, Long> out) throws Exception {
      if (first) {
        first = false;
        if (context.nodeId() == 0) {
          othersMapping.await(10, TimeUnit.SECONDS);
        } else {
          othersMapping.countDown();
        }
      }
      context.counter("rows.node" + context.nodeId()).increment();
      slow.map(key, value, out);
    }
  }

  private static Job slowSum(String input, String output) {
    othersMapping = new CountDownLatch(2);
    return Job.named("skewed").input(input, Serdes.LONG, Serdes.STRING)
        .map(GatedSlow.class, Serdes.LONG, Serdes.LONG)
        .reduce(TestJobs.SumLongs.class, Serdes.LONG, Serdes.LONG)
        .output(output).overwrite().threads(1).build();
  }

  @Test
  void skewedInputOfTwoCopies_isMappedByEveryNode_withTheModelsOutput() throws Exception {
    Map<Long, Long> model = loadSkewed("skewed2", BulkIO.textTable());
    for (int run = 0; run < 3; run++) {
      JobResult r = client.submit(slowSum("skewed2", "sums2")).await();
      assertEquals(model, read("sums2"), "run " + run);
      long taken = r.counter(JobResult.TASKS_TAKEN_COUNTER);
      // node 0 leads 8 of the 24 partitions, and all the rows; its first row waits until two of
      // its tasks map rows on nodes 1 and 2
      assertTrue(taken >= 2, "run " + run + ": " + taken + " tasks taken");
      long elsewhere = r.counter("rows.node1") + r.counter("rows.node2");
      assertTrue(elsewhere > 0, "run " + run + ": rows mapped off node 0: " + elsewhere);
      assertTrue(r.counter("rows.node0") > 0, "run " + run + ": node 0's first task is its own");
      assertEquals(ROWS, r.counter("rows.node0") + elsewhere, "run " + run);
      assertEquals(ROWS, r.stages().get(0).recordsIn(), "every row mapped once");
    }
  }

  @Test
  void jobWithAPartitioner_staysWithTheLeaders() throws Exception {
    Map<Long, Long> model = loadSkewed("skewedp", BulkIO.textTable());
    JobResult r = client.submit(Job.named("skewed-partitioned").input("skewedp", Serdes.LONG, Serdes.STRING)
        .map(TestJobs.Slow.class, Serdes.LONG, Serdes.LONG).partitionBy(Partitioner.Hash.class)
        .reduce(TestJobs.SumLongs.class, Serdes.LONG, Serdes.LONG)
        .output("sumsp").overwrite().threads(1).build()).await();
    assertEquals(model, read("sumsp"));
    assertEquals(0, r.counter(JobResult.TASKS_TAKEN_COUNTER));
  }
}
