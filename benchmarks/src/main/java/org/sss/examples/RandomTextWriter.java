package org.sss.examples;

import java.io.BufferedReader;
import java.io.IOException;
import java.io.InputStream;
import java.io.InputStreamReader;
import java.io.OutputStream;
import java.io.UncheckedIOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import org.sss.client.BulkWriter;
import org.sss.client.SssClient;
import org.sss.client.TableSpec;
import org.sss.client.job.Job;
import org.sss.core.api.Emitter;
import org.sss.core.api.Mapper;
import org.sss.core.api.Serdes;
import org.sss.core.api.TaskContext;
import org.sss.core.keys.KeyCodec;
import org.sss.core.keys.PairTypes;
import org.sss.core.proto.DataType;

/**
 * Writes random text, as Hadoop's {@code randomtextwriter} example
 * ({@code org.apache.hadoop.examples.RandomTextWriter}) does: a map-only job whose tasks each
 * write lines of random words from the same 1000-word list until they have written their share
 * of the bytes. A line is what Hadoop's record would read as text: a "key" of 5 to 9 words, a
 * tab, and a "value" of 10 to 99 words (Hadoop's defaults {@code min + nextInt(max - min)};
 * words joined by single spaces, without Hadoop's trailing blank).
 *
 * <p>The input is a small seed table, one row (map index, bytes) per map task, written by
 * {@link #writeSeeds}; the output is a (long, string) table like a loaded text file, so that
 * {@link WordCount} runs on it as it is. Keys are {@code map index << 40 | row} (row from 1), so
 * the table in key order is map 0's lines, then map 1's, and so on. A map stops after the line
 * that reaches its byte share (counting each line's bytes and its newline, so the text written
 * out has about the asked size), or after {@link #ROWS_PER_MAP} rows when that is set. Each map
 * draws from its own {@code java.util.Random} sequence seeded from {@link #SEED} and its index, so a run is
 * reproducible.
 */
public final class RandomTextWriter {
  /** Configuration key: the seed of the run. */
  public static final String SEED = "randomtextwriter.seed";
  /** Configuration key: at most this many rows per map task (0, the default: no limit). */
  public static final String ROWS_PER_MAP = "randomtextwriter.rows-per-map";
  /** Configuration keys of the words per line part (Hadoop's defaults 5, 10, 10, 100). */
  public static final String MIN_WORDS_KEY = "randomtextwriter.min-words-key";
  public static final String MAX_WORDS_KEY = "randomtextwriter.max-words-key";
  public static final String MIN_WORDS_VALUE = "randomtextwriter.min-words-value";
  public static final String MAX_WORDS_VALUE = "randomtextwriter.max-words-value";
  /** Bits of a key that number the rows of one map. */
  public static final int ROW_BITS = 40;
  /** Most maps a run can have (map indexes fill the key's bits above {@link #ROW_BITS}). */
  public static final int MAX_MAPS = 1 << 22;

  private static final List<String> WORDS = loadWords();
  /** The words as the bytes the lines hold (they are ASCII). */
  private static final byte[][] WORD_BYTES = WORDS.stream()
      .map(w -> w.getBytes(StandardCharsets.US_ASCII)).toArray(byte[][]::new);

  private RandomTextWriter() {}

  /** The words lines are made of: Hadoop's list, in its order. */
  public static List<String> words() {
    return WORDS;
  }

  /** The job: seed rows (map index, bytes) in, lines (map index &lt;&lt; 40 | row, line) out. */
  public static Job job(String seeds, String output, long seed, long rowsPerMap) {
    return job(seeds, output, seed, rowsPerMap, 0);
  }

  /** Like {@link #job(String, String, long, long)} with {@code threads} tasks at once per node (0: the node's default). */
  public static Job job(String seeds, String output, long seed, long rowsPerMap, int threads) {
    return Job.named("randomtextwriter")
        .jarByClass(RandomTextWriter.class)
        .input(seeds, Serdes.LONG, Serdes.LONG)
        .map(RandomTextMapper.class, Serdes.LONG, Serdes.STRING)
        .output(output).overwrite()
        .outputCompression(TableSpec.Compression.NONE) // plain text, as Hadoop's randomtextwriter writes it
        .config(SEED, Long.toString(seed))
        .config(ROWS_PER_MAP, Long.toString(rowsPerMap))
        .threads(threads)
        .build();
  }

  /**
   * The job writing its lines straight into text part files in {@code dir}, one per map task,
   * as Hadoop's map-only RandomTextWriter writes them: lines only (the mapper emits no key), no
   * table on the way ({@link Job.Builder#outputText}).
   */
  public static Job jobToFiles(String seeds, Path dir, long seed, long rowsPerMap, int threads) {
    return Job.named("randomtextwriter")
        .jarByClass(RandomTextWriter.class)
        .input(seeds, Serdes.LONG, Serdes.LONG)
        .map(RandomLinesMapper.class, Serdes.LONG, Serdes.STRING_BYTES)
        .outputText(dir)
        .config(SEED, Long.toString(seed))
        .config(ROWS_PER_MAP, Long.toString(rowsPerMap))
        .threads(threads)
        .build();
  }

  /** Creates the seed table: {@code maps} rows sharing {@code totalBytes} as evenly as can be. */
  public static void writeSeeds(SssClient client, String table, int maps, long totalBytes) {
    if (maps < 1 || maps > MAX_MAPS) {
      throw new IllegalArgumentException("maps must be 1.." + MAX_MAPS + ", got " + maps);
    }
    if (totalBytes < 0) {
      throw new IllegalArgumentException("bytes must not be negative, got " + totalBytes);
    }
    client.createTable(table, TableSpec.of(PairTypes.of(DataType.LONG, DataType.LONG)), false);
    try (BulkWriter w = client.writer(table, PairTypes.of(Serdes.LONG, Serdes.LONG))) {
      for (int i = 0; i < maps; i++) {
        w.put(KeyCodec.encodeLong(i), KeyCodec.encodeLong(bytesOfMap(i, maps, totalBytes)));
      }
    }
  }

  /** Map {@code i}'s share of the bytes. */
  public static long bytesOfMap(int i, int maps, long totalBytes) {
    return totalBytes / maps + (i < totalBytes % maps ? 1 : 0);
  }

  /** The key of row {@code row} (from 1) of map {@code map}. */
  public static long key(long map, long row) {
    return map << ROW_BITS | row;
  }

  /**
   * Writes the generated text as plain lines in key order: into one file, or (when
   * {@code perMapDir} is set) into {@code part-m-NNNNN} files per map in that directory, as
   * Hadoop's map-only job would.
   *
   * @return the lines written
   */
  public static long writeText(SssClient client, String table, Path out, int maps, boolean perMapDir)
      throws IOException {
    long[] lines = {0};
    long[] currentMap = {-1};
    OutputStream[] os = {null};
    try {
      if (!perMapDir) {
        os[0] = ExampleIO.create(out);
      }
      ExampleIO.scan(client, table, Serdes.LONG, Serdes.BYTES, (key, line) -> {
        try {
          long map = key >>> ROW_BITS;
          if (perMapDir && map != currentMap[0]) {
            if (os[0] != null) {
              os[0].close();
            }
            currentMap[0] = map;
            os[0] = ExampleIO.create(out.resolve(partName(map)));
          }
          os[0].write(line);
          os[0].write('\n');
          lines[0]++;
        } catch (IOException e) {
          throw new UncheckedIOException(e);
        }
      });
    } catch (UncheckedIOException e) {
      throw e.getCause();
    } finally {
      if (os[0] != null) {
        os[0].close();
      }
    }
    if (perMapDir) {
      for (int m = 0; m < maps; m++) {
        Path part = out.resolve(partName(m));
        if (!Files.exists(part)) {
          Files.createFile(part);
        }
      }
    }
    return lines[0];
  }

  static String partName(long map) {
    return String.format("part-m-%05d", map);
  }

  /** One map's lines, in order: what its task writes. */
  public static final class Generator {
    private final Lcg random;
    private final int minKey;
    private final int keyRange;
    private final int minValue;
    private final int valueRange;
    private byte[] line = new byte[1024];
    private int length;

    public Generator(long seed, long map, int minKey, int maxKey, int minValue, int maxValue) {
      if (minKey < 0 || maxKey < minKey || minValue < 0 || maxValue < minValue) {
        throw new IllegalArgumentException("bad word counts: key " + minKey + ".." + maxKey
            + ", value " + minValue + ".." + maxValue);
      }
      this.random = new Lcg(seed * 0x9E3779B97F4A7C15L + map);
      this.minKey = minKey;
      this.keyRange = maxKey - minKey;
      this.minValue = minValue;
      this.valueRange = maxValue - minValue;
    }

    /** With Hadoop's default word counts. */
    public Generator(long seed, long map) {
      this(seed, map, 5, 10, 10, 100);
    }

    public String nextLine() {
      return new String(nextLineBytes(), StandardCharsets.US_ASCII);
    }

    /** The next line's bytes (the words are ASCII), without its newline. */
    public byte[] nextLineBytes() {
      length = 0;
      sentence(minKey + (keyRange != 0 ? random.nextInt(keyRange) : 0));
      append(TAB);
      sentence(minValue + (valueRange != 0 ? random.nextInt(valueRange) : 0));
      return Arrays.copyOf(line, length);
    }

    private void sentence(int words) {
      for (int i = 0; i < words; i++) {
        if (i > 0) {
          append(SPACE);
        }
        append(WORD_BYTES[random.nextInt(WORD_BYTES.length)]);
      }
    }

    private void append(byte[] b) {
      if (length + b.length > line.length) {
        line = Arrays.copyOf(line, Math.max(2 * line.length, length + b.length));
      }
      System.arraycopy(b, 0, line, length, b.length);
      length += b.length;
    }

    private static final byte[] TAB = {'\t'};
    private static final byte[] SPACE = {' '};
  }

  /**
   * {@code java.util.Random}'s generator as its documentation specifies it (the 48-bit linear
   * congruential generator and {@code nextInt}'s rejection loop), so the same seed gives the
   * same text, without its atomic seed: one compare-and-set per word, 100 million per GiB,
   * for a sequence only one thread draws from.
   */
  static final class Lcg {
    private static final long MULTIPLIER = 0x5DEECE66DL;
    private static final long ADDEND = 0xBL;
    private static final long MASK = (1L << 48) - 1;
    private long seed;

    Lcg(long seed) {
      this.seed = (seed ^ MULTIPLIER) & MASK;
    }

    private int next(int bits) {
      seed = (seed * MULTIPLIER + ADDEND) & MASK;
      return (int) (seed >>> (48 - bits));
    }

    int nextInt(int bound) {
      int r = next(31);
      int m = bound - 1;
      if ((bound & m) == 0) {
        return (int) ((bound * (long) r) >> 31);
      }
      for (int u = r; u - (r = u % bound) + m < 0; u = next(31)) {
        // rejected: a value from the incomplete last range
      }
      return r;
    }
  }

  /**
   * Writes lines of random words until the map's byte share (or row limit) is reached, each
   * as {@link #emit} says.
   */
  abstract static class LineWriter<K, V> implements Mapper<Long, Long, K, V> {
    private long seed;
    private long rowsPerMap;
    private int minKey;
    private int maxKey;
    private int minValue;
    private int maxValue;
    private TaskContext.Counter records;
    private TaskContext.Counter bytes;

    @Override
    public void setup(TaskContext context) {
      seed = Long.parseLong(context.get(SEED, "0"));
      rowsPerMap = Long.parseLong(context.get(ROWS_PER_MAP, "0"));
      minKey = Integer.parseInt(context.get(MIN_WORDS_KEY, "5"));
      maxKey = Integer.parseInt(context.get(MAX_WORDS_KEY, "10"));
      minValue = Integer.parseInt(context.get(MIN_WORDS_VALUE, "10"));
      maxValue = Integer.parseInt(context.get(MAX_WORDS_VALUE, "100"));
      records = context.counter("RECORDS_WRITTEN");
      bytes = context.counter("BYTES_WRITTEN");
    }

    @Override
    public void map(Long map, Long share, Emitter<K, V> out) {
      Generator g = new Generator(seed, map, minKey, maxKey, minValue, maxValue);
      long left = share;
      for (long row = 1; left > 0 && (rowsPerMap == 0 || row <= rowsPerMap); row++) {
        byte[] line = g.nextLineBytes();
        emit(map, row, line, out);
        long n = line.length + 1L; // one byte for the newline
        left -= n;
        bytes.increment(n);
        records.increment();
      }
    }

    /** Emits row {@code row} (from 1) of map {@code map}. */
    abstract void emit(long map, long row, byte[] line, Emitter<K, V> out);
  }

  /** Lines keyed by {@link #key}, as strings: into a table. */
  public static final class RandomTextMapper extends LineWriter<Long, String> {
    @Override
    void emit(long map, long row, byte[] line, Emitter<Long, String> out) {
      out.emit(key(map, row), new String(line, StandardCharsets.US_ASCII));
    }
  }

  /** Lines as their bytes, without keys: into text files, a line each ({@link #jobToFiles}). */
  public static final class RandomLinesMapper extends LineWriter<Long, byte[]> {
    @Override
    void emit(long map, long row, byte[] line, Emitter<Long, byte[]> out) {
      out.emit(null, line);
    }
  }

  private static List<String> loadWords() {
    List<String> words = new ArrayList<>(1000);
    try (InputStream in = RandomTextWriter.class.getResourceAsStream("randomtextwriter-words.txt")) {
      if (in == null) {
        throw new IllegalStateException("randomtextwriter-words.txt is missing from the class path");
      }
      BufferedReader r = new BufferedReader(new InputStreamReader(in, StandardCharsets.US_ASCII));
      for (String l = r.readLine(); l != null; l = r.readLine()) {
        if (!l.isBlank() && !l.startsWith("#")) {
          words.add(l.strip());
        }
      }
    } catch (IOException e) {
      throw new UncheckedIOException(e);
    }
    return List.copyOf(words);
  }
}
