package org.sss.client.job;

import java.io.IOException;
import java.util.stream.LongStream;
import org.sss.client.cluster.SssCluster;

/**
 * {@link JobDifferentialTest}'s random job shapes on a cluster that keeps two copies of each
 * pair: a job's output then travels in files its writers build once for every copy, and as
 * pairs where a writer's keys go back (docs/replication.md, Writes). Other seeds than the
 * single-copy run's ({@code sss.diff.replicatedSeed}, {@code sss.diff.replicatedCases}, default
 * 40); failing jobs are {@link JobDifferentialTest}'s.
 */
class ReplicatedJobDifferentialTest extends JobDifferentialTest {
  static final long REPLICATED_SEED = Long.getLong("sss.diff.replicatedSeed", 500_000L);
  static final int REPLICATED_CASES = Integer.getInteger("sss.diff.replicatedCases", 40);

  @Override
  SssCluster startCluster() throws IOException {
    return SssCluster.embedded(3, 24, 2);
  }

  @Override
  LongStream seeds() {
    return LongStream.range(0, REPLICATED_CASES).map(i -> REPLICATED_SEED + i);
  }

  @Override
  LongStream faultSeeds() {
    return LongStream.empty();
  }
}
