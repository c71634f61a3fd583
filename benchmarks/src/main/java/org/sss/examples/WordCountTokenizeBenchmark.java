package org.sss.examples;

import org.openjdk.jmh.annotations.Benchmark;
import org.openjdk.jmh.annotations.OperationsPerInvocation;
import org.openjdk.jmh.annotations.Setup;
import org.openjdk.jmh.infra.Blackhole;
import org.sss.bench.jmh.HotPathBenchmark;
import org.sss.bench.jmh.JmhData;
import org.sss.core.api.Emitter;

/**
 * WordCount's mapper ({@link WordCount.Tokenize}: {@code StringTokenizer} over a line, one
 * emitted pair per word) over RandomTextWriter's lines (Hadoop's word counts: 5 to 9 words of
 * key and 10 to 99 of value, about 62 words and 650 bytes a line). One operation is one line,
 * a map task's input record.
 */
public class WordCountTokenizeBenchmark extends HotPathBenchmark {
  /** Lines one invocation maps (about 620,000 words). */
  static final int LINES = 10_000;

  String[] lines;
  /** The lines' keys, boxed beforehand as the map task hands them over decoded. */
  Long[] keys;

  @Setup
  public void setup() {
    lines = JmhData.lines(LINES, JmhData.SEED);
    keys = new Long[LINES];
    for (int i = 0; i < LINES; i++) {
      keys[i] = (long) i;
    }
  }

  /** The WordCount map stage (the classic benchmark, the edges' file-in file-out run) spends most of its thread's time tokenizing. */
  @Benchmark
  @OperationsPerInvocation(LINES)
  public void tokenize(Blackhole bh) {
    tokenize(keys, lines, (word, one) -> bh.consume(word));
  }

  /** Maps every line with one {@link WordCount.Tokenize}, as a map task maps its partition. */
  static void tokenize(Long[] keys, String[] lines, Emitter<String, Long> out) {
    WordCount.Tokenize mapper = new WordCount.Tokenize();
    for (int i = 0; i < lines.length; i++) {
      mapper.map(keys[i], lines[i], out);
    }
  }
}
