package org.sss.bench.synthetic;

import java.util.ArrayList;
import java.util.List;
import java.util.function.LongUnaryOperator;

/**
 * Everything a correct run must produce, computed from the parameters alone: the counters'
 * totals, the number of reduce groups and their digest sum, and per key the output values it
 * must have (one per group that reached it).
 *
 * <p>A group is a key's values as one reducer receives them: with {@code average} placement all
 * of a key's values (one group per key); with {@code local} or {@code shifted} placement each
 * node reduces the values its own input emitted, so a key has one group per node whose input
 * reached it.
 */
public final class Expected {
  private final int outputLength;
  private final long inputRecords;
  private final long inputCrc;
  private final long values;
  private final long valueCrc;
  private final long groups;
  private final long reduceDigest;
  /** Raw values and their checksum sum per group (source node, or 0) and key. */
  private final long[][] count;
  private final long[][] sum;
  /** Output values per key, and the sum of their {@link SyntheticData#valueHash}es. */
  private final int[] outputs;
  private final long[] hashes;

  private Expected(int outputLength, long inputRecords, long inputCrc, long values, long valueCrc, long[][] count,
                   long[][] sum) {
    this.outputLength = outputLength;
    this.inputRecords = inputRecords;
    this.inputCrc = inputCrc;
    this.values = values;
    this.valueCrc = valueCrc;
    this.count = count;
    this.sum = sum;
    int u = count[0].length;
    this.outputs = new int[u];
    this.hashes = new long[u];
    byte[] out = SyntheticData.pattern(outputLength);
    long g = 0;
    long digest = 0;
    for (int grp = 0; grp < count.length; grp++) {
      for (int k = 0; k < u; k++) {
        if (count[grp][k] > 0) {
          SyntheticData.fillOutput(out, k, count[grp][k], sum[grp][k]);
          outputs[k]++;
          hashes[k] += SyntheticData.valueHash(out, 0, out.length);
          digest += SyntheticData.groupDigest(k, count[grp][k], sum[grp][k]);
          g++;
        }
      }
    }
    this.groups = g;
    this.reduceDigest = digest;
  }

  /**
   * @param sourceNode the node that stores input key i (for local and shifted placement,
   *                   where each node reduces its own part of a key); null for average
   * @param nodes      node count (used with sourceNode)
   */
  public static Expected compute(SyntheticParams p, LongUnaryOperator sourceNode, int nodes) {
    byte[] in = SyntheticData.pattern(p.initialValueLength());
    long inputCrc = 0;
    for (long i = 0; i < p.initialKeyCount(); i++) {
      SyntheticData.fillInput(in, i);
      inputCrc += SyntheticData.inputDigest(i, SyntheticData.crc(in, 0, in.length));
    }
    int groups = sourceNode == null ? 1 : nodes;
    int u = Math.toIntExact(p.mapoutUniqueKeyCount());
    long[][] count = new long[groups][u];
    long[][] sum = new long[groups][u];
    byte[] v = SyntheticData.pattern(p.mapoutValueLength());
    long valueCrc = 0;
    for (long i = 0; i < p.initialKeyCount(); i++) {
      long m = SyntheticParams.pairsOf(i, p.initialKeyCount(), p.mapoutKeyCount());
      if (m == 0) {
        continue;
      }
      int grp = sourceNode == null ? 0 : (int) sourceNode.applyAsLong(i);
      long g = SyntheticParams.firstPairOf(i, p.initialKeyCount(), p.mapoutKeyCount());
      for (long j = 0; j < m; j++, g++) {
        SyntheticData.fillRaw(v, g);
        long c = SyntheticData.crc(v, 0, v.length);
        int k = (int) (g % u);
        count[grp][k]++;
        sum[grp][k] += c;
        valueCrc += c;
      }
    }
    return new Expected(p.reduceoutValueLength(), p.initialKeyCount(), inputCrc, p.mapoutKeyCount(), valueCrc, count,
        sum);
  }

  public long inputRecords() {
    return inputRecords;
  }

  public long inputCrc() {
    return inputCrc;
  }

  /** Raw intermediate values the reducers must receive in all. */
  public long values() {
    return values;
  }

  public long valueCrc() {
    return valueCrc;
  }

  /** Reduce calls, and so output pairs: one per (group, key) that received values. */
  public long groups() {
    return groups;
  }

  /** The wrapping sum of every group's {@link SyntheticData#groupDigest}. */
  public long reduceDigest() {
    return reduceDigest;
  }

  /** Unique keys: 0 .. keys()-1. */
  public int keys() {
    return outputs.length;
  }

  public int outputLength() {
    return outputLength;
  }

  /** Output values key {@code k} must have. */
  public int outputsOf(int k) {
    return outputs[k];
  }

  /** The sum of the {@link SyntheticData#valueHash}es of key {@code k}'s output values. */
  public long hashOf(int k) {
    return hashes[k];
  }

  /** Key {@code k}'s output values, one per group that reached it, in group order. */
  public List<byte[]> valuesOf(int k) {
    List<byte[]> out = new ArrayList<>();
    for (int grp = 0; grp < count.length; grp++) {
      if (count[grp][k] > 0) {
        byte[] v = SyntheticData.pattern(outputLength);
        SyntheticData.fillOutput(v, k, count[grp][k], sum[grp][k]);
        out.add(v);
      }
    }
    return out;
  }
}
