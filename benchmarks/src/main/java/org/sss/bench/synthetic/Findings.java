package org.sss.bench.synthetic;

import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;

/**
 * What a verification found wrong, by kind: how many times, and the first few instances in
 * words (naming the keys), so that a failed run says which keys differ and how, not only that
 * a total is off.
 */
public final class Findings {
  /** Instances kept per kind. */
  static final int EXAMPLES = 5;

  private static final class Kind {
    long count;
    final List<String> examples = new ArrayList<>();
  }

  private final Map<String, Kind> kinds = new LinkedHashMap<>();

  /** Records one instance of {@code kind}, e.g. ("output by key", "key 7: ..."). */
  public void add(String kind, String instance) {
    Kind k = kinds.computeIfAbsent(kind, x -> new Kind());
    k.count++;
    if (k.examples.size() < EXAMPLES) {
      k.examples.add(instance);
    }
  }

  public boolean isEmpty() {
    return kinds.isEmpty();
  }

  /** Instances of {@code kind} recorded. */
  public long count(String kind) {
    Kind k = kinds.get(kind);
    return k == null ? 0 : k.count;
  }

  /** One clause per kind: "kind: N (first: a; b; c)", joined by "; ". Empty when nothing was found. */
  @Override
  public String toString() {
    StringBuilder sb = new StringBuilder();
    for (Map.Entry<String, Kind> e : kinds.entrySet()) {
      Kind k = e.getValue();
      sb.append(sb.length() == 0 ? "" : "; ").append(e.getKey()).append(": ").append(k.count).append(" (")
          .append(k.count > k.examples.size() ? "first: " : "").append(String.join(", ", k.examples)).append(')');
    }
    return sb.toString();
  }
}
