package org.sss.client.job;

import java.nio.ByteBuffer;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.Comparator;
import java.util.List;
import java.util.Map;
import java.util.TreeMap;
import org.sss.core.api.Pair;

/**
 * Compares what a table holds with what the reference emitted, on encoded bytes, and says
 * how they differ in a few readable lines ({@code null} when they agree).
 */
final class PairDiff {
  private static final int SHOWN = 4;
  private static final Comparator<byte[]> UNSIGNED = Arrays::compareUnsigned;
  private static final Comparator<Pair> ORDER = Comparator.comparing(Pair::key, UNSIGNED)
      .thenComparing(Pair::value, UNSIGNED);

  private final DiffType keyType;
  private final DiffType valueType;

  PairDiff(DiffType keyType, DiffType valueType) {
    this.keyType = keyType;
    this.valueType = valueType;
  }

  /** Multi-valued semantics: the same multiset of pairs. */
  String multiset(List<Pair> expected, List<Pair> actual) {
    List<Pair> e = sorted(expected);
    List<Pair> a = sorted(actual);
    List<Pair> missing = new ArrayList<>();
    List<Pair> unexpected = new ArrayList<>();
    int i = 0;
    int j = 0;
    while (i < e.size() || j < a.size()) {
      int c = i == e.size() ? 1 : j == a.size() ? -1 : ORDER.compare(e.get(i), a.get(j));
      if (c == 0) {
        i++;
        j++;
      } else if (c < 0) {
        missing.add(e.get(i++));
      } else {
        unexpected.add(a.get(j++));
      }
    }
    if (missing.isEmpty() && unexpected.isEmpty()) {
      return null;
    }
    return "expected " + e.size() + " pairs (" + distinctKeys(e) + " keys), found " + a.size() + " ("
        + distinctKeys(a) + " keys): " + missing.size() + " missing " + pairs(missing) + ", " + unexpected.size()
        + " unexpected " + pairs(unexpected);
  }

  /**
   * Single-valued semantics: the keys emitted, each exactly once, holding one of the values
   * emitted for it.
   */
  String singleValued(List<Pair> emitted, List<Pair> actual) {
    Map<ByteBuffer, List<byte[]>> candidates = new TreeMap<>();
    for (Pair p : emitted) {
      candidates.computeIfAbsent(ByteBuffer.wrap(p.key()), k -> new ArrayList<>()).add(p.value());
    }
    Map<ByteBuffer, Integer> seen = new TreeMap<>();
    List<String> problems = new ArrayList<>();
    int missing = 0;
    int unexpected = 0;
    int duplicated = 0;
    int wrongValue = 0;
    for (Pair p : actual) {
      ByteBuffer k = ByteBuffer.wrap(p.key());
      if (seen.merge(k, 1, Integer::sum) > 1) {
        duplicated++;
        note(problems, "key " + key(p.key()) + " stored more than once");
      }
      List<byte[]> values = candidates.get(k);
      if (values == null) {
        unexpected++;
        note(problems, "unexpected " + pair(p));
      } else if (values.stream().noneMatch(v -> Arrays.equals(v, p.value()))) {
        wrongValue++;
        note(problems, "key " + key(p.key()) + " holds " + valueType.describeValue(p.value()) + ", not one of the "
            + values.size() + " emitted (" + valueType.describeValue(values.get(0)) + ", ...)");
      }
    }
    for (Map.Entry<ByteBuffer, List<byte[]>> c : candidates.entrySet()) {
      if (!seen.containsKey(c.getKey())) {
        missing++;
        note(problems, "missing key " + key(bytes(c.getKey())) + " (" + c.getValue().size() + " values emitted)");
      }
    }
    if (problems.isEmpty()) {
      return null;
    }
    return "expected " + candidates.size() + " keys, found " + actual.size() + " pairs: " + missing + " keys missing, "
        + unexpected + " unexpected, " + duplicated + " duplicated, " + wrongValue + " with a value never emitted; e.g. "
        + String.join("; ", problems);
  }

  /**
   * Combinable values: per key, the {@link DifferentialFunctions#merge merge} of all values
   * must agree (a combiner may have merged some of them already).
   */
  String merged(List<Pair> expected, List<Pair> actual) {
    Map<ByteBuffer, Object> e = mergeByKey(expected);
    Map<ByteBuffer, Object> a = mergeByKey(actual);
    List<String> problems = new ArrayList<>();
    int differing = 0;
    for (Map.Entry<ByteBuffer, Object> x : e.entrySet()) {
      Object found = a.get(x.getKey());
      byte[] want = valueType.serde.encodeValue(x.getValue());
      if (found == null || !Arrays.equals(want, valueType.serde.encodeValue(found))) {
        differing++;
        note(problems, "key " + key(bytes(x.getKey())) + ": expected merged value " + valueType.describeValue(want)
            + ", found " + (found == null ? "no value" : valueType.describeValue(valueType.serde.encodeValue(found))));
      }
    }
    int unexpected = 0;
    for (ByteBuffer k : a.keySet()) {
      if (!e.containsKey(k)) {
        unexpected++;
        note(problems, "unexpected key " + key(bytes(k)));
      }
    }
    if (problems.isEmpty()) {
      return null;
    }
    return "merging each key's values: " + differing + " of " + e.size() + " keys differ or are missing, "
        + unexpected + " unexpected; e.g. " + String.join("; ", problems);
  }

  private Map<ByteBuffer, Object> mergeByKey(List<Pair> pairs) {
    Map<ByteBuffer, Object> out = new TreeMap<>();
    for (Pair p : pairs) {
      out.merge(ByteBuffer.wrap(p.key()), valueType.serde.decodeValue(p.value()), DifferentialFunctions::merge);
    }
    return out;
  }

  private static List<Pair> sorted(List<Pair> pairs) {
    List<Pair> s = new ArrayList<>(pairs);
    s.sort(ORDER);
    return s;
  }

  private static int distinctKeys(List<Pair> sorted) {
    int n = 0;
    for (int i = 0; i < sorted.size(); i++) {
      if (i == 0 || !Arrays.equals(sorted.get(i).key(), sorted.get(i - 1).key())) {
        n++;
      }
    }
    return n;
  }

  private String pairs(List<Pair> ps) {
    if (ps.isEmpty()) {
      return "";
    }
    List<String> shown = new ArrayList<>();
    for (int i = 0; i < Math.min(SHOWN, ps.size()); i++) {
      shown.add(pair(ps.get(i)));
    }
    return "(e.g. " + String.join(", ", shown) + (ps.size() > SHOWN ? ", ..." : "") + ")";
  }

  private String pair(Pair p) {
    return "(" + key(p.key()) + ", " + valueType.describeValue(p.value()) + ")";
  }

  private String key(byte[] encoded) {
    return keyType.describeKey(encoded);
  }

  private static byte[] bytes(ByteBuffer b) {
    return Arrays.copyOfRange(b.array(), b.arrayOffset(), b.arrayOffset() + b.remaining());
  }

  private static void note(List<String> problems, String problem) {
    if (problems.size() < SHOWN) {
      problems.add(problem);
    }
  }
}
