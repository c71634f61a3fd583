package org.sss.client.job;

import java.io.IOException;
import java.time.Duration;
import java.util.stream.LongStream;
import java.util.stream.Stream;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.DynamicTest;
import org.junit.jupiter.api.TestInstance;
import org.junit.jupiter.api.TestFactory;
import org.sss.client.SssClient;
import org.sss.client.cluster.SssCluster;
import org.sss.client.it.LeakDetection;

/**
 * Differential test of the job engine: random job shapes run on an embedded three-node cluster
 * and, in memory, on {@link ReferenceRunner}; the two must agree.
 *
 * <p>A shape ({@link JobShape}) is 1 to 4 map and reduce stages in any order, each with its
 * own key and value serdes (every built-in one), map stages sometimes combined before a
 * reduce, a single- or multi-valued output, sometimes kept intermediate tables and an output
 * that already exists; inputs ({@link DiffInput}) hold 0 to a few thousand pairs with repeated
 * keys, empty values and rarely a value of several MiB. The checks are in {@link DiffCase}:
 * output (multiset of pairs, or for a single-valued output one of the emitted values per key),
 * the functions' counters, kept intermediate tables (every emitted pair), no intermediate table
 * left behind, and that {@code sss dump} can print the output.
 *
 * <p>Jobs over a loaded table start with a map stage: a client cannot write a multi-valued
 * table itself (it would have to append the engine's uniquifier to each key, and the writer
 * would then place the values of one key in different partitions). A reduce-first job runs as
 * the second job of a case, over the multi-valued output of the first ({@link RandomJobsCase}).
 * {@link FailingJobCase} covers jobs that fail in user code.
 *
 * <p>Each failure report starts with the case's seed and the properties that rerun it alone.
 * Properties:
 * <ul>
 *   <li>{@code sss.diff.seed}, {@code sss.diff.cases}: the first random case's seed (case i has
 *       seed + i) and how many random cases run (default 100);
 *   <li>{@code sss.diff.faultSeed}, {@code sss.diff.faultCases}: the same for failing jobs
 *       (default 3, one of which holds a 15 s straggler).
 * </ul>
 * The default run takes about a minute on two cores. A longer run:
 * <pre>
 * mvn -B -q -pl sss-client -am test -Dtest=JobDifferentialTest -Dsurefire.failIfNoSpecifiedTests=false \
 *     -Dsss.diff.cases=500 -Dsss.diff.seed=$RANDOM -Dsss.diff.faultCases=10 -Dsss.diff.faultSeed=$RANDOM
 * </pre>
 */
@TestInstance(TestInstance.Lifecycle.PER_CLASS)
class JobDifferentialTest {
  static final long SEED = Long.getLong("sss.diff.seed", 1L);
  static final int CASES = Integer.getInteger("sss.diff.cases", 100);
  static final long FAULT_SEED = Long.getLong("sss.diff.faultSeed", 1_000_000L);
  static final int FAULT_CASES = Integer.getInteger("sss.diff.faultCases", 3);
  static final Duration JOB_TIMEOUT = Duration.ofSeconds(120);

  SssCluster cluster;
  SssClient client;
  DiffTables tables;

  /** Answers are what these check; buffer leaks are LeakWatch's: sampled detection, not paranoid (its cost is most of a job here). */
  LeakDetection leakDetection;

  /** The cluster the cases run on: three nodes, one copy of each pair. */
  SssCluster startCluster() throws IOException {
    return SssCluster.embedded(3);
  }

  /** The random cases' seeds. */
  LongStream seeds() {
    return LongStream.range(0, CASES).map(i -> SEED + i);
  }

  /** The failing cases' seeds. */
  LongStream faultSeeds() {
    return LongStream.range(0, FAULT_CASES).map(i -> FAULT_SEED + i);
  }

  @BeforeAll
  void start() throws Exception {
    leakDetection = LeakDetection.sampled();
    cluster = startCluster();
    client = cluster.client();
    tables = new DiffTables(client);
  }

  @AfterAll
  void stop() {
    client.close();
    cluster.close();
    leakDetection.close();
  }

  @TestFactory
  Stream<DynamicTest> randomJobs() {
    return seeds().mapToObj(seed -> DynamicTest.dynamicTest("seed " + seed,
        () -> new RandomJobsCase(seed, tables, JOB_TIMEOUT).run()));
  }

  @TestFactory
  Stream<DynamicTest> failingJobs() {
    return faultSeeds().mapToObj(seed -> DynamicTest.dynamicTest(
        "fault seed " + seed, () -> new FailingJobCase(seed, tables, cluster.spec().partitionMap(), JOB_TIMEOUT).run()));
  }
}
