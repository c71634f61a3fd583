package org.sss.bench.synthetic;

import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;

/**
 * What a run produced, gathered after its job and compared with {@link Expected}: the job's
 * counters, every output pair (per key: how many values, and the sum of their
 * {@link SyntheticData#valueHash}es, so each key's multiset of values is compared without
 * keeping it), and what the engine-specific readers found wrong on the way (a pair outside the
 * partition its key's hash names, a read by key that disagrees with the expected value).
 */
public final class Observed {
  /** Kinds of {@link Findings}. */
  public static final String PLACEMENT = "pairs outside their hash partition";
  public static final String BY_KEY = "reads by key that differ";
  public static final String OUTPUT = "keys whose output differs";
  public static final String UNKNOWN_KEYS = "output pairs of keys that do not exist";
  public static final String ORDER = "output out of key order";

  public long inputRecords;
  public long inputCrc;
  public long values;
  public long valueCrc;
  public long reduceKeys;
  public long reduceDigest;
  private long outputPairs;
  private long badLengths;
  private final int[] outputs;
  private final long[] hashes;
  private final Findings findings = new Findings();

  /** @param keys the unique keys of the run (0 .. keys-1) */
  public Observed(int keys) {
    this.outputs = new int[keys];
    this.hashes = new long[keys];
  }

  /** Counts one output pair of the run. */
  public void addOutput(long key, byte[] value, int off, int len, int expectedLength) {
    outputPairs++;
    if (len != expectedLength) {
      badLengths++;
    }
    if (key < 0 || key >= outputs.length) {
      findings.add(UNKNOWN_KEYS, "key " + key);
      return;
    }
    outputs[(int) key]++;
    hashes[(int) key] += SyntheticData.valueHash(value, off, len);
  }

  /** Records something wrong found while reading the output ({@code kind}: one of this class's constants). */
  public void problem(String kind, String instance) {
    findings.add(kind, instance);
  }

  /** Compares a key's values read by key with the expected ones, as multisets. */
  public void byKey(long key, List<byte[]> expected, List<byte[]> got) {
    List<byte[]> e = new ArrayList<>(expected);
    List<byte[]> g = new ArrayList<>(got);
    e.sort(Arrays::compare);
    g.sort(Arrays::compare);
    if (g.isEmpty() && !e.isEmpty()) {
      problem(BY_KEY, "key " + key + ": nothing found");
    } else if (g.size() != e.size()) {
      problem(BY_KEY, "key " + key + ": " + g.size() + " values found, expected " + e.size());
    } else {
      for (int i = 0; i < e.size(); i++) {
        if (!Arrays.equals(e.get(i), g.get(i))) {
          problem(BY_KEY, "key " + key + ": value not the expected");
          return;
        }
      }
    }
  }

  /** How many of {@code kind} were found so far. */
  public long count(String kind) {
    return findings.count(kind);
  }

  /** Empty when everything matches; otherwise what differs, naming the first few keys. */
  public String compare(Expected e) {
    StringBuilder sb = new StringBuilder();
    check(sb, "input records", e.inputRecords(), inputRecords);
    check(sb, "input checksum", e.inputCrc(), inputCrc);
    check(sb, "intermediate values reduced", e.values(), values);
    check(sb, "intermediate checksum", e.valueCrc(), valueCrc);
    check(sb, "reduce groups (reduce calls)", e.groups(), reduceKeys);
    if (e.reduceDigest() != reduceDigest) {
      sb.append(sb.length() == 0 ? "" : "; ").append(String.format(
          "reduce digest (each group's key, value count and checksum): expected %016x, got %016x", e.reduceDigest(),
          reduceDigest));
    }
    check(sb, "output pairs", e.groups(), outputPairs);
    check(sb, "output values of the wrong length", 0, badLengths);
    Findings perKey = new Findings();
    for (int k = 0; k < outputs.length; k++) {
      if (outputs[k] != e.outputsOf(k)) {
        perKey.add(OUTPUT, "key " + k + ": " + outputs[k] + " output value" + (outputs[k] == 1 ? "" : "s")
            + ", expected " + e.outputsOf(k));
      } else if (hashes[k] != e.hashOf(k)) {
        perKey.add(OUTPUT, "key " + k + ": output value" + (outputs[k] == 1 ? "" : "s") + " not the expected");
      }
    }
    for (Findings f : new Findings[] {perKey, findings}) {
      if (!f.isEmpty()) {
        sb.append(sb.length() == 0 ? "" : "; ").append(f);
      }
    }
    return sb.toString();
  }

  private static void check(StringBuilder sb, String what, long expected, long actual) {
    if (expected != actual) {
      sb.append(sb.length() == 0 ? "" : "; ").append(what).append(": expected ").append(expected)
          .append(", got ").append(actual);
    }
  }
}
