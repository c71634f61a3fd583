package org.sss.bench.synthetic;

import java.io.IOException;
import java.io.Reader;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Map;
import java.util.Properties;
import java.util.Set;
import java.util.TreeSet;
import org.sss.bench.synthetic.SyntheticParams.PartitionMethod;

/**
 * Reads parameter files into workloads of points.
 *
 * <h2>File format</h2>
 * A Java properties file using the paper's names ({@code nodes, initialKeyCount, initialValueLength,
 * mapoutKeyCount, mapoutValueLength, mapoutUniqueKeyCount, reduceoutValueLength, partitionMethod,
 * combinerEnabled, combiningFactor}) plus {@code workload} (a name; default the file's name),
 * {@code totalBytes}, one {@code sweep.PARAM=v1,v2,...}, {@code repeats} (timed runs per point and
 * engine, default 1), {@code warmups} (untimed runs before each series' first timed run,
 * default 1), {@code threadsPerNode}, {@code engines} and {@code hadoop.conf}. Sizes and counts take binary suffixes (64K, 1M, 32MiB).
 *
 * <p>A sweep varies one parameter; its partner is derived so that the bytes it stands for stay at
 * {@code totalBytes}, as in the paper's Table 2: initialKeyCount x initialValueLength,
 * mapoutKeyCount x mapoutValueLength, mapoutUniqueKeyCount x reduceoutValueLength.
 * {@code combinerEnabled=false,true} runs every point both ways.
 *
 * <p>{@code workloads=a,b,c} puts several workloads in one file: keys without a prefix are
 * shared, keys prefixed {@code a.} apply to workload a only.
 *
 * <p>Unknown keys and inconsistent values are rejected with a message naming them.
 */
public final class SweepPlan {
  static final List<String> NUMERIC = List.of("initialKeyCount", "initialValueLength", "mapoutKeyCount",
      "mapoutValueLength", "mapoutUniqueKeyCount", "reduceoutValueLength");
  static final Map<String, String> PARTNER = Map.of(
      "initialKeyCount", "initialValueLength", "initialValueLength", "initialKeyCount",
      "mapoutKeyCount", "mapoutValueLength", "mapoutValueLength", "mapoutKeyCount",
      "mapoutUniqueKeyCount", "reduceoutValueLength", "reduceoutValueLength", "mapoutUniqueKeyCount");
  static final Set<String> KNOWN = new TreeSet<>(List.of("nodes", "initialKeyCount", "initialValueLength",
      "mapoutKeyCount", "mapoutValueLength", "mapoutUniqueKeyCount", "reduceoutValueLength", "partitionMethod",
      "combinerEnabled", "combiningFactor", "workload", "totalBytes", "repeats", "warmups", "threadsPerNode", "engines",
      "hadoop.conf", "replication"));
  static final Set<String> ENGINES = Set.of("sss", "hadoop");

  /** Defaults for what a file leaves out. */
  public static final int DEFAULT_NODES = 4;
  public static final int DEFAULT_THREADS_PER_NODE = 1;
  public static final int DEFAULT_COMBINING_FACTOR = 64;
  public static final int DEFAULT_REPEATS = 1;
  public static final int DEFAULT_WARMUPS = 1;
  /** Copies of each stored pair on SSS's embedded cluster: one, as Hadoop's local runner keeps. */
  public static final int DEFAULT_REPLICATION = 1;

  private SweepPlan() {}

  /** One run's parameters and where it sits in its sweep. */
  public record Point(String workload, String param, String value, double x, SyntheticParams params) {}

  /**
   * A named sweep from one file.
   *
   * @param repeats timed runs of every point on every engine
   * @param warmups untimed runs of each series' (engine and combiner setting) first point, before
   *                its first timed run
   * @param replication copies SSS keeps of each stored pair (its input and output tables; the
   *                    data between stages keeps one); Hadoop's local runner keeps one
   */
  public record Workload(String name, Path source, String param, long totalBytes, List<Point> points, int repeats,
                         int warmups, List<String> engines, Path hadoopConf, int replication) {
    public Workload withEngines(List<String> e) {
      return new Workload(name, source, param, totalBytes, points, repeats, warmups, e, hadoopConf, replication);
    }

    /** The same points on a cluster keeping {@code r} copies (a running cluster's number wins over the file's). */
    public Workload withReplication(int r) {
      return new Workload(name, source, param, totalBytes, points, repeats, warmups, engines, hadoopConf, r);
    }

    /** The same points on a cluster of {@code n} nodes (a running cluster's size wins over the file's). */
    public Workload withNodes(int n) {
      List<Point> adjusted = new ArrayList<>();
      for (Point pt : points) {
        SyntheticParams q = pt.params();
        adjusted.add(new Point(pt.workload(), pt.param(), pt.value(), pt.x(), new SyntheticParams(q.workload(), n,
            q.threadsPerNode(), q.initialKeyCount(), q.initialValueLength(), q.mapoutKeyCount(),
            q.mapoutValueLength(), q.mapoutUniqueKeyCount(), q.reduceoutValueLength(), q.partitionMethod(),
            q.combinerEnabled(), q.combiningFactor())));
      }
      return new Workload(name, source, param, totalBytes, adjusted, repeats, warmups, engines, hadoopConf, replication);
    }
  }

  /** Reads one parameter file. */
  public static List<Workload> load(Path file) throws IOException {
    Properties p = new Properties();
    try (Reader r = Files.newBufferedReader(file, StandardCharsets.UTF_8)) {
      p.load(r);
    }
    Map<String, String> all = new LinkedHashMap<>();
    for (String k : new TreeSet<>(p.stringPropertyNames())) {
      all.put(k, p.getProperty(k).trim());
    }
    String stem = file.getFileName().toString().replaceFirst("\\.properties$", "");
    try {
      return parse(all, stem, file.toAbsolutePath().getParent());
    } catch (IllegalArgumentException e) {
      throw new IllegalArgumentException(file + ": " + e.getMessage(), e);
    }
  }

  /** Parses the keys of one file; {@code dir} resolves relative paths. */
  public static List<Workload> parse(Map<String, String> all, String defaultName, Path dir) {
    List<Workload> out = new ArrayList<>();
    if (!all.containsKey("workloads")) {
      out.add(parseWorkload(all.getOrDefault("workload", defaultName), all, dir));
      return out;
    }
    Set<String> names = new LinkedHashSet<>(list(all.get("workloads")));
    if (names.isEmpty()) {
      throw new IllegalArgumentException("workloads is empty");
    }
    Map<String, String> shared = new LinkedHashMap<>();
    Set<String> unknown = new TreeSet<>();
    for (Map.Entry<String, String> e : all.entrySet()) {
      String k = e.getKey();
      if (k.equals("workloads")) {
        continue;
      }
      if (names.stream().noneMatch(n -> k.startsWith(n + "."))) {
        if (k.equals("workload")) {
          throw new IllegalArgumentException("workload cannot be set in a file with workloads=");
        }
        shared.put(k, e.getValue());
      }
    }
    for (String name : names) {
      if (name.equals("sweep") || name.equals("hadoop")) {
        throw new IllegalArgumentException("'" + name + "' cannot name a workload");
      }
      Map<String, String> kv = new LinkedHashMap<>(shared);
      for (Map.Entry<String, String> e : all.entrySet()) {
        if (e.getKey().startsWith(name + ".")) {
          String k = e.getKey().substring(name.length() + 1);
          if (k.startsWith("sweep.")) {
            kv.keySet().removeIf(x -> x.startsWith("sweep."));
          }
          kv.put(k, e.getValue());
          if (k.equals("workload")) {
            unknown.add(e.getKey());
          }
        }
      }
      if (!unknown.isEmpty()) {
        throw new IllegalArgumentException("unknown parameters " + unknown);
      }
      out.add(parseWorkload(name, kv, dir));
    }
    return out;
  }

  private static Workload parseWorkload(String name, Map<String, String> kv, Path dir) {
    Set<String> unknown = new TreeSet<>();
    String sweepKey = null;
    for (String k : kv.keySet()) {
      if (k.startsWith("sweep.")) {
        String swept = k.substring("sweep.".length());
        if (!NUMERIC.contains(swept)) {
          unknown.add(k);
        } else if (sweepKey != null) {
          throw new IllegalArgumentException("workload " + name + ": only one sweep.* key is allowed, got " + sweepKey
              + " and " + k);
        } else {
          sweepKey = k;
        }
      } else if (!KNOWN.contains(k)) {
        unknown.add(k);
      }
    }
    if (!unknown.isEmpty()) {
      throw new IllegalArgumentException("workload " + name + ": unknown parameters " + unknown
          + " (known: " + KNOWN + " and sweep.<one of " + NUMERIC + ">)");
    }
    String where = "workload " + name + ": ";
    try {
      int nodes = intValue(kv, "nodes", DEFAULT_NODES);
      int threads = intValue(kv, "threadsPerNode", DEFAULT_THREADS_PER_NODE);
      int repeats = intValue(kv, "repeats", DEFAULT_REPEATS);
      if (repeats < 1) {
        throw new IllegalArgumentException("repeats must be at least 1, got " + repeats);
      }
      int warmups = intValue(kv, "warmups", DEFAULT_WARMUPS);
      if (warmups < 0) {
        throw new IllegalArgumentException("warmups must be at least 0, got " + warmups);
      }
      int factor = intValue(kv, "combiningFactor", DEFAULT_COMBINING_FACTOR);
      int replication = intValue(kv, "replication", DEFAULT_REPLICATION);
      if (replication < 1 || replication > nodes) {
        throw new IllegalArgumentException("replication must be between 1 and nodes (" + nodes + "): each copy of a "
            + "partition sits on a node of its own; got " + replication);
      }
      PartitionMethod method = PartitionMethod.parse(kv.getOrDefault("partitionMethod", "average"));
      List<Boolean> combiner = new ArrayList<>();
      for (String c : list(kv.getOrDefault("combinerEnabled", "false"))) {
        if (!c.equals("true") && !c.equals("false")) {
          throw new IllegalArgumentException("combinerEnabled must be true, false or false,true; got '" + c + "'");
        }
        combiner.add(Boolean.parseBoolean(c));
      }
      List<String> engines = engines(kv.getOrDefault("engines", "sss,hadoop"));
      Path hadoopConf = kv.containsKey("hadoop.conf") ? dir.resolve(kv.get("hadoop.conf")) : null;

      String swept = sweepKey == null ? null : sweepKey.substring("sweep.".length());
      long totalBytes = 0;
      List<String> values = new ArrayList<>();
      if (swept != null) {
        String partner = PARTNER.get(swept);
        for (String fixed : List.of(swept, partner)) {
          if (kv.containsKey(fixed)) {
            throw new IllegalArgumentException(fixed + " is set, but " + sweepKey + " sweeps " + swept + " and derives "
                + partner + " from totalBytes: remove " + fixed);
          }
        }
        if (!kv.containsKey("totalBytes")) {
          throw new IllegalArgumentException(sweepKey + " needs totalBytes (the product of " + swept + " and " + partner
              + " kept fixed)");
        }
        totalBytes = Sizes.parse("totalBytes", kv.get("totalBytes"));
        values = list(kv.get(sweepKey));
        if (values.isEmpty()) {
          throw new IllegalArgumentException(sweepKey + " is empty");
        }
      } else if (kv.containsKey("totalBytes")) {
        throw new IllegalArgumentException("totalBytes applies only with a sweep.* key");
      } else {
        values.add("");
      }
      List<Point> points = new ArrayList<>();
      for (String v : values) {
        Map<String, Long> n = new LinkedHashMap<>();
        for (String k : NUMERIC) {
          if (kv.containsKey(k)) {
            n.put(k, Sizes.parse(k, kv.get(k)));
          }
        }
        double x = 0;
        if (swept != null) {
          long sv = Sizes.parse(sweepKey, v);
          if (sv < 1 || totalBytes % sv != 0) {
            throw new IllegalArgumentException(sweepKey + " value " + v + " does not divide totalBytes ("
                + totalBytes + "), so " + PARTNER.get(swept) + " cannot be derived");
          }
          n.put(swept, sv);
          n.put(PARTNER.get(swept), totalBytes / sv);
          x = sv;
        }
        for (String k : NUMERIC) {
          if (!n.containsKey(k)) {
            throw new IllegalArgumentException("missing " + k);
          }
          if (k.endsWith("Length") && n.get(k) > Integer.MAX_VALUE) {
            throw new IllegalArgumentException(k + " (" + n.get(k) + ") is too large");
          }
        }
        for (boolean c : combiner) {
          SyntheticParams sp = new SyntheticParams(name, nodes, threads, n.get("initialKeyCount"),
              (int) (long) n.get("initialValueLength"), n.get("mapoutKeyCount"), (int) (long) n.get("mapoutValueLength"),
              n.get("mapoutUniqueKeyCount"), (int) (long) n.get("reduceoutValueLength"), method, c, factor);
          try {
            sp.validate();
          } catch (IllegalArgumentException e) {
            throw new IllegalArgumentException((swept == null ? "" : "at " + swept + "=" + v + ": ") + e.getMessage(), e);
          }
          points.add(new Point(name, swept == null ? "" : swept, swept == null ? "" : Sizes.formatCount(Sizes.parse(sweepKey, v)),
              x, sp));
        }
      }
      return new Workload(name, dir, swept == null ? "" : swept, totalBytes, points, repeats, warmups, engines,
          hadoopConf, replication);
    } catch (IllegalArgumentException e) {
      throw new IllegalArgumentException(where + e.getMessage(), e);
    }
  }

  /** Checks an engine list. */
  public static List<String> engines(String text) {
    List<String> out = list(text);
    for (String e : out) {
      if (e.equals("spark")) {
        throw new IllegalArgumentException("engine spark is not implemented by the synthetic benchmark (use sss,hadoop)");
      }
      if (!ENGINES.contains(e)) {
        throw new IllegalArgumentException("unknown engine '" + e + "' (known: sss, hadoop)");
      }
    }
    if (out.isEmpty()) {
      throw new IllegalArgumentException("engines is empty");
    }
    return out;
  }

  private static int intValue(Map<String, String> kv, String key, int dflt) {
    if (!kv.containsKey(key)) {
      return dflt;
    }
    return Math.toIntExact(Sizes.parse(key, kv.get(key)));
  }

  static List<String> list(String s) {
    List<String> out = new ArrayList<>();
    if (s == null) {
      return out;
    }
    for (String part : s.split(",")) {
      if (!part.isBlank()) {
        out.add(part.trim());
      }
    }
    return out;
  }
}
