package org.sss.server.execution;

import org.openjdk.jmh.annotations.Benchmark;
import org.openjdk.jmh.annotations.OperationsPerInvocation;
import org.openjdk.jmh.annotations.Setup;
import org.openjdk.jmh.infra.Blackhole;
import org.sss.bench.jmh.HotPathBenchmark;
import org.sss.bench.jmh.JmhData;
import org.sss.core.api.Serdes;
import org.sss.examples.WordCount;

/**
 * The combining buffer of a map runner ({@link CombiningBuffer}, as {@code MapOutput} makes it)
 * with WordCount's summing combiner, over the words of RandomTextWriter's lines (1,000 distinct
 * words drawn uniformly): each emitted (word, 1) is added, then the buffer is flushed, which
 * encodes one summed pair per word for the shuffle. One operation is one emitted pair, or, for
 * {@link #tokenizeAndCombine}, one line.
 */
public class CombiningBufferBenchmark extends HotPathBenchmark {
  /** Lines {@link #tokenizeAndCombine} maps, as in {@code WordCountTokenizeBenchmark}. */
  static final int LINES = 10_000;

  String[] words;
  String[] lines;

  @Setup
  public void setup() {
    words = JmhData.words(JmhData.PAIRS, JmhData.SEED);
    lines = JmhData.lines(LINES, JmhData.SEED);
  }

  /** A job with a combiner (WordCount's) hands every pair its mappers emit to this buffer: its cost per pair bounds the map stage. */
  @Benchmark
  @OperationsPerInvocation(JmhData.PAIRS)
  public long addAndFlush(Blackhole bh) throws Exception {
    return addAndFlush(words, (key, value) -> {
      bh.consume(key);
      bh.consume(value);
    });
  }

  /**
   * WordCount's map as a map task runs it: each line tokenized by the job's own mapper, every
   * word a fresh string (its hash not yet computed) added with the mapper's one constant
   * {@code 1}; then the flush. Its difference from {@code WordCountTokenizeBenchmark.tokenize}
   * is what combining costs the map stage.
   */
  @Benchmark
  @OperationsPerInvocation(LINES)
  public long tokenizeAndCombine(Blackhole bh) throws Exception {
    return tokenizeAndCombine(lines, (key, value) -> {
      bh.consume(key);
      bh.consume(value);
    });
  }

  /** Maps every line with WordCount's mapper into a new buffer, flushes it into {@code out}; returns the pairs written. */
  static long tokenizeAndCombine(String[] lines, PairWriter out) throws Exception {
    CombiningBuffer<String, Long> buffer = new CombiningBuffer<>(new WordCount.Sum(), Serdes.STRING, Serdes.LONG,
        out, MapTask.COMBINE_BUDGET);
    WordCount.Tokenize mapper = new WordCount.Tokenize();
    for (int i = 0; i < lines.length; i++) {
      mapper.map((long) i, lines[i], (word, one) -> {
        try {
          buffer.add(word, one);
        } catch (Exception e) {
          throw new IllegalStateException(e);
        }
      });
    }
    return buffer.flush();
  }

  /** Adds (word, 1) for every word to a new buffer, flushes it into {@code out}; returns the pairs written. */
  static long addAndFlush(String[] words, PairWriter out) throws Exception {
    CombiningBuffer<String, Long> buffer = new CombiningBuffer<>(new WordCount.Sum(), Serdes.STRING, Serdes.LONG,
        out, MapTask.COMBINE_BUDGET);
    Long one = 1L;
    for (String word : words) {
      buffer.add(word, one);
    }
    return buffer.flush();
  }
}
