package org.sss.examples;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.lang.reflect.Field;
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
import org.sss.client.job.Job;
import org.sss.client.job.JobResult;
import org.sss.core.api.Serdes;

/**
 * The randomtextwriter example, checked against answers that do not come from its own code:
 * its word list against Hadoop's, its lines against known answers worked out from
 * {@link java.util.Random}'s specified generator, and the shape of every run (rows, words per
 * line, words from the list, bytes per map, counters) read back from the table it wrote.
 */
@ExtendWith(SharedClusters.class)
class RandomTextWriterTest {
  /** Bits of a key below the map index: the documented key layout, map &lt;&lt; 40 | row. */
  private static final int ROW_BITS = 40;

  @TempDir
  Path dir;

  /** Hadoop's own word list, from its RandomTextWriter (a private array). */
  static List<String> hadoopWords() throws Exception {
    Field f = org.apache.hadoop.examples.RandomTextWriter.class.getDeclaredField("words");
    f.setAccessible(true);
    return List.of((String[]) f.get(null));
  }

  @Test
  void wordList_isHadoops() throws Exception {
    List<String> hadoop = hadoopWords();
    assertEquals(1000, hadoop.size());
    assertEquals(hadoop, RandomTextWriter.words());
  }

  /** The lines of a run with the given configuration, by key. */
  private static TreeMap<Long, String> run(int nodes, int maps, long bytes, Map<String, String> config) {
    try (SssClient client = SharedClusters.get(nodes).client()) {
      String seeds = SharedClusters.table("seeds");
      String text = SharedClusters.table("text");
      RandomTextWriter.writeSeeds(client, seeds, maps, bytes);
      Job.Builder b = Job.named("randomtextwriter").input(seeds, Serdes.LONG, Serdes.LONG)
          .map(RandomTextWriter.RandomTextMapper.class, Serdes.LONG, Serdes.STRING)
          .output(text).overwrite();
      config.forEach(b::config);
      client.submit(b.build()).await();
      TreeMap<Long, String> lines = new TreeMap<>();
      ExampleIO.scan(client, text, Serdes.LONG, Serdes.STRING, lines::put);
      client.dropTable(seeds, true);
      client.dropTable(text, true);
      return lines;
    }
  }

  /**
   * Known answers: each map draws from {@code new java.util.Random(seed * 0x9E3779B97F4A7C15 +
   * map)} (64-bit wrap-around) the key's word count ({@code min + nextInt(max - min)}), its
   * words ({@code nextInt(1000)} into the word list), then the value's count and words. These
   * lines were worked out with an implementation of Random's generator as its documentation
   * specifies it (the 48-bit LCG 0x5DEECE66D, 11, and nextInt's rejection loop), written apart
   * from this code base, over the word list above.
   */
  @Test
  void lines_knownAnswers_fewWordsPerLine() {
    Map<String, String> config = Map.of(RandomTextWriter.SEED, "7", RandomTextWriter.ROWS_PER_MAP, "3",
        RandomTextWriter.MIN_WORDS_KEY, "1", RandomTextWriter.MAX_WORDS_KEY, "3",
        RandomTextWriter.MIN_WORDS_VALUE, "2", RandomTextWriter.MAX_WORDS_VALUE, "4");
    TreeMap<Long, String> expected = new TreeMap<>(Map.of(
        1L, "poleax manny\thackneyed generalizable stroking",
        2L, "Pincian\thoove elastivity",
        3L, "lampyrine groundneedle\tcubit Edo",
        (1L << ROW_BITS) | 1, "relaster characinoid\tpreaffiliate cyanophilous prescriptible",
        (1L << ROW_BITS) | 2, "quad\tLlandovery Bishareen commandingness",
        (1L << ROW_BITS) | 3, "tum\treformatory metrocratic"));
    assertEquals(expected, run(2, 2, 100_000, config));
  }

  /** Like {@link #lines_knownAnswers_fewWordsPerLine} with Hadoop's word counts (5-9 and 10-99). */
  @Test
  void lines_knownAnswers_hadoopsWordCounts() {
    TreeMap<Long, String> expected = new TreeMap<>(Map.of(
        1L, "poleax manny imprescribable hackneyed generalizable\tpreoral Pincian orthopedical hoove elastivity"
            + " stronghearted lampyrine groundneedle bathysphere cubit Edo Triconodonta putative fossilism corona",
        2L, "Prosobranchiata quad ploration synovial Consolamentum agglomeratic shola scabbiness abstractionism"
            + "\tseraphism metaphonical nativeness bozal reciprocation hysterolysis golem abusiveness papery"
            + " refective periarthritis projecting diatomaceous equiconvex omega osteopaedion choralcelo enterostomy"));
    assertEquals(expected, run(1, 1, 100_000, Map.of(RandomTextWriter.SEED, "7", RandomTextWriter.ROWS_PER_MAP, "2")));
  }

  @ParameterizedTest
  @CsvSource({"1,3,40000,0", "3,7,90000,0", "5,4,60000,0", "3,5,80000,12"})
  void randomText_hasTheAskedShape(int nodes, int maps, long bytes, long rowsPerMap) throws Exception {
    long seed = 1000L * nodes + maps;
    Set<String> vocabulary = new HashSet<>(hadoopWords());
    try (SssClient client = SharedClusters.get(nodes).client()) {
      String seeds = SharedClusters.table("seeds");
      String text = SharedClusters.table("text");
      RandomTextWriter.writeSeeds(client, seeds, maps, bytes);
      JobResult r = client.submit(RandomTextWriter.job(seeds, text, seed, rowsPerMap)).await();
      TreeMap<Long, String> lines = new TreeMap<>();
      ExampleIO.scan(client, text, Serdes.LONG, Serdes.STRING, lines::put);

      // the table, map by map: rows 1, 2, ... without gaps, each a line of Hadoop's shape
      List<List<String>> byMap = new ArrayList<>();
      for (int m = 0; m < maps; m++) {
        byMap.add(new ArrayList<>());
      }
      Set<Integer> keyWordCounts = new HashSet<>();
      Set<String> wordsSeen = new HashSet<>();
      long totalBytes = 0;
      for (Map.Entry<Long, String> e : lines.entrySet()) {
        int map = (int) (e.getKey() >>> ROW_BITS);
        long row = e.getKey() & ((1L << ROW_BITS) - 1);
        assertTrue(map >= 0 && map < maps, "key " + e.getKey() + " names map " + map);
        List<String> own = byMap.get(map);
        assertEquals(own.size() + 1, row, "rows of map " + map + " are numbered from 1 without gaps");
        own.add(e.getValue());
        String[] parts = e.getValue().split("\t", -1);
        assertEquals(2, parts.length, e.getValue());
        String[] keyWords = parts[0].split(" ", -1);
        String[] valueWords = parts[1].split(" ", -1);
        assertTrue(keyWords.length >= 5 && keyWords.length <= 9, e.getValue());
        assertTrue(valueWords.length >= 10 && valueWords.length <= 99, e.getValue());
        keyWordCounts.add(keyWords.length);
        for (String w : (parts[0] + " " + parts[1]).split(" ", -1)) {
          assertTrue(vocabulary.contains(w), "'" + w + "' is not one of Hadoop's words");
          wordsSeen.add(w);
        }
        totalBytes += e.getValue().getBytes(StandardCharsets.UTF_8).length + 1;
      }
      // uniform draws: thousands of words hit nearly all of the 1000, and every key length occurs
      assertTrue(wordsSeen.size() > 900, wordsSeen.size() + " distinct words");
      assertEquals(Set.of(5, 6, 7, 8, 9), keyWordCounts);

      // bytes: the maps share the total as evenly as can be (the first total % maps get one more);
      // each writes lines (and their newlines) until the line that reaches its share, or its rows
      for (int m = 0; m < maps; m++) {
        long share = bytes / maps + (m < bytes % maps ? 1 : 0);
        List<String> own = byMap.get(m);
        long written = 0;
        for (String line : own) {
          written += line.length() + 1;
        }
        long beforeLast = written - (own.get(own.size() - 1).length() + 1);
        assertTrue(beforeLast < share, "map " + m + " wrote a line after reaching its share " + share);
        if (rowsPerMap == 0 || own.size() < rowsPerMap) {
          assertTrue(written >= share, "map " + m + " stopped at " + written + " bytes, short of " + share);
        } else {
          assertEquals(rowsPerMap, own.size(), "map " + m);
        }
      }
      assertEquals(totalBytes, r.counter("BYTES_WRITTEN"));
      assertEquals(lines.size(), r.counter("RECORDS_WRITTEN"));

      // one part file per map, each holding that map's lines in order; one file holding them all
      Path parts = Files.createDirectories(dir.resolve("parts"));
      assertEquals(lines.size(), RandomTextWriter.writeText(client, text, parts, maps, true));
      for (int m = 0; m < maps; m++) {
        assertEquals(byMap.get(m), Files.readAllLines(parts.resolve(String.format("part-m-%05d", m)),
            StandardCharsets.UTF_8));
      }
      Path single = dir.resolve("all.txt");
      RandomTextWriter.writeText(client, text, single, maps, false);
      assertEquals(totalBytes, Files.size(single));

      // wordcount runs on the table as it is
      String counts = SharedClusters.table("counts");
      client.submit(WordCount.job(text, counts, true)).await();
      Map<String, Long> expectedCounts = new HashMap<>();
      for (String line : lines.values()) {
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
