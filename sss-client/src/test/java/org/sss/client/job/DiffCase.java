package org.sss.client.job;

import static org.sss.client.job.DifferentialFunctions.keysCounter;
import static org.sss.client.job.DifferentialFunctions.mappedCounter;
import static org.sss.client.job.DifferentialFunctions.valuesCounter;

import java.io.IOException;
import java.util.ArrayList;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Random;
import java.util.Set;
import org.sss.core.api.Pair;

/**
 * One seeded case of the differential test: it runs jobs on the cluster, checks each against
 * {@link ReferenceRunner}, and collects every difference instead of stopping at the first, so
 * that one failure report tells the whole story of the case (its seed, input, job shapes and
 * what differed). Tables it creates are dropped when it ends.
 */
abstract class DiffCase {
  final long seed;
  final Random rng;
  final DiffTables tables;
  private final List<String> story = new ArrayList<>();
  private final List<String> problems = new ArrayList<>();
  private final Set<String> created = new LinkedHashSet<>();

  DiffCase(long seed, DiffTables tables) {
    this.seed = seed;
    this.rng = new Random(DiffType.mix(seed));
    this.tables = tables;
  }

  /** Runs the case's jobs and checks, recording problems. */
  abstract void execute() throws Exception;

  /** The system properties that run this case alone. */
  abstract String rerunProperties();

  /** Runs the case, drops its tables, and fails with every problem found. */
  final void run() throws Exception {
    try {
      execute();
    } catch (Exception | AssertionError e) {
      problem("the case stopped on " + e + at(e));
    } finally {
      for (String t : created) {
        try {
          tables.drop(t);
        } catch (RuntimeException ignored) {
          // a later case uses other names
        }
      }
    }
    if (!problems.isEmpty()) {
      throw new AssertionError(report());
    }
  }

  private static String at(Throwable e) {
    StackTraceElement[] s = e.getStackTrace();
    return s.length == 0 ? "" : " at " + s[0];
  }

  String report() {
    StringBuilder s = new StringBuilder("seed " + seed + " (rerun alone with " + rerunProperties() + ")\n");
    story.forEach(line -> s.append("  ").append(line).append('\n'));
    s.append("  ").append(problems.size()).append(problems.size() == 1 ? " problem:\n" : " problems:\n");
    problems.forEach(p -> s.append("  - ").append(p).append('\n'));
    return s.toString();
  }

  void tell(String line) {
    story.add(line);
  }

  void problem(String what) {
    problems.add(what);
  }

  /** A table name of this case, dropped when it ends. */
  String table(String suffix) {
    String name = "diff-" + Long.toUnsignedString(seed, 36) + "-" + suffix;
    created.add(name);
    return name;
  }

  /** Writes the input and returns what the table holds, checked against what was written. */
  List<Pair> load(String table, DiffInput input) {
    tables.load(table, input.keyType(), input.valueType(), input.pairs());
    List<Pair> stored = tables.scan(table);
    String diff = new PairDiff(input.keyType(), input.valueType()).singleValued(input.pairs(), stored);
    if (diff != null) {
      problem("the input table does not hold what was written to it: " + diff);
    }
    return stored;
  }

  /**
   * Checks a finished job against the reference run over {@code input}: output, user
   * counters, kept intermediate tables, and that no other intermediate table is left.
   *
   * @return what the output table holds, or null when it cannot be read
   */
  List<Pair> verify(String label, JobShape shape, List<Pair> input, JobResult result, String output,
                    List<String> temporaryBefore) throws Exception {
    ReferenceRunner.Result expected = ReferenceRunner.run(shape, input);
    checkCounters(label, shape, expected, result);
    checkIntermediates(label, shape, expected, result);
    checkTemporaryTables(label, temporaryBefore, result.intermediateTables());
    for (String t : result.intermediateTables()) {
      tables.drop(t);
    }
    return checkOutput(label, shape, expected, output);
  }

  /** Checks the output table; returns what it holds, or null when it cannot be read. */
  List<Pair> checkOutput(String label, JobShape shape, ReferenceRunner.Result expected, String output) {
    if (!tables.exists(output)) {
      problem(label + ": the output table '" + output + "' does not exist");
      return null;
    }
    boolean multiValued = tables.options(output).multiValued();
    if (multiValued != shape.multiValuedOutput()) {
      problem(label + ": the output table is " + (multiValued ? "" : "not ") + "multi-valued");
    }
    List<Pair> actual;
    try {
      actual = tables.scan(output);
    } catch (RuntimeException e) {
      problem(label + ": scanning the output table failed: " + e);
      return null;
    }
    try {
      tables.dump(output);
    } catch (IOException | RuntimeException e) {
      problem(label + ": dumping the output table as `sss dump` does failed (table declares keys "
          + tables.options(output).types().key() + ", values " + tables.options(output).types().value() + "): " + e);
    }
    JobShape.Stage last = shape.last();
    PairDiff diff = new PairDiff(last.outKey(), last.outValue());
    String d = shape.multiValuedOutput() ? diff.multiset(expected.output(), actual)
        : diff.singleValued(expected.output(), actual);
    if (d != null) {
      problem(label + ": the " + (shape.multiValuedOutput() ? "multi" : "single") + "-valued output differs from the reference: " + d);
    }
    return actual;
  }

  private void checkCounters(String label, JobShape shape, ReferenceRunner.Result expected, JobResult result) {
    for (JobShape.Stage s : shape.stages()) {
      int i = s.index();
      if (s.map()) {
        checkCounter(label, expected, result, mappedCounter(i), "pairs map stage " + i + " read");
      } else {
        checkCounter(label, expected, result, keysCounter(i), "keys reduce stage " + i + " reduced");
        if (shape.seesEveryValue(i)) {
          checkCounter(label, expected, result, valuesCounter(i), "values reduce stage " + i + " reduced");
        }
      }
    }
  }

  private void checkCounter(String label, ReferenceRunner.Result expected, JobResult result, String counter,
                            String what) {
    long want = expected.counters().getOrDefault(counter, 0L);
    long got = result.counter(counter);
    if (want != got) {
      problem(label + ": " + got + " " + what + ", the reference " + want + " (counter " + counter + ")");
    }
  }

  /** Every table between two stages must hold every pair the stage before it emitted. */
  private void checkIntermediates(String label, JobShape shape, ReferenceRunner.Result expected, JobResult result) {
    List<String> kept = result.intermediateTables();
    int between = shape.stages().size() - 1;
    if (!shape.keepIntermediate()) {
      if (!kept.isEmpty()) {
        problem(label + ": intermediate tables " + kept + " reported without keepIntermediate()");
      }
      return;
    }
    if (kept.size() != between) {
      problem(label + ": " + kept.size() + " intermediate tables reported, " + between + " expected: " + kept);
    }
    for (int i = 0; i < Math.min(kept.size(), between); i++) {
      String where = label + ": the kept intermediate table after stage " + i + " ('" + kept.get(i) + "')";
      if (!tables.exists(kept.get(i))) {
        problem(where + " does not exist");
        continue;
      }
      List<Pair> actual;
      try {
        actual = tables.scan(kept.get(i));
      } catch (RuntimeException e) {
        problem(where + " cannot be scanned: " + e);
        continue;
      }
      JobShape.Stage s = shape.stages().get(i);
      PairDiff diff = new PairDiff(s.outKey(), s.outValue());
      List<Pair> emitted = expected.stageOutputs().get(i);
      String d = shape.emitsTokens(i) ? diff.merged(emitted, actual) : diff.multiset(emitted, actual);
      if (d != null) {
        problem(where + " does not hold what stage " + i + " emitted: " + d);
      }
    }
  }

  /** Intermediate tables that appeared since {@code before} must be gone, but for those kept. */
  void checkTemporaryTables(String label, List<String> before, List<String> kept) {
    List<String> left = tables.temporaryTables();
    left.removeAll(before);
    left.removeAll(kept);
    if (!left.isEmpty()) {
      problem(label + ": intermediate tables left behind: " + left);
      left.forEach(tables::drop);
    }
  }

  static String firstLine(String message) {
    return message == null ? "null" : message.lines().findFirst().orElse("");
  }
}
