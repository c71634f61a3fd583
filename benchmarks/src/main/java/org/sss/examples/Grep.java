package org.sss.examples;

import java.io.IOException;
import java.io.OutputStream;
import java.io.UncheckedIOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import java.util.regex.PatternSyntaxException;
import org.sss.client.SssClient;
import org.sss.client.job.Job;
import org.sss.core.api.Emitter;
import org.sss.core.api.Mapper;
import org.sss.core.api.Serdes;
import org.sss.core.api.TaskContext;

/**
 * Counts the matches of a regular expression, as Hadoop's {@code grep} example
 * ({@code org.apache.hadoop.examples.Grep}) does, in the same two jobs:
 * <ol>
 *   <li><b>search</b> ({@link #job}): every match in every line ({@link Matcher#find}, the
 *       whole match or the group given in {@link #GROUP}, like Hadoop's {@code RegexMapper})
 *       emits (match, 1); a combiner and the reducer sum them into (match, count).
 *   <li><b>sort</b> ({@link #sortJob}): (match, count) becomes (&minus;count, match) in a
 *       multi-valued table, so that reading the table in key order lists the matches by
 *       decreasing count. Hadoop sorts with a single reducer and a decreasing comparator; here
 *       the order is the store's own key order over negated counts, merged across nodes by an
 *       ordered scan. Matches with equal counts come in no particular order (as in Hadoop).
 * </ol>
 * {@link #writeSorted} writes the sorted table as Hadoop's output reads: {@code count<TAB>match}
 * lines. Lines are matched as Java strings (the regex is a {@link Pattern}).
 */
public final class Grep {
  /** Configuration key: the regular expression. */
  public static final String REGEX = "grep.regex";
  /** Configuration key: the group to count (default 0, the whole match). */
  public static final String GROUP = "grep.group";

  private Grep() {}

  /** The search job: lines (byte offset, text) in, (match, count) out. */
  public static Job job(String input, String output, String regex, boolean combine) {
    return job(input, output, regex, 0, combine);
  }

  /** The search job, counting group {@code group} of each match. */
  public static Job job(String input, String output, String regex, int group, boolean combine) {
    check(regex, group);
    Job.Builder b = Job.named("grep-search")
        .jarByClass(Grep.class)
        .input(input, Serdes.LONG, Serdes.STRING)
        .map(Match.class, Serdes.STRING, Serdes.LONG);
    if (combine) {
      b.combine(WordCount.Sum.class);
    }
    return b.reduce(WordCount.Sum.class, Serdes.STRING, Serdes.LONG)
        .output(output).overwrite()
        .config(REGEX, regex)
        .config(GROUP, Integer.toString(group))
        .build();
  }

  /** The sort job: (match, count) in, (&minus;count, match) out, every match kept. */
  public static Job sortJob(String counts, String output) {
    return Job.named("grep-sort")
        .jarByClass(Grep.class)
        .input(counts, Serdes.STRING, Serdes.LONG)
        .map(Invert.class, Serdes.LONG, Serdes.STRING)
        .output(output).multiValuedOutput().overwrite()
        .build();
  }

  /** Writes the sort job's table as {@code count<TAB>match} lines, highest count first. */
  public static long writeSorted(SssClient client, String sorted, Path out) throws IOException {
    long[] n = {0};
    try (OutputStream os = ExampleIO.create(out)) {
      ExampleIO.scan(client, sorted, Serdes.LONG, Serdes.STRING, (negCount, match) -> {
        try {
          os.write((-negCount + "\t" + match + "\n").getBytes(StandardCharsets.UTF_8));
        } catch (IOException e) {
          throw new UncheckedIOException(e);
        }
        n[0]++;
      });
    } catch (UncheckedIOException e) {
      throw e.getCause();
    }
    return n[0];
  }

  /** Fails with a one-line message unless {@code regex} compiles and has group {@code group}. */
  public static void check(String regex, int group) {
    Pattern p;
    try {
      p = Pattern.compile(regex);
    } catch (PatternSyntaxException e) {
      throw new IllegalArgumentException("invalid regex '" + regex + "': " + e.getDescription()
          + " near index " + e.getIndex());
    }
    if (group < 0 || group > p.matcher("").groupCount()) {
      throw new IllegalArgumentException("regex '" + regex + "' has no group " + group);
    }
  }

  /** Emits (match, 1) for every match of the regex in a line. */
  public static final class Match implements Mapper<Long, String, String, Long> {
    private static final Long ONE = 1L;
    private Pattern pattern;
    private int group;

    @Override
    public void setup(TaskContext context) {
      pattern = Pattern.compile(context.get(REGEX, ""));
      group = Integer.parseInt(context.get(GROUP, "0"));
    }

    @Override
    public void map(Long line, String text, Emitter<String, Long> out) {
      Matcher m = pattern.matcher(text);
      while (m.find()) {
        String match = m.group(group);
        if (match != null) {
          out.emit(match, ONE);
        }
      }
    }
  }

  /** (match, count) to (&minus;count, match): long keys sort ascending, so counts descend. */
  public static final class Invert implements Mapper<String, Long, Long, String> {
    @Override
    public void map(String match, Long count, Emitter<Long, String> out) {
      out.emit(-count, match);
    }
  }
}
