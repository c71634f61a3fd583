package org.sss.examples;

import java.math.BigDecimal;
import java.math.RoundingMode;
import org.sss.client.BulkWriter;
import org.sss.client.SssClient;
import org.sss.client.TableSpec;
import org.sss.client.job.Job;
import org.sss.client.job.JobResult;
import org.sss.client.job.ProgressListener;
import org.sss.core.api.Emitter;
import org.sss.core.api.Mapper;
import org.sss.core.api.Serdes;
import org.sss.core.keys.KeyCodec;
import org.sss.core.keys.PairTypes;
import org.sss.core.proto.DataType;

/**
 * Estimates &pi; by quasi-Monte Carlo, as Hadoop's {@code pi} example
 * ({@code org.apache.hadoop.examples.QuasiMonteCarlo}) does: map task {@code i} of {@code M}
 * takes the points {@code i*S+1 .. i*S+S} of the 2-dimensional Halton sequence (bases 2 and 3)
 * in the unit square and counts those inside and outside the inscribed circle; the reduce sums
 * the counts, and &pi; &asymp; 4 &middot; inside / (M &middot; S).
 *
 * <p>The input is a table of (map index, samples) rows, one per map, written by
 * {@link #writeInput}; rows are hash-placed, so the maps spread over the nodes' partitions.
 * The output table holds two pairs, {@code inside} and {@code outside}, with their counts.
 */
public final class Pi {
  /** Output key of the points inside the circle. */
  public static final String INSIDE = "inside";
  /** Output key of the points outside the circle. */
  public static final String OUTSIDE = "outside";

  private Pi() {}

  /** What a run found. */
  public record Result(int maps, long samples, long inside, long outside, BigDecimal estimate, JobResult job) {}

  /** The job: (map index, samples) rows in, (inside|outside, count) out. */
  public static Job job(String input, String output, boolean combine) {
    return job(input, output, combine, 0);
  }

  /** Like {@link #job(String, String, boolean)} with {@code threads} tasks at once per node (0: the node's default). */
  public static Job job(String input, String output, boolean combine, int threads) {
    Job.Builder b = Job.named("pi")
        .jarByClass(Pi.class)
        .input(input, Serdes.LONG, Serdes.LONG)
        .map(QmcMapper.class, Serdes.STRING, Serdes.LONG);
    if (combine) {
      b.combine(WordCount.Sum.class);
    }
    return b.reduce(WordCount.Sum.class, Serdes.STRING, Serdes.LONG).output(output).overwrite().threads(threads).build();
  }

  /** Creates the input table: one row (map index, samples) per map. */
  public static void writeInput(SssClient client, String table, int maps, long samples) {
    if (maps < 1 || samples < 1) {
      throw new IllegalArgumentException("pi needs at least 1 map and 1 sample per map (got "
          + maps + " maps, " + samples + " samples)");
    }
    client.createTable(table, TableSpec.of(PairTypes.of(DataType.LONG, DataType.LONG)), false);
    try (BulkWriter w = client.writer(table, PairTypes.of(Serdes.LONG, Serdes.LONG))) {
      for (int i = 0; i < maps; i++) {
        w.put(KeyCodec.encodeLong(i), KeyCodec.encodeLong(samples));
      }
    }
  }

  /** Writes the input, runs the job, and reads the estimate; the tables are the caller's to drop. */
  public static Result run(SssClient client, String input, String output, int maps, long samples,
                           boolean combine, ProgressListener progress) {
    return run(client, input, output, maps, samples, combine, 0, progress);
  }

  /** Like {@link #run(SssClient, String, String, int, long, boolean, ProgressListener)} with {@code threads} tasks per node. */
  public static Result run(SssClient client, String input, String output, int maps, long samples,
                           boolean combine, int threads, ProgressListener progress) {
    writeInput(client, input, maps, samples);
    JobResult r = client.submit(job(input, output, combine, threads)).await(progress);
    long inside = client.get(output, Serdes.STRING.encodeKey(INSIDE)).map(Serdes.LONG::decodeValue).orElse(0L);
    long outside = client.get(output, Serdes.STRING.encodeKey(OUTSIDE)).map(Serdes.LONG::decodeValue).orElse(0L);
    return new Result(maps, samples, inside, outside, estimate(inside, (long) maps * samples), r);
  }

  /** 4 &middot; inside / total, to 20 decimal places as Hadoop prints it. */
  public static BigDecimal estimate(long inside, long total) {
    return BigDecimal.valueOf(4).setScale(20)
        .multiply(BigDecimal.valueOf(inside))
        .divide(BigDecimal.valueOf(total), RoundingMode.HALF_UP);
  }

  /**
   * Counts of the points {@code offset+1 .. offset+size}: {inside, outside}. The points are
   * walked incrementally, as Hadoop's mapper walks them: each step adds one to the index's
   * digits in both bases and adjusts the coordinate by the digits that change (a carry per
   * base-b digit rollover), instead of recomputing the radical inverse from scratch.
   */
  public static long[] count(long offset, long size) {
    HaltonWalk x = new HaltonWalk(2, 63, offset);
    HaltonWalk y = new HaltonWalk(3, 40, offset);
    long inside = 0;
    for (long i = 0; i < size; i++) {
      double dx = x.next() - 0.5;
      double dy = y.next() - 0.5;
      if (dx * dx + dy * dy <= 0.25) {
        inside++;
      }
    }
    return new long[] {inside, size - inside};
  }

  /** One coordinate of the Halton sequence, stepped point by point. */
  static final class HaltonWalk {
    private final int base;
    /** weight[j] = base^-(j+1): what digit j of the index is worth in the coordinate. */
    private final double[] weight;
    private final int[] digit;
    private double value;

    /** Positioned at point {@code index} (0: before the first point). */
    HaltonWalk(int base, int digits, long index) {
      this.base = base;
      this.weight = new double[digits];
      this.digit = new int[digits];
      long k = index;
      for (int j = 0; j < digits; j++) {
        weight[j] = (j == 0 ? 1.0 : weight[j - 1]) / base;
        digit[j] = (int) (k % base);
        k = (k - digit[j]) / base;
        value += digit[j] * weight[j];
      }
    }

    /** The coordinate of the next point. */
    double next() {
      for (int j = 0; j < digit.length; j++) {
        digit[j]++;
        value += weight[j];
        if (digit[j] < base) {
          break;
        }
        digit[j] = 0;
        value -= j == 0 ? 1.0 : weight[j - 1];
      }
      return value;
    }
  }

  /**
   * Coordinate of point {@code index} (from 1) of the Halton sequence in one base: the radical
   * inverse, i.e. the base-{@code b} digits of the index mirrored behind the point.
   */
  static double halton(long index, int base) {
    double r = 0;
    double digitWeight = 1.0 / base;
    for (long i = index; i > 0; i /= base) {
      r += (i % base) * digitWeight;
      digitWeight /= base;
    }
    return r;
  }

  /** Counts the points of one map's slice of the sequence. */
  public static final class QmcMapper implements Mapper<Long, Long, String, Long> {
    @Override
    public void map(Long mapIndex, Long samples, Emitter<String, Long> out) {
      long[] c = count(mapIndex * samples, samples);
      out.emit(INSIDE, c[0]);
      out.emit(OUTSIDE, c[1]);
    }
  }
}
