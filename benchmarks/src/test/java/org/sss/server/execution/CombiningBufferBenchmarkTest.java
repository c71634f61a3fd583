package org.sss.server.execution;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNull;

import java.util.HashMap;
import java.util.Map;
import java.util.StringTokenizer;
import org.junit.jupiter.api.Test;
import org.sss.bench.jmh.JmhData;
import org.sss.core.api.Serdes;

/** The combining buffer benchmark's work, run once untimed: one pair per word, with the word's count. */
class CombiningBufferBenchmarkTest {
  @Test
  void addAndFlush_writesEachWordOnceWithItsCount() throws Exception {
    CombiningBufferBenchmark b = new CombiningBufferBenchmark();
    b.setup();
    Map<String, Long> expected = new HashMap<>();
    for (String word : b.words) {
      expected.merge(word, 1L, Long::sum);
    }
    assertEquals(JmhData.PAIRS, b.words.length);
    assertWritesEachWordOnce(expected, out -> CombiningBufferBenchmark.addAndFlush(b.words, out));
  }

  @Test
  void tokenizeAndCombine_writesEachWordOfTheLinesOnceWithItsCount() throws Exception {
    CombiningBufferBenchmark b = new CombiningBufferBenchmark();
    b.setup();
    Map<String, Long> expected = new HashMap<>();
    for (String line : b.lines) {
      for (StringTokenizer t = new StringTokenizer(line); t.hasMoreTokens(); ) {
        expected.merge(t.nextToken(), 1L, Long::sum);
      }
    }
    assertEquals(CombiningBufferBenchmark.LINES, b.lines.length);
    assertWritesEachWordOnce(expected, out -> CombiningBufferBenchmark.tokenizeAndCombine(b.lines, out));
  }

  /** What a benchmark's work does with a writer: returns the pairs it wrote. */
  private interface Work {
    long run(PairWriter out) throws Exception;
  }

  private static void assertWritesEachWordOnce(Map<String, Long> expected, Work work) throws Exception {
    Map<String, Long> written = new HashMap<>();
    long pairs = work.run((key, value) ->
        assertNull(written.put(Serdes.STRING.decodeKey(key), Serdes.LONG.decodeValue(value)), "a word written twice"));
    assertEquals(expected.size(), pairs);
    assertEquals(expected, written);
  }
}
