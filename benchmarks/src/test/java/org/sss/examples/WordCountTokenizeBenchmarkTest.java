package org.sss.examples;

import static org.junit.jupiter.api.Assertions.assertEquals;

import java.util.ArrayList;
import java.util.List;
import org.junit.jupiter.api.Test;

/** The tokenizer benchmark's work, run once untimed: its words are those of a plain split of each line. */
class WordCountTokenizeBenchmarkTest {
  @Test
  void tokenize_emitsTheWordsOfASplit_eachWithOne() {
    WordCountTokenizeBenchmark b = new WordCountTokenizeBenchmark();
    b.setup();
    List<String> emitted = new ArrayList<>();
    WordCountTokenizeBenchmark.tokenize(b.keys, b.lines, (word, one) -> {
      assertEquals(1L, one);
      emitted.add(word);
    });
    List<String> expected = new ArrayList<>();
    for (String line : b.lines) {
      for (String word : line.split("[ \t\n\r\f]+")) {
        if (!word.isEmpty()) {
          expected.add(word);
        }
      }
    }
    assertEquals(WordCountTokenizeBenchmark.LINES, b.lines.length);
    assertEquals(expected.size(), emitted.size());
    assertEquals(expected, emitted);
  }
}
