package org.sss.client.job;

import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import org.sss.core.api.Pair;

/**
 * One or two random jobs over a random input. The second job reads the first's output, which
 * is then multi-valued so that the second may start with a reduce: a client cannot write a
 * multi-valued table itself (see {@link JobDifferentialTest}).
 */
final class RandomJobsCase extends DiffCase {
  private final Duration timeout;

  RandomJobsCase(long seed, DiffTables tables, Duration timeout) {
    super(seed, tables);
    this.timeout = timeout;
  }

  @Override
  String rerunProperties() {
    return "-Dsss.diff.seed=" + seed + " -Dsss.diff.cases=1 -Dsss.diff.faultCases=0";
  }

  @Override
  void execute() throws Exception {
    DiffInput input = DiffInput.random(rng);
    tell("input: " + input);
    String source = table("in");
    List<Pair> pairs = load(source, input);
    DiffType keyType = input.keyType();
    DiffType valueType = input.valueType();
    boolean multiValued = false;
    int jobs = rng.nextInt(5) == 0 ? 2 : 1;
    for (int j = 1; j <= jobs; j++) {
      JobShape shape = JobShape.random(rng, keyType, valueType, new JobShape.Constraints(
          DifferentialFunctions.MAX_STAGES, multiValued, j < jobs, j == 1 && input.bigValues() > 0));
      String output = table("out" + j);
      int roll = rng.nextInt(10);
      if (roll == 0) {
        tables.load(output, shape.last().outKey(), shape.last().outValue(), strays(shape.last()));
      }
      if (roll <= 1) {
        shape = shape.withOverwrite();
      }
      String label = "job " + j;
      tell(label + ": " + shape + (roll == 0 ? ", replacing an existing output" : ""));
      List<String> temporary = tables.temporaryTables();
      JobResult result;
      try {
        result = tables.run(shape.build("diff-" + j, source, output), timeout);
      } catch (JobFailedException e) {
        problem(label + " failed: " + e.code() + ": " + firstLine(e.getMessage()));
        checkTemporaryTables(label, temporary, List.of());
        return;
      }
      pairs = verify(label, shape, pairs, result, output, temporary);
      if (pairs == null) {
        return;
      }
      source = output;
      keyType = shape.last().outKey();
      valueType = shape.last().outValue();
      multiValued = shape.multiValuedOutput();
    }
  }

  /** A few pairs of the output's types, for an existing table the job must replace. */
  private List<Pair> strays(JobShape.Stage last) {
    List<Pair> out = new ArrayList<>();
    for (int i = 1 + rng.nextInt(20); i > 0; i--) {
      out.add(new Pair(last.outKey().serde.encodeKey(last.outKey().make(rng.nextLong())),
          last.outValue().serde.encodeValue(last.outValue().make(rng.nextLong()))));
    }
    return out;
  }
}
