package org.sss.examples;

import java.io.IOException;
import java.io.OutputStream;
import java.io.UncheckedIOException;
import java.nio.file.Path;
import org.sss.client.SssClient;
import org.sss.client.job.Job;
import org.sss.core.api.Emitter;
import org.sss.core.api.Mapper;
import org.sss.core.api.Serdes;

/**
 * Sorts the lines of a text into one total order: the job of Hadoop's {@code sort} example
 * ({@code org.apache.hadoop.examples.Sort}), which sorts (key, value) records with an identity
 * map and reduce and lets the framework's sort do the work.
 *
 * <h2>What sorts, honestly</h2>
 * A table is kept in key order by the store, so a (key, value) table needs no job at all to be
 * read sorted. What a job must do is <em>re-key</em> the records: here (byte offset, line)
 * becomes (line, byte offset). The map output is hash-partitioned like any shuffle, and every
 * partition is sorted by the store (RocksDB) as it is written; the one global order is a merge
 * of the partitions when the table is read in key order (each node merges its partitions, the
 * client merges the nodes: {@link org.sss.client.ScanOptions#inKeyOrder()}, which {@code dump}
 * uses). There is no range partitioning (Hadoop's {@code TotalOrderPartitioner} with sampling)
 * and no reduce: no node holds a contiguous range of lines, and the total order exists as a
 * merged scan, streamed through one client.
 *
 * <p>The output table is multi-valued, so duplicate lines are all kept (one pair each, the value
 * telling which input line it was). Lines compare as unsigned bytes, i.e. by code point for
 * UTF-8 text, like {@code LC_ALL=C sort}; lines are moved byte for byte. Equal lines come in no
 * defined order.
 */
public final class Sort {
  private Sort() {}

  /** The job: lines (byte offset, text) in, (line, byte offset) out, duplicates kept. */
  public static Job job(String input, String output) {
    return Job.named("sort")
        .jarByClass(Sort.class)
        .input(input, Serdes.LONG, Serdes.BYTES)
        .map(Rekey.class, Serdes.BYTES, Serdes.LONG)
        .output(output).multiValuedOutput().overwrite()
        .build();
  }

  /** Writes the sorted lines, one per line, in order; returns the lines written. */
  public static long writeLines(SssClient client, String sorted, Path out) throws IOException {
    long[] n = {0};
    try (OutputStream os = ExampleIO.create(out)) {
      ExampleIO.scan(client, sorted, Serdes.BYTES, Serdes.LONG, (line, offset) -> {
        try {
          os.write(line);
          os.write('\n');
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

  /** (byte offset, line) to (line, byte offset). */
  public static final class Rekey implements Mapper<Long, byte[], byte[], Long> {
    @Override
    public void map(Long offset, byte[] line, Emitter<byte[], Long> out) {
      out.emit(line, offset);
    }
  }
}
