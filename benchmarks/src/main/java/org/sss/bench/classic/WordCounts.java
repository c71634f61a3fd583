package org.sss.bench.classic;

import java.io.ByteArrayOutputStream;
import java.io.IOException;
import java.io.InputStream;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.StringTokenizer;
import java.util.stream.Stream;
import org.sss.client.io.LineReader;

/**
 * WordCount outputs as what can be compared: {@code word<TAB>count} lines as raw bytes, in the
 * order Hadoop sorts its keys ({@code Text}'s byte order: unsigned UTF-8 bytes).
 */
public final class WordCounts {
  private WordCounts() {}

  /** Unsigned byte order, as Hadoop's {@code Text} comparator. */
  public static int compare(byte[] a, byte[] b) {
    return Arrays.compareUnsigned(a, b);
  }

  /** The files of an output directory whose names start with {@code prefix}, in name order. */
  public static List<Path> parts(Path dir, String prefix) throws IOException {
    try (Stream<Path> s = Files.list(dir)) {
      return s.filter(p -> p.getFileName().toString().startsWith(prefix) && Files.isRegularFile(p)).sorted().toList();
    }
  }

  /** The {@code \n}-ended lines of the files, in file order (words never hold a newline). */
  public static List<byte[]> lines(List<Path> files) throws IOException {
    List<byte[]> out = new ArrayList<>();
    for (Path f : files) {
      byte[] all = Files.readAllBytes(f);
      int start = 0;
      for (int i = 0; i < all.length; i++) {
        if (all[i] == '\n') {
          out.add(Arrays.copyOfRange(all, start, i));
          start = i + 1;
        }
      }
      if (start < all.length) {
        out.add(Arrays.copyOfRange(all, start, all.length));
      }
    }
    return out;
  }

  /** A sorted copy. */
  public static List<byte[]> sorted(List<byte[]> lines) {
    List<byte[]> s = new ArrayList<>(lines);
    s.sort(WordCounts::compare);
    return s;
  }

  /** True when the lines are already in Hadoop's key order. */
  public static boolean isSorted(List<byte[]> lines) {
    for (int i = 1; i < lines.size(); i++) {
      if (compare(lines.get(i - 1), lines.get(i)) > 0) {
        return false;
      }
    }
    return true;
  }

  /** "" when equal, else what differs first (both sorted). */
  public static String difference(List<byte[]> expected, List<byte[]> actual) {
    int n = Math.min(expected.size(), actual.size());
    for (int i = 0; i < n; i++) {
      if (!Arrays.equals(expected.get(i), actual.get(i))) {
        return "line " + (i + 1) + ": expected '" + show(expected.get(i)) + "', got '" + show(actual.get(i)) + "'";
      }
    }
    if (expected.size() != actual.size()) {
      return "expected " + expected.size() + " lines, got " + actual.size()
          + (actual.size() > n ? " (first extra: '" + show(actual.get(n)) + "')"
              : " (first missing: '" + show(expected.get(n)) + "')");
    }
    return "";
  }

  static String show(byte[] line) {
    String s = new String(line, StandardCharsets.UTF_8);
    return s.length() > 80 ? s.substring(0, 80) + "..." : s;
  }

  /**
   * The word counts of a text file computed here, one thread, as Hadoop's WordCount defines
   * them: lines ending at {@code \n}, {@code \r\n} or a lone {@code \r}, decoded as UTF-8 (as
   * {@code Text.toString}), split by {@link StringTokenizer}'s default delimiters. Sorted lines.
   */
  public static List<byte[]> reference(Path text) throws IOException {
    Map<String, Long> counts = new HashMap<>();
    try (InputStream in = Files.newInputStream(text); LineReader r = new LineReader(in)) {
      for (byte[] line = r.next(); line != null; line = r.next()) {
        StringTokenizer t = new StringTokenizer(new String(line, StandardCharsets.UTF_8));
        while (t.hasMoreTokens()) {
          counts.merge(t.nextToken(), 1L, Long::sum);
        }
      }
    }
    List<byte[]> out = new ArrayList<>(counts.size());
    ByteArrayOutputStream b = new ByteArrayOutputStream();
    for (Map.Entry<String, Long> e : counts.entrySet()) {
      b.reset();
      b.writeBytes(e.getKey().getBytes(StandardCharsets.UTF_8));
      b.write('\t');
      b.writeBytes(Long.toString(e.getValue()).getBytes(StandardCharsets.US_ASCII));
      out.add(b.toByteArray());
    }
    return sorted(out);
  }

  /** The sum of the counts and the words not in {@code allowed} (at most 5 shown), for a lines list. */
  public static String unknownWords(List<byte[]> lines, Set<String> allowed) {
    List<String> bad = new ArrayList<>();
    int n = 0;
    for (byte[] l : lines) {
      String s = new String(l, StandardCharsets.UTF_8);
      String w = s.substring(0, Math.max(0, s.lastIndexOf('\t')));
      if (!allowed.contains(w)) {
        n++;
        if (bad.size() < 5) {
          bad.add(w);
        }
      }
    }
    return n == 0 ? "" : n + " words not in RandomTextWriter's list, e.g. " + bad;
  }

  /** Total of the counts of {@code word<TAB>count} lines. */
  public static long total(List<byte[]> lines) {
    long t = 0;
    for (byte[] l : lines) {
      String s = new String(l, StandardCharsets.US_ASCII);
      t += Long.parseLong(s.substring(s.lastIndexOf('\t') + 1));
    }
    return t;
  }
}
