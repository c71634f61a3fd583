package org.sss.examples;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.StringTokenizer;
import java.util.TreeMap;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.ExtendWith;
import org.junit.jupiter.api.io.TempDir;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.CsvSource;
import org.sss.client.SssClient;
import org.sss.client.job.JobResult;
import org.sss.core.api.Serdes;

@ExtendWith(SharedClusters.class)
class RandomTextWriterTest {
  @TempDir
  Path dir;

  @Test
  void wordList_isHadoops() {
    List<String> words = RandomTextWriter.words();
    assertEquals(1000, words.size());
    assertEquals(1000, new HashSet<>(words).size());
    assertEquals("diurnalness", words.get(0));
    assertEquals("cheesecutter", words.get(999));
  }

  @ParameterizedTest
  @CsvSource({"1,3,40000,0", "3,7,90000,0", "5,4,60000,0", "3,5,80000,12"})
  void randomText_matchesSequentialGeneration(int nodes, int maps, long bytes, long rowsPerMap) throws Exception {
    long seed = 1000L * nodes + maps;
    // the reference: each map's lines generated in one loop, in key order
    TreeMap<Long, String> expected = new TreeMap<>();
    for (int m = 0; m < maps; m++) {
      long share = RandomTextWriter.bytesOfMap(m, maps, bytes);
      RandomTextWriter.Generator g = new RandomTextWriter.Generator(seed, m);
      long written = 0;
      for (long row = 1; written < share && (rowsPerMap == 0 || row <= rowsPerMap); row++) {
        String line = g.nextLine();
        expected.put(RandomTextWriter.key(m, row), line);
        written += line.length() + 1;
      }
      if (rowsPerMap == 0) {
        assertTrue(written >= share, "map " + m + " reaches its share");
      }
    }
    Set<String> vocabulary = new HashSet<>(RandomTextWriter.words());
    long totalBytes = 0;
    for (String line : expected.values()) {
      String[] parts = line.split("\t", -1);
      assertEquals(2, parts.length, line);
      int keyWords = parts[0].split(" ").length;
      int valueWords = parts[1].split(" ").length;
      assertTrue(keyWords >= 5 && keyWords < 10, line);
      assertTrue(valueWords >= 10 && valueWords < 100, line);
      for (String w : (parts[0] + " " + parts[1]).split(" ")) {
        assertTrue(vocabulary.contains(w), w);
      }
      totalBytes += line.length() + 1;
    }

    try (SssClient client = SharedClusters.get(nodes).client()) {
      String seeds = SharedClusters.table("seeds");
      String text = SharedClusters.table("text");
      RandomTextWriter.writeSeeds(client, seeds, maps, bytes);
      JobResult r = client.submit(RandomTextWriter.job(seeds, text, seed, rowsPerMap)).await();
      TreeMap<Long, String> actual = new TreeMap<>();
      ExampleIO.scan(client, text, Serdes.LONG, Serdes.STRING, actual::put);
      assertEquals(expected, actual);
      assertEquals(totalBytes, r.counter("BYTES_WRITTEN"));
      assertEquals(expected.size(), r.counter("RECORDS_WRITTEN"));

      // one part file per map, each holding that map's lines
      Path parts = Files.createDirectories(dir.resolve("parts"));
      assertEquals(expected.size(), RandomTextWriter.writeText(client, text, parts, maps, true));
      for (int m = 0; m < maps; m++) {
        List<String> own = new ArrayList<>(expected.subMap(RandomTextWriter.key(m, 0), RandomTextWriter.key(m + 1, 0)).values());
        assertEquals(own, Files.readAllLines(parts.resolve(String.format("part-m-%05d", m)), StandardCharsets.UTF_8));
      }
      Path single = dir.resolve("all.txt");
      RandomTextWriter.writeText(client, text, single, maps, false);
      assertEquals(totalBytes, Files.size(single));

      // wordcount runs on the table as it is
      String counts = SharedClusters.table("counts");
      client.submit(WordCount.job(text, counts, true)).await();
      Map<String, Long> expectedCounts = new HashMap<>();
      for (String line : expected.values()) {
        StringTokenizer t = new StringTokenizer(line);
        while (t.hasMoreTokens()) {
          expectedCounts.merge(t.nextToken(), 1L, Long::sum);
        }
      }
      Map<String, Long> actualCounts = new HashMap<>();
      ExampleIO.scan(client, counts, Serdes.STRING, Serdes.LONG, actualCounts::put);
      assertEquals(expectedCounts, actualCounts);
      for (String t : List.of(seeds, text, counts)) {
        client.dropTable(t, true);
      }
    }
  }
}
