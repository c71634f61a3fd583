package org.sss.bench.synthetic;

import java.io.IOException;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.Collections;
import java.util.List;
import java.util.Map;
import java.util.TreeMap;
import org.apache.hadoop.conf.Configuration;
import org.apache.hadoop.fs.FileStatus;
import org.apache.hadoop.fs.FileSystem;
import org.apache.hadoop.fs.Path;
import org.apache.hadoop.io.BytesWritable;
import org.apache.hadoop.io.LongWritable;
import org.apache.hadoop.io.SequenceFile;
import org.apache.hadoop.mapreduce.lib.partition.HashPartitioner;

/**
 * Reads a synthetic run's Hadoop output (SequenceFiles {@code part-r-NNNNN}, one per reduce task)
 * into {@link Observed}, two ways:
 * <ul>
 *   <li><b>every pair, where it is stored</b>: each pair must be in the part file that
 *       {@link HashPartitioner} (the job's partitioner) names for its key, and each part file in
 *       increasing key order (as the reduce wrote it); one part file per reduce task, and no
 *       other file a reader would see (any name not starting with '_' or '.'): such a file is
 *       named, and its pairs are counted as output;
 *   <li><b>a sample of keys by key</b> ({@link KeySample}): each sampled key is looked up in the
 *       part file its partitioner names, reading keys only up to it (the values of other keys are
 *       skipped), and its values compared with the expected ones exactly.
 * </ul>
 */
final class HadoopOutputCheck {
  private HadoopOutputCheck() {}

  /** Reads {@code output} into {@code seen}; returns the number of keys read by key. */
  static int read(Configuration conf, FileSystem fs, Path output, int reduces, Expected expected, Observed seen)
      throws IOException {
    HashPartitioner<LongWritable, BytesWritable> partitioner = new HashPartitioner<>();
    LongWritable k = new LongWritable();
    BytesWritable v = new BytesWritable();
    Map<Integer, Path> parts = new TreeMap<>();
    // every file a reader of the directory sees: Hadoop's input formats skip only '_' and '.' names
    for (FileStatus st : fs.listStatus(output, path -> !path.getName().startsWith("_")
        && !path.getName().startsWith("."))) {
      String name = st.getPath().getName();
      int index = name.matches("part-r-\\d+") ? Integer.parseInt(name.substring("part-r-".length())) : -1;
      boolean part = index >= 0 && index < reduces && st.isFile();
      if (part) {
        parts.put(index, st.getPath());
      } else {
        seen.problem(Observed.PLACEMENT, "unexpected output file " + name);
        if (!st.isFile()) {
          continue;
        }
        // its pairs are output all the same: counted, so that a copy of a pair here shows as one pair too many
      }
      try (SequenceFile.Reader r = new SequenceFile.Reader(conf, SequenceFile.Reader.file(st.getPath()))) {
        long previous = Long.MIN_VALUE;
        while (r.next(k, v)) {
          long key = k.get();
          int named = partitioner.getPartition(k, v, reduces);
          if (part && named != index) {
            seen.problem(Observed.PLACEMENT, "key " + key + " in " + name + ", its HashPartitioner names part "
                + named);
          }
          if (part && key < previous) {
            seen.problem(Observed.ORDER, "key " + key + " after key " + previous + " in " + name);
          }
          previous = key;
          seen.addOutput(key, v.getBytes(), 0, v.getLength(), expected.outputLength());
        }
      }
    }
    if (parts.size() != reduces) {
      seen.problem(Observed.PLACEMENT, parts.size() + " part files for " + reduces + " reduce tasks");
    }
    return readByKey(conf, parts, reduces, partitioner, expected, seen);
  }

  private static int readByKey(Configuration conf, Map<Integer, Path> parts, int reduces,
                               HashPartitioner<LongWritable, BytesWritable> partitioner, Expected expected,
                               Observed seen) throws IOException {
    long[] sample = KeySample.of(expected.keys(), expected.outputLength());
    Map<Integer, List<Long>> byPart = new TreeMap<>();
    LongWritable k = new LongWritable();
    BytesWritable v = new BytesWritable();
    for (long key : sample) {
      k.set(key);
      byPart.computeIfAbsent(partitioner.getPartition(k, v, reduces), x -> new ArrayList<>()).add(key);
    }
    for (Map.Entry<Integer, List<Long>> e : byPart.entrySet()) {
      List<Long> wanted = e.getValue(); // increasing, as the sample is
      Map<Long, List<byte[]>> found = new TreeMap<>();
      Path part = parts.get(e.getKey());
      if (part != null) {
        try (SequenceFile.Reader r = new SequenceFile.Reader(conf, SequenceFile.Reader.file(part))) {
          long last = wanted.get(wanted.size() - 1);
          // next(key) reads a key and skips its value; the value is read only for a wanted key
          while (r.next(k) && k.get() <= last) {
            if (Collections.binarySearch(wanted, k.get()) >= 0) {
              r.getCurrentValue(v);
              found.computeIfAbsent(k.get(), x -> new ArrayList<>()).add(Arrays.copyOf(v.getBytes(), v.getLength()));
            }
          }
        }
      }
      for (long key : wanted) {
        seen.byKey(key, expected.valuesOf((int) key), found.getOrDefault(key, List.of()));
      }
    }
    return sample.length;
  }
}
