package org.sss.examples;

import java.util.ArrayList;
import java.util.Arrays;
import java.util.HashSet;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.StringTokenizer;
import java.util.TreeSet;
import org.sss.client.BulkWriter;
import org.sss.client.SssClient;
import org.sss.client.TableSpec;
import org.sss.client.job.Job;
import org.sss.client.job.JobResult;
import org.sss.client.job.ProgressListener;
import org.sss.core.api.Emitter;
import org.sss.core.api.Mapper;
import org.sss.core.api.Reducer;
import org.sss.core.api.Serdes;
import org.sss.core.api.TaskContext;
import org.sss.core.keys.PairTypes;
import org.sss.core.proto.DataType;

/**
 * Frequent itemsets by Apriori, counted as in Hash-Partitioned Apriori (HPA: Shintani and
 * Kitsuregawa, 1996). Hadoop's examples have no Apriori; this is the usual MapReduce form of
 * it, one job per pass, driven by a client loop.
 *
 * <h2>A pass</h2>
 * Pass {@code k} counts the candidate k-itemsets {@code C_k}: every map task reads the
 * transactions stored on its node, and for each transaction emits (itemset, 1) for every
 * k-subset of its items that is a candidate. The shuffle hash-partitions the itemsets, so the
 * count of each candidate lives on exactly one node — HPA's partitioning of the candidate set
 * over the processors — while a combiner pre-sums within each task. The reducer keeps the
 * itemsets whose support (transactions containing them) is at least the minimum: {@code L_k}.
 * Pass 1 counts every item.
 *
 * <h2>The loop</h2>
 * The client reads {@code L_k}, adds it to the output table, and generates {@code C_{k+1}} by
 * apriori-gen: joins of two frequent k-itemsets sharing their first k-1 items, pruned of any
 * candidate with an infrequent k-subset. It runs pass k+1 until no candidate is left (or a size
 * limit is reached). The transactions table is read by every pass, and one pass table is
 * reused (overwritten) by each.
 *
 * <h2>Candidates</h2>
 * The map tasks receive {@code C_k} in the job's configuration (a broadcast, as Hadoop
 * implementations do through the distributed cache); HPA instead ships every k-subset to the
 * candidate's owner and tests membership there. Broadcasting only saves shuffle: by
 * anti-monotonicity, no itemset outside the candidates can reach the minimum support. A
 * candidate set larger than {@link #MAX_CANDIDATE_BYTES} is refused.
 *
 * <h2>Data</h2>
 * A transaction is a line of item ids separated by white space (duplicates count once); an
 * itemset is written as its items in {@link String} order joined by single spaces. The output
 * table holds (itemset, support) for every frequent itemset of every size.
 */
public final class Apriori {
  /** Configuration key: the itemset size of the pass. */
  public static final String K = "apriori.k";
  /** Configuration key: the candidates, one itemset a line (absent in pass 1: every item). */
  public static final String CANDIDATES = "apriori.candidates";
  /** Configuration key: the least support (a transaction count) an itemset must have. */
  public static final String MIN_SUPPORT = "apriori.min-support";
  /** Largest candidate set sent to the map tasks. */
  public static final int MAX_CANDIDATE_BYTES = 16 << 20;

  private Apriori() {}

  /** One pass: its size, candidates counted (0 for pass 1: all items), itemsets found. */
  public record Pass(int k, int candidates, int frequent, JobResult job) {}

  /** A run: the passes, and every frequent itemset with its support. */
  public record Result(long transactions, long minSupport, List<Pass> passes, Map<String, Long> frequent) {}

  /**
   * The job of pass {@code k}: transactions (byte offset, items) in, frequent k-itemsets
   * (itemset, support) out.
   *
   * @param candidates the candidate k-itemsets (items sorted, joined by spaces); null in pass 1
   */
  public static Job job(String transactions, String output, int k, List<String> candidates,
                        long minSupport, boolean combine) {
    if (k < 1 || (k > 1) != (candidates != null)) {
      throw new IllegalArgumentException("pass " + k + " needs " + (k > 1 ? "candidates" : "no candidates"));
    }
    Job.Builder b = Job.named("apriori-pass-" + k)
        .jarByClass(Apriori.class)
        .input(transactions, Serdes.LONG, Serdes.STRING)
        .map(CountCandidates.class, Serdes.STRING, Serdes.LONG);
    if (combine) {
      b.combine(WordCount.Sum.class);
    }
    b.reduce(KeepFrequent.class, Serdes.STRING, Serdes.LONG).output(output).overwrite()
        .config(K, Integer.toString(k))
        .config(MIN_SUPPORT, Long.toString(minSupport));
    if (candidates != null) {
      String c = String.join("\n", candidates);
      if (c.length() > MAX_CANDIDATE_BYTES) {
        throw new IllegalArgumentException("pass " + k + " has " + candidates.size() + " candidates ("
            + c.length() + " bytes), more than the " + MAX_CANDIDATE_BYTES + " bytes sent to map tasks;"
            + " raise the minimum support");
      }
      b.config(CANDIDATES, c);
    }
    return b.build();
  }

  /**
   * The minimum support as a transaction count: {@code s} itself when {@code s >= 1} (it must
   * then be whole), else the fraction {@code s} of the transactions, rounded up.
   */
  public static long minSupportCount(double s, long transactions) {
    if (!(s > 0)) {
      throw new IllegalArgumentException("the minimum support must be positive, got " + s);
    }
    if (s >= 1) {
      if (s != Math.rint(s)) {
        throw new IllegalArgumentException("a minimum support of 1 or more is a transaction count, got " + s);
      }
      return (long) s;
    }
    return Math.max(1, (long) Math.ceil(s * transactions));
  }

  /**
   * Runs passes until no candidate is left, writing every frequent itemset into a new table
   * {@code output} (itemset, support); the pass table {@code output + ".pass"} is dropped at
   * the end.
   *
   * @param maxSize largest itemsets to look for (0: no limit)
   */
  public static Result run(SssClient client, String transactions, String output, long minSupport,
                           int maxSize, boolean combine, ProgressListener progress) {
    long n = client.count(transactions);
    String passTable = output + ".pass";
    client.dropTable(output, true);
    client.createTable(output, TableSpec.of(PairTypes.of(DataType.STRING, DataType.LONG)), false);
    List<Pass> passes = new ArrayList<>();
    Map<String, Long> all = new LinkedHashMap<>();
    List<String> candidates = null;
    try {
      for (int k = 1; maxSize == 0 || k <= maxSize; k++) {
        JobResult r = client.submit(job(transactions, passTable, k, candidates, minSupport, combine)).await(progress);
        Map<String, Long> frequent = new LinkedHashMap<>();
        ExampleIO.scan(client, passTable, Serdes.STRING, Serdes.LONG, frequent::put);
        passes.add(new Pass(k, candidates == null ? 0 : candidates.size(), frequent.size(), r));
        try (BulkWriter w = client.writer(output, PairTypes.of(Serdes.STRING, Serdes.LONG))) {
          frequent.forEach((itemset, support) ->
              w.put(Serdes.STRING.encodeKey(itemset), Serdes.LONG.encodeValue(support)));
        }
        all.putAll(frequent);
        candidates = candidates(new ArrayList<>(frequent.keySet()));
        if (candidates.isEmpty()) {
          break;
        }
      }
    } finally {
      client.dropTable(passTable, true);
    }
    return new Result(n, minSupport, passes, all);
  }

  /**
   * apriori-gen: the (k+1)-itemsets whose every k-subset is in {@code frequent} (the frequent
   * k-itemsets, in the canonical form), made by joining pairs that share their first k-1 items.
   */
  public static List<String> candidates(List<String> frequent) {
    List<String[]> sets = new ArrayList<>();
    for (String s : frequent) {
      sets.add(s.split(" "));
    }
    sets.sort(Apriori::compare);
    Set<String> known = new HashSet<>(frequent);
    TreeSet<String> out = new TreeSet<>();
    for (int i = 0; i < sets.size(); i++) {
      String[] a = sets.get(i);
      int k = a.length;
      for (int j = i + 1; j < sets.size(); j++) {
        String[] b = sets.get(j);
        if (!Arrays.equals(a, 0, k - 1, b, 0, k - 1)) {
          break; // sorted: no later set shares a's prefix
        }
        String[] c = Arrays.copyOf(a, k + 1);
        c[k] = b[k - 1];
        if (allSubsetsFrequent(c, known)) {
          out.add(String.join(" ", c));
        }
      }
    }
    return new ArrayList<>(out);
  }

  private static boolean allSubsetsFrequent(String[] c, Set<String> known) {
    StringBuilder sb = new StringBuilder();
    for (int drop = 0; drop < c.length - 2; drop++) { // the last two subsets are the joined pair
      sb.setLength(0);
      for (int i = 0; i < c.length; i++) {
        if (i != drop) {
          if (sb.length() > 0) {
            sb.append(' ');
          }
          sb.append(c[i]);
        }
      }
      if (!known.contains(sb.toString())) {
        return false;
      }
    }
    return true;
  }

  private static int compare(String[] a, String[] b) {
    return Arrays.compare(a, b);
  }

  /** The distinct items of a transaction line, in canonical order. */
  public static TreeSet<String> items(String line) {
    TreeSet<String> items = new TreeSet<>();
    StringTokenizer t = new StringTokenizer(line);
    while (t.hasMoreTokens()) {
      items.add(t.nextToken());
    }
    return items;
  }

  /** Emits (itemset, 1) for every candidate k-subset of a transaction. */
  public static final class CountCandidates implements Mapper<Long, String, String, Long> {
    private static final Long ONE = 1L;
    private int k;
    private Set<String> candidates;
    private List<String[]> candidateItems;
    private Set<String> items;

    @Override
    public void setup(TaskContext context) {
      k = Integer.parseInt(context.get(K, "1"));
      String c = context.get(CANDIDATES, null);
      if (c != null) {
        candidates = new HashSet<>();
        candidateItems = new ArrayList<>();
        items = new HashSet<>();
        for (String s : c.split("\n")) {
          candidates.add(s);
          String[] parts = s.split(" ");
          candidateItems.add(parts);
          items.addAll(Arrays.asList(parts));
        }
      }
    }

    @Override
    public void map(Long line, String transaction, Emitter<String, Long> out) {
      TreeSet<String> present = items(transaction);
      if (candidates == null) {
        for (String item : present) {
          out.emit(item, ONE);
        }
        return;
      }
      present.retainAll(items);
      int n = present.size();
      if (n < k) {
        return;
      }
      if (binomial(n, k) <= candidateItems.size()) {
        enumerate(present.toArray(new String[0]), out);
      } else {
        for (String[] c : candidateItems) {
          if (present.containsAll(Arrays.asList(c))) {
            out.emit(String.join(" ", c), ONE);
          }
        }
      }
    }

    /** Emits the k-subsets of {@code items} (sorted) that are candidates. */
    private void enumerate(String[] items, Emitter<String, Long> out) {
      int n = items.length;
      int[] idx = new int[k];
      for (int i = 0; i < k; i++) {
        idx[i] = i;
      }
      StringBuilder sb = new StringBuilder();
      while (true) {
        sb.setLength(0);
        for (int i = 0; i < k; i++) {
          if (i > 0) {
            sb.append(' ');
          }
          sb.append(items[idx[i]]);
        }
        String s = sb.toString();
        if (candidates.contains(s)) {
          out.emit(s, ONE);
        }
        int i = k - 1;
        while (i >= 0 && idx[i] == n - k + i) {
          i--;
        }
        if (i < 0) {
          return;
        }
        idx[i]++;
        for (int j = i + 1; j < k; j++) {
          idx[j] = idx[j - 1] + 1;
        }
      }
    }

    private static long binomial(int n, int k) {
      long r = 1;
      for (int i = 1; i <= k; i++) {
        r = r * (n - k + i) / i;
        if (r > Integer.MAX_VALUE) {
          return r;
        }
      }
      return r;
    }
  }

  /** Sums an itemset's counts and keeps it when the sum reaches the minimum support. */
  public static final class KeepFrequent implements Reducer<String, Long, String, Long> {
    private long minSupport;

    @Override
    public void setup(TaskContext context) {
      minSupport = Long.parseLong(context.get(MIN_SUPPORT, "1"));
    }

    @Override
    public void reduce(String itemset, Iterable<Long> counts, Emitter<String, Long> out) {
      long sum = 0;
      for (long c : counts) {
        sum += c;
      }
      if (sum >= minSupport) {
        out.emit(itemset, sum);
      }
    }
  }
}
