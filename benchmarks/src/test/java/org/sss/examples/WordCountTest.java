package org.sss.examples;

import static org.junit.jupiter.api.Assertions.assertEquals;

import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.HashMap;
import java.util.Map;
import java.util.Random;
import java.util.StringTokenizer;
import org.junit.jupiter.api.io.TempDir;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.CsvSource;
import org.sss.client.ScanOptions;
import org.sss.client.SssClient;
import org.sss.client.TableScan;
import org.sss.client.cluster.SssCluster;
import org.sss.client.io.BulkIO;
import org.sss.client.job.JobResult;
import org.sss.core.api.Pair;
import org.sss.core.api.Serdes;

class WordCountTest {
  @TempDir
  Path dir;

  @ParameterizedTest
  @CsvSource({"1,false", "1,true", "3,false", "3,true", "5,true", "5,false"})
  void wordcount_matchesSequentialReference(int nodes, boolean combine) throws Exception {
    Random rnd = new Random(nodes * 31 + (combine ? 1 : 0));
    StringBuilder text = new StringBuilder();
    for (int line = 0; line < 5000; line++) {
      int words = rnd.nextInt(12);
      for (int w = 0; w < words; w++) {
        text.append("w").append(rnd.nextInt(300)).append(rnd.nextBoolean() ? " " : "\t");
      }
      text.append(line % 7 == 0 ? "\r\n" : "\n");
    }
    Path input = dir.resolve("in.txt");
    Files.writeString(input, text, StandardCharsets.UTF_8);
    Map<String, Long> expected = new HashMap<>();
    for (String line : text.toString().split("\r\n|\n")) {
      StringTokenizer t = new StringTokenizer(line);
      while (t.hasMoreTokens()) {
        expected.merge(t.nextToken(), 1L, Long::sum);
      }
    }
    try (SssCluster cluster = SssCluster.embedded(nodes); SssClient client = cluster.client()) {
      BulkIO.load(client, "lines", input, n -> {});
      JobResult r = client.submit(WordCount.job("lines", "counts", combine)).await();
      Map<String, Long> actual = new HashMap<>();
      try (TableScan scan = client.scan("counts", ScanOptions.inKeyOrder())) {
        while (scan.hasNext()) {
          Pair p = scan.next();
          actual.put(Serdes.STRING.decodeKey(p.key()), Serdes.LONG.decodeValue(p.value()));
        }
      }
      assertEquals(expected, actual);
      assertEquals(5000, r.stages().get(0).recordsIn());
    }
  }
}
