package org.sss.client.job;

import static org.sss.client.job.DifferentialFunctions.FAILURE_MARKER;

import java.nio.ByteBuffer;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.HashSet;
import java.util.List;
import java.util.Set;
import org.sss.core.api.Pair;
import org.sss.core.cluster.PartitionMap;
import org.sss.core.proto.ErrorCode;

/**
 * A job whose user code throws on one record (so on one node) while the other tasks of that
 * stage sleep per record, then a different job writing the same output table. Nothing of the
 * failed job may survive: no output table (or, with {@code overwrite()}, the previous one as it
 * was), no intermediate table, and no late write into the next job's output, checked as soon
 * as the next job ends and again {@link #STRAGGLER_WAIT} after the failure.
 *
 * <p>Even seeds first write the output table, and the failing job has {@code overwrite()}.
 * One seed in three ({@code seed % 3 == 0}) makes a straggler that outlives the
 * coordinator's wait for the nodes to stop (10 s): 30 keys of 1 MiB values in the first
 * partition of one node, reduced at 500 ms each (15 s) and each sent to its node at once,
 * while the job fails on the first partition of another node; the next job is then a single
 * map stage, so that any difference in its output is the straggler's. The other seeds run a
 * random shape of up to three stages that fails in its last stage (one time in four, an
 * earlier one) on the first record of a partition, its other tasks taking about a second per
 * node.
 */
final class FailingJobCase extends DiffCase {
  static final Duration STRAGGLER_WAIT = Duration.ofSeconds(6);
  private static final int STRAGGLER_VALUES = 30;
  private static final int STRAGGLER_VALUE_BYTES = (1 << 20) + 1024;
  private static final long STRAGGLER_SLEEP_MILLIS = 500;
  private static final int SMALL_VALUES = 6;

  private final PartitionMap partitions;
  private final Duration timeout;

  FailingJobCase(long seed, DiffTables tables, PartitionMap partitions, Duration timeout) {
    super(seed, tables);
    this.partitions = partitions;
    this.timeout = timeout;
  }

  @Override
  String rerunProperties() {
    return "-Dsss.diff.faultSeed=" + seed + " -Dsss.diff.faultCases=1 -Dsss.diff.cases=0";
  }

  @Override
  void execute() throws Exception {
    boolean longStraggler = Math.floorMod(seed, 3L) == 0;
    DiffInput input = longStraggler ? stragglerInput() : DiffInput.random(rng, 600 + rng.nextInt(900), false);
    tell("input: " + input);
    String source = table("in");
    List<Pair> pairs = load(source, input);
    String output = table("out");
    JobShape failing = longStraggler ? stragglerShape(input) : failingShape(input, pairs);
    DiffInput old = null;
    List<Pair> previous = null;
    if (Math.floorMod(seed, 2L) == 0) {
      old = DiffInput.random(rng, 1 + rng.nextInt(50), false);
      tables.load(output, old.keyType(), old.valueType(), old.pairs());
      previous = tables.scan(output);
      failing = failing.withOverwrite();
      tell("the output exists: " + old);
    }
    tell("failing job: " + failing);
    List<String> temporary = tables.temporaryTables();
    long failedAt = runFailing(failing, source, output);
    if (previous != null) {
      checkPreviousOutputKept(output, old, previous);
    } else if (tables.exists(output)) {
      problem("the failed job's output table '" + output + "' exists after the failure");
    }
    checkTemporaryTables("the failed job", temporary, List.of());

    JobShape next = JobShape.random(rng, input.keyType(), input.valueType(), new JobShape.Constraints(
        longStraggler ? 1 : DifferentialFunctions.MAX_STAGES, false, false, input.bigValues() > 0));
    runNext(tables.exists(output) ? next.withOverwrite() : next, source, pairs, output, failedAt);
  }

  /**
   * Runs the job after the failed one, with the same output, and checks its output at once
   * and {@link #STRAGGLER_WAIT} after the failure.
   */
  private void runNext(JobShape next, String source, List<Pair> pairs, String output, long failedAt)
      throws Exception {
    tell("next job: " + next);
    List<String> temporary = tables.temporaryTables();
    JobResult result;
    try {
      result = tables.run(next.build("diff-next", source, output), timeout);
    } catch (JobFailedException e) {
      problem("the next job failed: " + e.code() + ": " + firstLine(e.getMessage()));
      return;
    }
    verify("the next job", next, pairs, result, output, temporary);
    long wait = failedAt + STRAGGLER_WAIT.toNanos() - System.nanoTime();
    if (wait > 0) {
      Thread.sleep(wait / 1_000_000);
    }
    String later = STRAGGLER_WAIT.toSeconds() + " s after the failure";
    checkOutput("the next job's output " + later, next, ReferenceRunner.run(next, pairs), output);
    checkTemporaryTables("the failed job, " + later, temporary, List.of());
  }

  /**
   * A random shape of up to 3 stages made to fail in its last stage (sometimes an earlier
   * one) on the first key of one partition, sleeping per record so that its other tasks take
   * about a second per node.
   */
  private JobShape failingShape(DiffInput input, List<Pair> pairs) throws Exception {
    JobShape shape = JobShape.random(rng, input.keyType(), input.valueType(),
        new JobShape.Constraints(3, false, false, false));
    int n = shape.stages().size();
    int stage = rng.nextInt(4) == 0 ? rng.nextInt(n) : n - 1;
    if (!shape.stages().get(stage).map()) {
      shape = shape.with(stage - 1, "keys", 5000); // many keys, so that reducers have much to do
    }
    List<Pair> stageInput = ReferenceRunner.run(shape, pairs).stageInput(stage, pairs);
    if (stageInput.isEmpty()) {
      stage = 0;
      stageInput = pairs;
    }
    JobShape.Stage s = shape.stages().get(stage);
    byte[] key = firstKeyOfPartition(stageInput, partitions.partitionOf(stageInput.get(rng.nextInt(stageInput.size())).key()));
    long records = s.map() ? stageInput.size()
        : stageInput.stream().map(p -> ByteBuffer.wrap(p.key())).distinct().count();
    long sleepMillis = Math.max(1, Math.min(20, 6000 / records));
    return shape.failingAt(stage, DiffType.fingerprint(s.inKey().serde.decodeKey(key)), sleepMillis);
  }

  /**
   * Over {@link #stragglerInput}: a map passing pairs on, then a reduce emitting each key's
   * value (1 MiB for the slow partition's keys, each sent to its node at once), sleeping
   * {@link #STRAGGLER_SLEEP_MILLIS} per key and failing on the first key of the small partition.
   * A reduce task looks whether its stage stops only every 256 keys: the slow one goes on.
   */
  private JobShape stragglerShape(DiffInput input) {
    JobShape shape = JobShape.carryThenMin(input.keyType(), input.valueType(),
        DiffType.values()[rng.nextInt(DiffType.values().length)], rng.nextLong());
    byte[] first = input.pairs().stream().filter(p -> p.value().length < STRAGGLER_VALUE_BYTES).map(Pair::key)
        .min(Arrays::compareUnsigned).orElseThrow();
    return shape.failingAt(1, DiffType.fingerprint(input.keyType().serde.decodeKey(first)), STRAGGLER_SLEEP_MILLIS);
  }

  /**
   * {@link #STRAGGLER_VALUES} values of 1 MiB in the first partition of one node (its first
   * task) and a few small ones in the first partition of another node.
   */
  private DiffInput stragglerInput() {
    int slowNode = rng.nextInt(partitions.nodes());
    int failingNode = (slowNode + 1 + rng.nextInt(partitions.nodes() - 1)) % partitions.nodes();
    int slow = partitions.partitionsOf(slowNode).get(0);
    int failing = partitions.partitionsOf(failingNode).get(0);
    DiffType keyType = DiffType.values()[rng.nextInt(DiffType.values().length)];
    DiffType valueType = rng.nextBoolean() ? DiffType.STRING : DiffType.BYTES;
    List<Pair> pairs = new ArrayList<>();
    Set<ByteBuffer> keys = new HashSet<>();
    int big = 0;
    int small = 0;
    for (long x = rng.nextInt(1000); big < STRAGGLER_VALUES || small < SMALL_VALUES; x++) {
      byte[] key = keyType.serde.encodeKey(keyType.make(x));
      int p = partitions.partitionOf(key);
      if (p == slow && big < STRAGGLER_VALUES && keys.add(ByteBuffer.wrap(key))) {
        pairs.add(new Pair(key, valueType.serde.encodeValue(DiffInput.bigValue(rng, valueType, STRAGGLER_VALUE_BYTES))));
        big++;
      } else if (p == failing && small < SMALL_VALUES && keys.add(ByteBuffer.wrap(key))) {
        pairs.add(new Pair(key, valueType.serde.encodeValue(valueType.make(rng.nextLong()))));
        small++;
      }
    }
    return new DiffInput(keyType, valueType, pairs, big);
  }

  /** The smallest key of a partition: the first record its task reads. */
  private byte[] firstKeyOfPartition(List<Pair> stageInput, int partition) {
    return stageInput.stream().map(Pair::key).filter(k -> partitions.partitionOf(k) == partition)
        .min(Arrays::compareUnsigned).orElseThrow();
  }

  /** Runs the job that must fail; returns when it ended (System.nanoTime). */
  private long runFailing(JobShape failing, String source, String output) throws Exception {
    long start = System.nanoTime();
    try {
      tables.run(failing.build("diff-failing", source, output), timeout);
      problem("the failing job succeeded");
    } catch (JobFailedException e) {
      if (e.code() != ErrorCode.USER_CODE_FAILED || !e.getMessage().contains(FAILURE_MARKER)) {
        problem("the failing job failed otherwise than by its user code: " + e.code() + ": "
            + firstLine(e.getMessage()));
      }
    }
    long end = System.nanoTime();
    tell(String.format("the failing job ended after %.2f s", (end - start) / 1e9));
    return end;
  }

  /** With overwrite(), a failed job must leave the table it was to replace as it was. */
  private void checkPreviousOutputKept(String output, DiffInput old, List<Pair> previous) {
    if (!tables.exists(output)) {
      problem("overwrite() + failure: the previous output table '" + output + "' was dropped");
      return;
    }
    String d = new PairDiff(old.keyType(), old.valueType()).multiset(previous, tables.scan(output));
    if (d != null) {
      problem("overwrite() + failure: the previous output table changed: " + d);
    }
  }
}
