package org.sss.kvs;

import java.util.ArrayList;
import java.util.List;
import org.openjdk.jmh.annotations.Benchmark;
import org.openjdk.jmh.annotations.OperationsPerInvocation;
import org.openjdk.jmh.annotations.Setup;
import org.sss.bench.jmh.HotPathBenchmark;
import org.sss.bench.jmh.JmhData;
import org.sss.core.keys.StoredKeys;

/**
 * A bulk table's writes, the data between a job's stages: the shuffle packs the pairs it keeps
 * into blocks of packed pairs ({@link PackedBatch#put}, committed at 1 MiB), the table
 * gathers the batches ({@code SortedRuns.add}, which only appends them to a list: not measured)
 * and parses them into a run ({@code Records.parse}), whose sort ({@code Records.sortedOrder})
 * decides how fast the run is stored and read. One operation is one pair.
 *
 * <p>Batches are taken from the {@link PackedBatch} as a gathering table keeps them
 * ({@link PackedBatch#take}), without the table, which a benchmark does not have.
 */
public class SortedRunsBenchmark extends HotPathBenchmark {
  /** The shuffle commits its local batch at this size ({@code StageShuffle.BATCH_BYTES}). */
  static final int BATCH_BYTES = 1 << 20;

  JmhData.Pairs pairs;
  /** The pairs' parsed run, for the sort. */
  SortedRuns.Records records;

  @Setup
  public void setup() {
    pairs = JmhData.pairs(JmhData.PAIRS, JmhData.SEED);
    records = SortedRuns.Records.parse(pack(pairs), pairs.size());
  }

  /** Every pair a stage writes to its node's bulk table (the shuffle's local share, each received batch) is packed and parsed once. */
  @Benchmark
  @OperationsPerInvocation(JmhData.PAIRS)
  public Object packAndParse() {
    return SortedRuns.Records.parse(pack(pairs), pairs.size());
  }

  /** Every run of a stage's output is sorted once before it is stored or scanned: the run's sort is the spill's cost. */
  @Benchmark
  @OperationsPerInvocation(JmhData.PAIRS)
  public int[] sortRun() {
    return records.sortedOrder();
  }

  /**
   * Packs the pairs as the shuffle's local writes do ({@code ShuffleWriter}: partition, encoded
   * key, uniquifier, value) into batches sealed at {@link #BATCH_BYTES}.
   */
  static List<SortedRuns.Batch> pack(JmhData.Pairs pairs) {
    List<SortedRuns.Batch> batches = new ArrayList<>();
    byte[] uniquifier = new byte[StoredKeys.UNIQUIFIER_BYTES];
    PackedBatch batch = new PackedBatch(null, BATCH_BYTES + (64 << 10), OrderedStreams.NONE);
    for (int i = 0; i < pairs.size(); i++) {
      StoredKeys.writeUniquifier(uniquifier, 0, JmhData.SOURCE, i);
      batch.put(pairs.partition[i], pairs.encoded[i], uniquifier, StoredKeys.UNIQUIFIER_BYTES, pairs.values[i]);
      if (batch.bytes() >= BATCH_BYTES) {
        batches.add(batch.take());
      }
    }
    if (batch.count() > 0) {
      batches.add(batch.take());
    }
    return batches;
  }
}
