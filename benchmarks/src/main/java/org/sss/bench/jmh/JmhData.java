package org.sss.bench.jmh;

import java.util.ArrayList;
import java.util.List;
import java.util.SplittableRandom;
import java.util.StringTokenizer;
import org.sss.core.cluster.PartitionMap;
import org.sss.core.keys.KeyCodec;
import org.sss.core.keys.StoredKeys;
import org.sss.examples.RandomTextWriter;

/**
 * The data the JMH benchmarks ({@code bin/sss jmh}) run on: made from fixed seeds, so every run
 * measures the same bytes, and sized as a job's pairs are (keys of 8 to 20 bytes encoded,
 * values of 8 to 100 bytes, RandomTextWriter's text for the word counts).
 */
public final class JmhData {
  /** The seed of every benchmark's data. */
  public static final long SEED = 16;
  /** Pairs (or words) one benchmark invocation handles: a batch large enough to leave the caches. */
  public static final int PAIRS = 100_000;
  /** Partitions of one node's share of a cluster's key space: the default 8 per node. */
  public static final int PARTITIONS = 8;
  /** The source node in the uniquifier of shuffled pairs. */
  public static final int SOURCE = 1;

  private static final String ALPHABET = "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789";

  private JmhData() {}

  /**
   * {@code n} pairs as a stage's shuffle writes them into a multi-valued table: the key text,
   * its encoding, its partition, the stored key (partition, encoded key, uniquifier of source
   * {@link #SOURCE} and sequence i) and a value.
   */
  public static Pairs pairs(int n, long seed) {
    SplittableRandom random = new SplittableRandom(seed);
    PartitionMap map = PartitionMap.roundRobin(PARTITIONS, 1);
    Pairs p = new Pairs(n);
    for (int i = 0; i < n; i++) {
      p.keys[i] = text(random, 6, 18); // 8 to 20 bytes encoded: the text and the 2-byte terminator
      p.encoded[i] = KeyCodec.encodeString(p.keys[i]);
      p.partition[i] = map.partitionOf(p.encoded[i]);
      byte[] prefixed = new byte[2 + p.encoded[i].length]; // | partition u16 | encoded key |
      prefixed[0] = (byte) (p.partition[i] >>> 8);
      prefixed[1] = (byte) p.partition[i];
      System.arraycopy(p.encoded[i], 0, prefixed, 2, p.encoded[i].length);
      p.stored[i] = StoredKeys.withUniquifier(prefixed, SOURCE, i);
      byte[] value = new byte[8 + random.nextInt(93)]; // 8 to 100 bytes
      for (int j = 0; j < value.length; j++) {
        value[j] = (byte) random.nextInt(256);
      }
      p.values[i] = value;
    }
    return p;
  }

  /** A string of {@code min} to {@code max} letters and digits. */
  public static String text(SplittableRandom random, int min, int max) {
    char[] c = new char[min + random.nextInt(max - min + 1)];
    for (int i = 0; i < c.length; i++) {
      c[i] = ALPHABET.charAt(random.nextInt(ALPHABET.length()));
    }
    return new String(c);
  }

  /** The first {@code n} lines RandomTextWriter writes for map 0 with {@code seed} (Hadoop's word counts). */
  public static String[] lines(int n, long seed) {
    RandomTextWriter.Generator g = new RandomTextWriter.Generator(seed, 0);
    String[] lines = new String[n];
    for (int i = 0; i < n; i++) {
      lines[i] = g.nextLine();
    }
    return lines;
  }

  /**
   * The first {@code n} words of RandomTextWriter's lines, as WordCount's mapper emits them: the
   * words a combiner sees, 1,000 distinct ones drawn uniformly.
   */
  public static String[] words(int n, long seed) {
    RandomTextWriter.Generator g = new RandomTextWriter.Generator(seed, 0);
    List<String> words = new ArrayList<>(n);
    while (words.size() < n) {
      StringTokenizer t = new StringTokenizer(g.nextLine());
      while (t.hasMoreTokens() && words.size() < n) {
        words.add(t.nextToken());
      }
    }
    return words.toArray(new String[0]);
  }

  /** Pairs made by {@link #pairs}: index i of every array is pair i. */
  public static final class Pairs {
    public final String[] keys;
    public final byte[][] encoded;
    public final int[] partition;
    public final byte[][] stored;
    public final byte[][] values;

    Pairs(int n) {
      keys = new String[n];
      encoded = new byte[n][];
      partition = new int[n];
      stored = new byte[n][];
      values = new byte[n][];
    }

    public int size() {
      return keys.length;
    }
  }
}
