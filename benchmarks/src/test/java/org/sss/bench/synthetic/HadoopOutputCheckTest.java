package org.sss.bench.synthetic;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.nio.file.Files;
import java.util.List;
import java.util.Map;
import java.util.TreeMap;
import org.apache.hadoop.conf.Configuration;
import org.apache.hadoop.fs.FileSystem;
import org.apache.hadoop.fs.Path;
import org.apache.hadoop.io.BytesWritable;
import org.apache.hadoop.io.LongWritable;
import org.apache.hadoop.io.SequenceFile;
import org.apache.hadoop.mapreduce.lib.partition.HashPartitioner;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * {@link HadoopOutputCheck} on output directories written by hand: the right one verifies, and
 * pairs anywhere a reader of the directory would see them count, whatever the file's name.
 */
class HadoopOutputCheckTest {
  static final int REDUCES = 2;

  @TempDir
  java.nio.file.Path dir;

  /** Writes the correct output of {@code e} as part-r-NNNNN files, as the job's reduce tasks do. */
  static void writeCorrect(Configuration conf, Path out, Expected e) throws Exception {
    HashPartitioner<LongWritable, BytesWritable> partitioner = new HashPartitioner<>();
    Map<Integer, List<Long>> keys = new TreeMap<>();
    for (long k = 0; k < e.keys(); k++) {
      keys.computeIfAbsent(partitioner.getPartition(new LongWritable(k), null, REDUCES), x -> new java.util.ArrayList<>())
          .add(k);
    }
    for (int part = 0; part < REDUCES; part++) {
      write(conf, new Path(out, String.format("part-r-%05d", part)), e, keys.getOrDefault(part, List.of()));
    }
    FileSystem.getLocal(conf).create(new Path(out, "_SUCCESS")).close();
  }

  static void write(Configuration conf, Path file, Expected e, List<Long> keys) throws Exception {
    try (SequenceFile.Writer w = SequenceFile.createWriter(conf, SequenceFile.Writer.file(file),
        SequenceFile.Writer.keyClass(LongWritable.class), SequenceFile.Writer.valueClass(BytesWritable.class))) {
      for (long k : keys) {
        for (byte[] v : e.valuesOf((int) k)) {
          w.append(new LongWritable(k), new BytesWritable(v));
        }
      }
    }
  }

  static Observed read(Configuration conf, Path out, Expected e) throws Exception {
    Observed seen = VerificationTest.correctCounters(e);
    HadoopOutputCheck.read(conf, FileSystem.getLocal(conf), out, REDUCES, e, seen);
    return seen;
  }

  @Test
  void correctOutput_verifies() throws Exception {
    Configuration conf = new Configuration();
    Expected e = Expected.compute(VerificationTest.P, null, 1);
    Path out = new Path(dir.resolve("out").toUri());
    writeCorrect(conf, out, e);
    assertEquals("", read(conf, out, e).compare(e));
  }

  /**
   * A visible file that is not a part file (a side output, a task's output committed under
   * another name) holding a second copy of key 3's pair: every reader of the directory sees it
   * (Hadoop's input formats skip only names starting with '_' or '.'), so the check must too.
   */
  @Test
  void pairsInAFileNotNamedLikeAPartFile_areSeen() throws Exception {
    Configuration conf = new Configuration();
    Expected e = Expected.compute(VerificationTest.P, null, 1);
    Path out = new Path(dir.resolve("out").toUri());
    writeCorrect(conf, out, e);
    write(conf, new Path(out, "side-r-00000"), e, List.of(3L));
    String problem = read(conf, out, e).compare(e);
    assertTrue(problem.contains(Observed.PLACEMENT + ": 1 (unexpected output file side-r-00000)"), problem);
    assertTrue(problem.contains("output pairs: expected 16, got 17"), problem);
    assertTrue(problem.contains(Observed.OUTPUT + ": 1 (key 3: 2 output values, expected 1)"), problem);
    assertTrue(Files.exists(dir.resolve("out/.part-r-00000.crc")), "hidden files are left alone");
  }
}
