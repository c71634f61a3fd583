package org.sss.kvs;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;

import java.util.Arrays;
import java.util.Comparator;
import java.util.stream.IntStream;
import org.junit.jupiter.api.Test;
import org.sss.bench.jmh.JmhData;

/** The sorted-run benchmarks' work, run once untimed: the packed and parsed run sorts as its stored keys do. */
class SortedRunsBenchmarkTest {
  @Test
  void sortRun_ordersThePairsByStoredKey() {
    SortedRunsBenchmark b = new SortedRunsBenchmark();
    b.setup();
    int[] order = b.sortRun();
    JmhData.Pairs pairs = b.pairs;
    // the model: pair numbers sorted by their stored keys (partition, encoded key, uniquifier) as unsigned bytes
    int[] expected = IntStream.range(0, pairs.size()).boxed()
        .sorted(Comparator.comparing((Integer i) -> pairs.stored[i], Arrays::compareUnsigned))
        .mapToInt(Integer::intValue).toArray();
    assertArrayEquals(expected, order);
    assertArrayEquals(expected, ((SortedRuns.Records) b.packAndParse()).sortedOrder());
  }
}
