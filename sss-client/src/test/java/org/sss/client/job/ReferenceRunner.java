package org.sss.client.job;

import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.Map;
import java.util.TreeMap;
import org.sss.core.api.Emitter;
import org.sss.core.api.Mapper;
import org.sss.core.api.Pair;
import org.sss.core.api.Reducer;
import org.sss.core.api.TaskContext;

/**
 * MapReduce semantics in memory, as plainly as possible: one task per stage, every emitted
 * pair kept, a reduce groups all pairs of a stage's input by the encoded key (unsigned byte
 * order) and calls the reducer once per key with all of its values. No combiner runs: a
 * correct combiner does not change the result. Runs the very classes a job ships to the nodes.
 */
final class ReferenceRunner {
  /**
   * What a job should produce.
   *
   * @param stageOutputs every pair each stage emitted (encoded), in stage order
   * @param counters     the user counters the functions incremented
   */
  record Result(List<List<Pair>> stageOutputs, Map<String, Long> counters) {
    List<Pair> output() {
      return stageOutputs.get(stageOutputs.size() - 1);
    }

    /** The pairs stage {@code i} reads: the input for stage 0, else the previous stage's output. */
    List<Pair> stageInput(int i, List<Pair> input) {
      return i == 0 ? input : stageOutputs.get(i - 1);
    }
  }

  private ReferenceRunner() {}

  static Result run(JobShape shape, List<Pair> input) throws Exception {
    Map<String, Long> counters = new TreeMap<>();
    TaskContext context = new Context(shape.config(), counters);
    List<List<Pair>> outputs = new ArrayList<>();
    List<Pair> current = input;
    for (JobShape.Stage stage : shape.stages()) {
      List<Pair> out = new ArrayList<>();
      Emitter<Object, Object> emitter = (k, v) -> out.add(new Pair(stage.outKey().serde.encodeKey(k),
          stage.outValue().serde.encodeValue(v)));
      if (stage.map()) {
        map(stage, context, current, emitter);
      } else {
        reduce(stage, context, current, emitter);
      }
      outputs.add(out);
      current = out;
    }
    return new Result(outputs, counters);
  }

  @SuppressWarnings("unchecked")
  private static void map(JobShape.Stage stage, TaskContext context, List<Pair> input, Emitter<Object, Object> out)
      throws Exception {
    Mapper<Object, Object, Object, Object> mapper = DifferentialFunctions.mapper(stage.index())
        .getDeclaredConstructor().newInstance();
    mapper.setup(context);
    for (Pair p : input) {
      mapper.map(stage.inKey().serde.decodeKey(p.key()), stage.inValue().serde.decodeValue(p.value()), out);
    }
    mapper.cleanup(out);
  }

  @SuppressWarnings("unchecked")
  private static void reduce(JobShape.Stage stage, TaskContext context, List<Pair> input, Emitter<Object, Object> out)
      throws Exception {
    Reducer<Object, Object, Object, Object> reducer = DifferentialFunctions.reducer(stage.index())
        .getDeclaredConstructor().newInstance();
    TreeMap<byte[], List<byte[]>> groups = new TreeMap<>(Arrays::compareUnsigned);
    for (Pair p : input) {
      groups.computeIfAbsent(p.key(), k -> new ArrayList<>()).add(p.value());
    }
    reducer.setup(context);
    for (Map.Entry<byte[], List<byte[]>> g : groups.entrySet()) {
      List<Object> values = new ArrayList<>();
      for (byte[] v : g.getValue()) {
        values.add(stage.inValue().serde.decodeValue(v));
      }
      reducer.reduce(stage.inKey().serde.decodeKey(g.getKey()), values, out);
    }
    reducer.cleanup(out);
  }

  /** One task's context: the job's configuration and counters summed into a map. */
  private record Context(Map<String, String> config, Map<String, Long> counters) implements TaskContext {
    @Override
    public Counter counter(String name) {
      return delta -> counters.merge(name, delta, Long::sum);
    }

    @Override
    public int nodeId() {
      return 0;
    }

    @Override
    public int partition() {
      return 0;
    }
  }
}
