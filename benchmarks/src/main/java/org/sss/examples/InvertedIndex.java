package org.sss.examples;

import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.HashSet;
import java.util.List;
import java.util.Set;
import java.util.StringTokenizer;
import java.util.TreeSet;
import org.sss.client.job.Job;
import org.sss.core.api.Emitter;
import org.sss.core.api.Mapper;
import org.sss.core.api.Reducer;
import org.sss.core.api.Serde;
import org.sss.core.api.Serdes;
import org.sss.core.keys.KeyCodec;
import org.sss.core.proto.DataType;

/**
 * Builds an inverted index: every word, with the sorted list of the files it occurs in. This is
 * not a class of Hadoop's examples JAR but the inverted index of the MapReduce paper (Dean and
 * Ghemawat, 2004, section 2.3), the classic exercise written for Hadoop in every course: the
 * map emits (word, file) once per word of a file, the reduce gathers and sorts the files.
 *
 * <p>The input is the table {@code sss load --whole-files} makes of a directory: (file name,
 * content). Files
 * are read as UTF-8 and split into words as {@link WordCount} does ({@link StringTokenizer}).
 * The map already emits one-element lists ({@link FileList}), so a combiner can merge them
 * before the shuffle: a set union, associative and commutative, which is also the reducer.
 * The output is (word, files): file names sorted ({@link String} order), stored as text joined
 * by tabs, so a dump reads {@code word<TAB>file<TAB>file...}. A file name holding a tab or a
 * line break fails the job (it could not be told apart in the output).
 */
public final class InvertedIndex {
  private InvertedIndex() {}

  /** The job: (file name, content) in, (word, sorted file names) out. */
  public static Job job(String input, String output, boolean combine) {
    Job.Builder b = Job.named("invertedindex")
        .jarByClass(InvertedIndex.class)
        .input(input, Serdes.STRING, Serdes.BYTES)
        .map(Index.class, Serdes.STRING, new FileList());
    if (combine) {
      b.combine(Union.class);
    }
    return b.reduce(Union.class, Serdes.STRING, new FileList()).output(output).overwrite().build();
  }

  /** Emits (word, [file]) once for every distinct word of a file. */
  public static final class Index implements Mapper<String, byte[], String, List<String>> {
    @Override
    public void map(String file, byte[] content, Emitter<String, List<String>> out) {
      if (file.indexOf('\t') >= 0 || file.indexOf('\n') >= 0 || file.indexOf('\r') >= 0) {
        throw new IllegalArgumentException("file name '" + file + "' holds a tab or line break");
      }
      List<String> files = List.of(file);
      Set<String> seen = new HashSet<>();
      StringTokenizer words = new StringTokenizer(new String(content, StandardCharsets.UTF_8));
      while (words.hasMoreTokens()) {
        String w = words.nextToken();
        if (seen.add(w)) {
          out.emit(w, files);
        }
      }
    }
  }

  /** Merges lists of files into one sorted list without duplicates; combiner and reducer. */
  public static final class Union implements Reducer<String, List<String>, String, List<String>> {
    @Override
    public void reduce(String word, Iterable<List<String>> lists, Emitter<String, List<String>> out) {
      TreeSet<String> files = new TreeSet<>();
      for (List<String> l : lists) {
        files.addAll(l);
      }
      out.emit(word, new ArrayList<>(files));
    }
  }

  /**
   * A list of file names as text: the names joined by tabs (so tools print it as a string).
   * Names must hold no tab.
   */
  public static final class FileList implements Serde<List<String>> {
    @Override
    public byte[] encodeKey(List<String> key) {
      return KeyCodec.encodeString(String.join("\t", key));
    }

    @Override
    public List<String> decodeKey(byte[] bytes) {
      return split(KeyCodec.decodeString(bytes));
    }

    @Override
    public byte[] encodeValue(List<String> value) {
      return String.join("\t", value).getBytes(StandardCharsets.UTF_8);
    }

    @Override
    public List<String> decodeValue(byte[] bytes) {
      return split(new String(bytes, StandardCharsets.UTF_8));
    }

    private static List<String> split(String s) {
      return s.isEmpty() ? List.of() : Arrays.asList(s.split("\t", -1));
    }

    @Override
    public DataType dataType() {
      return DataType.STRING;
    }
  }
}
