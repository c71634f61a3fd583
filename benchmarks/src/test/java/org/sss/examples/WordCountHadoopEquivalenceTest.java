package org.sss.examples;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.io.ByteArrayOutputStream;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import java.util.Random;
import org.apache.hadoop.conf.Configuration;
import org.apache.hadoop.mapreduce.Job;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.ExtendWith;
import org.junit.jupiter.api.io.TempDir;
import org.sss.bench.classic.HadoopClassic;
import org.sss.bench.classic.WordCounts;
import org.sss.client.SssClient;
import org.sss.client.cluster.SssCluster;
import org.sss.client.io.BulkIO;

/**
 * SSS's WordCount gives byte for byte the output of Hadoop's own
 * {@code org.apache.hadoop.examples.WordCount} (hadoop-mapreduce-examples 3.4.2 on the local job
 * runner, one reduce task) on text with non-ASCII words, every line end Hadoop knows, tabs, form
 * feeds, empty lines, bytes that are not UTF-8 and a line over 1 MB. The outputs are compared as
 * files, unsorted: SSS's dump comes out in Hadoop's key order (UTF-8 byte order) by itself.
 */
@ExtendWith(SharedClusters.class)
class WordCountHadoopEquivalenceTest {
  @TempDir
  Path dir;

  static byte[] input() {
    ByteArrayOutputStream b = new ByteArrayOutputStream();
    String[] words = {"naïve", "café", "Café", "日本語", "テキスト", "😀", "emoji😀x", "Ωmega", "straße", "a", "A", "z",
        "zz", "Z", "ß", "ǅ", "x\u00a0y", "x\u000by", "\u2028sep", "end.", "end", "#1", "-", "\u00e9t\u00e9",
        "e\u0301te\u0301", "ﬁ", "\uFEFFbom"};
    Random rnd = new Random(42);
    String[] ends = {"\n", "\r\n", "\r"};
    for (int line = 0; line < 3000; line++) {
      int n = rnd.nextInt(15);
      StringBuilder sb = new StringBuilder();
      for (int w = 0; w < n; w++) {
        if (w > 0 || rnd.nextInt(5) == 0) {
          sb.append(switch (rnd.nextInt(6)) {
            case 0 -> "\t";
            case 1 -> "  ";
            case 2 -> "\f";
            case 3 -> " \t ";
            default -> " ";
          });
        }
        sb.append(words[rnd.nextInt(words.length)]);
      }
      if (rnd.nextInt(10) == 0) {
        sb.append(" \t");
      }
      b.writeBytes(sb.toString().getBytes(StandardCharsets.UTF_8));
      if (line % 97 == 0) {
        // bytes that are not UTF-8: both decode them to U+FFFD
        b.writeBytes(new byte[] {' ', (byte) 0xff, 'q', (byte) 0xc3, ' ', (byte) 0xe6, (byte) 0x97, ' '});
      }
      b.writeBytes(ends[rnd.nextInt(ends.length)].getBytes(StandardCharsets.US_ASCII));
      if (line % 50 == 0) {
        b.writeBytes("\n\r\n\r\r\n\n".getBytes(StandardCharsets.US_ASCII)); // empty lines, every kind
      }
    }
    // one line over 1 MB
    StringBuilder huge = new StringBuilder();
    while (huge.length() < (1 << 20) + 1000) {
      huge.append(words[rnd.nextInt(words.length)]).append(rnd.nextBoolean() ? ' ' : '\t').append("long").append(' ');
    }
    b.writeBytes(huge.toString().getBytes(StandardCharsets.UTF_8));
    b.writeBytes("\r\nlast line without an end\tnaïve".getBytes(StandardCharsets.UTF_8));
    return b.toByteArray();
  }

  @Test
  void sssWordCount_isByteIdenticalToHadoopsOwnWordCount() throws Exception {
    byte[] text = input();
    assertTrue(text.length > (1 << 20));
    Path in = dir.resolve("in.txt");
    Files.write(in, text);

    // Hadoop's org.apache.hadoop.examples.WordCount, wired as its main does, one reduce task.
    Configuration conf = new HadoopClassic(2, dir).configuration();
    Path hadoopOut = dir.resolve("hadoop-out");
    Job job = HadoopClassic.wordCountJob(conf, new org.apache.hadoop.fs.Path(in.toUri()),
        new org.apache.hadoop.fs.Path(hadoopOut.toUri()), 1);
    assertTrue(job.waitForCompletion(false), "Hadoop's WordCount failed");
    byte[] hadoop = Files.readAllBytes(hadoopOut.resolve("part-r-00000"));

    // SSS's WordCount on two nodes (the output spans shards), dumped as word<TAB>count lines.
    SssCluster cluster = SharedClusters.get(2);
    String lines = SharedClusters.table("eq-lines");
    String counts = SharedClusters.table("eq-counts");
    Path sssOut = dir.resolve("sss-out.txt");
    try (SssClient client = cluster.client()) {
      BulkIO.load(client, lines, in, n -> { });
      client.submit(WordCount.job(lines, counts, true, 2)).await();
      BulkIO.dump(client, counts, sssOut, n -> { });
      client.dropTable(lines, true);
      client.dropTable(counts, true);
    }
    byte[] sss = Files.readAllBytes(sssOut);

    // The same word set as counted here (so that the comparison is not vacuous), ...
    List<byte[]> reference = WordCounts.reference(in);
    List<byte[]> hadoopLines = WordCounts.lines(List.of(hadoopOut.resolve("part-r-00000")));
    assertEquals("", WordCounts.difference(reference, hadoopLines));
    assertTrue(hadoopLines.size() > 25, "words: " + hadoopLines.size());
    String all = new String(hadoop, StandardCharsets.UTF_8);
    for (String w : List.of("naïve\t", "日本語\t", "😀\t", "\uFFFD", "x\u00a0y\t", "x\u000by\t", "long\t")) {
      assertTrue(all.contains(w), "Hadoop's output lacks " + w);
    }
    // ... Hadoop's file in UTF-8 byte order, and SSS's output byte for byte the same, unsorted.
    assertTrue(WordCounts.isSorted(hadoopLines));
    List<byte[]> sssLines = WordCounts.lines(List.of(sssOut));
    assertArrayEquals(hadoop, sss, () -> "outputs differ: " + WordCounts.difference(hadoopLines, sssLines));
  }
}
