package org.sss.examples;

import java.nio.file.Path;
import java.util.StringTokenizer;
import org.sss.client.job.Job;
import org.sss.core.api.Emitter;
import org.sss.core.api.Mapper;
import org.sss.core.api.Reducer;
import org.sss.core.api.Serdes;

/**
 * Counts words, tokenized exactly as Hadoop's WordCount example does
 * ({@link StringTokenizer} with its default delimiters: space, tab, newline, carriage return,
 * form feed).
 */
public final class WordCount {
  private WordCount() {}

  /** The job over a table of lines: (line key, text) in, (word, count) out. */
  public static Job job(String input, String output, boolean combine) {
    return job(input, output, combine, 0);
  }

  /** Like {@link #job(String, String, boolean)} with {@code threads} tasks at once per node (0: the node's default). */
  public static Job job(String input, String output, boolean combine, int threads) {
    Job.Builder b = Job.named("wordcount")
        .jarByClass(WordCount.class)
        .input(input, Serdes.LONG, Serdes.STRING)
        .map(Tokenize.class, Serdes.STRING, Serdes.LONG);
    if (combine) {
      b.combine(Sum.class);
    }
    return b.reduce(Sum.class, Serdes.STRING, Serdes.LONG).output(output).overwrite().threads(threads).build();
  }

  /**
   * The job over text files read where the nodes see them ({@link Job.Builder#inputText}):
   * (byte offset, line) in, (word, count) out.
   */
  public static Job jobOverFiles(Path files, String output, boolean combine) {
    return jobOverFiles(files, output, combine, 0);
  }

  /** Like {@link #jobOverFiles(Path, String, boolean)} with {@code threads} tasks at once per node (0: the node's default). */
  public static Job jobOverFiles(Path files, String output, boolean combine, int threads) {
    Job.Builder b = Job.named("wordcount")
        .jarByClass(WordCount.class)
        .inputText(files)
        .map(Tokenize.class, Serdes.STRING, Serdes.LONG);
    if (combine) {
      b.combine(Sum.class);
    }
    return b.reduce(Sum.class, Serdes.STRING, Serdes.LONG).output(output).overwrite().threads(threads).build();
  }

  /** Emits (word, 1) per token. */
  public static final class Tokenize implements Mapper<Long, String, String, Long> {
    private static final Long ONE = 1L;

    @Override
    public void map(Long line, String text, Emitter<String, Long> out) {
      StringTokenizer tokens = new StringTokenizer(text);
      while (tokens.hasMoreTokens()) {
        out.emit(tokens.nextToken(), ONE);
      }
    }
  }

  /** Sums counts; also the combiner (associative, keeps keys). */
  public static final class Sum implements Reducer<String, Long, String, Long> {
    @Override
    public void reduce(String word, Iterable<Long> counts, Emitter<String, Long> out) {
      long sum = 0;
      for (long c : counts) {
        sum += c;
      }
      out.emit(word, sum);
    }
  }
}
