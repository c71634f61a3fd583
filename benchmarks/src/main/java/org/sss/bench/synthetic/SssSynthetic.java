package org.sss.bench.synthetic;

import java.util.Arrays;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import org.sss.core.api.Emitter;
import org.sss.core.api.Mapper;
import org.sss.core.api.Partitioner;
import org.sss.core.api.Reducer;
import org.sss.core.api.TaskContext;
import org.sss.core.cluster.PartitionMap;
import org.sss.core.keys.KeyCodec;

/**
 * The synthetic workload as SSS user code. Servers load these classes by name, so this file must
 * not touch Hadoop classes (they are not on the servers' class path).
 */
public final class SssSynthetic {
  static final String PREFIX = "synthetic.";

  private SssSynthetic() {}

  /** The job configuration that carries the parameters to the tasks. */
  static Map<String, String> config(SyntheticParams p) {
    Map<String, String> c = new HashMap<>();
    c.put(PREFIX + "initialKeyCount", Long.toString(p.initialKeyCount()));
    c.put(PREFIX + "mapoutKeyCount", Long.toString(p.mapoutKeyCount()));
    c.put(PREFIX + "mapoutUniqueKeyCount", Long.toString(p.mapoutUniqueKeyCount()));
    c.put(PREFIX + "initialValueLength", Integer.toString(p.initialValueLength()));
    c.put(PREFIX + "mapoutValueLength", Integer.toString(p.mapoutValueLength()));
    c.put(PREFIX + "reduceoutValueLength", Integer.toString(p.reduceoutValueLength()));
    c.put(PREFIX + "combiningFactor", Integer.toString(p.combiningFactor()));
    return c;
  }

  static long longOf(TaskContext c, String name) {
    return Long.parseLong(c.get(PREFIX + name, "0"));
  }

  static Fault faultOf(TaskContext c) {
    return Fault.parse(c.get(Fault.CONFIG, ""));
  }

  /** Emits mapoutKeyCount/initialKeyCount pairs per input pair. */
  public static final class SynthMapper implements Mapper<Long, byte[], Long, byte[]> {
    private SyntheticData.MapLogic logic;
    private TaskContext.Counter records;
    private TaskContext.Counter crc;
    private long crcSum;
    private long count;

    @Override
    public void setup(TaskContext context) {
      logic = new SyntheticData.MapLogic(longOf(context, "initialKeyCount"), longOf(context, "mapoutKeyCount"), longOf(context, "mapoutUniqueKeyCount"),
          (int) longOf(context, "initialValueLength"), (int) longOf(context, "mapoutValueLength"),
          faultOf(context));
      records = context.counter(SyntheticData.INPUT_RECORDS);
      crc = context.counter(SyntheticData.INPUT_CRC);
    }

    @Override
    public void map(Long key, byte[] value, Emitter<Long, byte[]> out) throws Exception {
      crcSum += logic.map(key, value, 0, value.length, (k, v) -> out.emit(k, v));
      count++;
    }

    @Override
    public void cleanup(Emitter<Long, byte[]> out) {
      records.increment(count);
      crc.increment(crcSum);
    }
  }

  /** Merges a key's values in runs of combiningFactor (see {@link SyntheticData.CombineLogic}). */
  public static final class SynthCombiner implements Reducer<Long, byte[], Long, byte[]> {
    private SyntheticData.CombineLogic logic;

    @Override
    public void setup(TaskContext context) {
      logic = new SyntheticData.CombineLogic((int) longOf(context, "combiningFactor"),
          (int) longOf(context, "mapoutValueLength"));
    }

    @Override
    public void reduce(Long key, Iterable<byte[]> values, Emitter<Long, byte[]> out) throws Exception {
      if (logic == null) {
        throw new IllegalStateException("combiner used without setup (no TaskContext)");
      }
      int inRun = 0;
      for (byte[] v : values) {
        logic.add(key, v, 0, v.length, inRun, (k, x) -> out.emit(k, x));
        inRun = (inRun + 1) % logic.factor();
      }
      logic.flush(key, (k, x) -> out.emit(k, x));
    }
  }

  /** One output value per group, carrying what the group received (see {@link SyntheticData.ReduceLogic}). */
  public static final class SynthReducer implements Reducer<Long, byte[], Long, byte[]> {
    private SyntheticData.ReduceLogic logic;
    private TaskContext.Counter values;
    private TaskContext.Counter crc;
    private TaskContext.Counter keys;
    private TaskContext.Counter digest;

    @Override
    public void setup(TaskContext context) {
      logic = new SyntheticData.ReduceLogic((int) longOf(context, "reduceoutValueLength"), faultOf(context));
      values = context.counter(SyntheticData.REDUCE_VALUES);
      crc = context.counter(SyntheticData.REDUCE_CRC);
      keys = context.counter(SyntheticData.REDUCE_KEYS);
      digest = context.counter(SyntheticData.REDUCE_DIGEST);
    }

    @Override
    public void reduce(Long key, Iterable<byte[]> in, Emitter<Long, byte[]> out) throws Exception {
      SyntheticData.PairSink sink = (k, v) -> out.emit(k, v);
      logic.start(key);
      for (byte[] v : in) {
        logic.add(v, 0, v.length, sink);
      }
      logic.finish(sink);
    }

    @Override
    public void cleanup(Emitter<Long, byte[]> out) {
      values.increment(logic.values);
      crc.increment(logic.crcSum);
      keys.increment(logic.groups);
      digest.increment(logic.digest);
    }
  }

  /**
   * For {@link Fault#WRONG_PARTITION}, as the reduce stage's partitioner: key 0's output goes to
   * a partition its hash does not name, on another node when there is one; every other key to
   * its hash partition.
   */
  public static final class MisplacingPartitioner implements Partitioner {
    private static final byte[] KEY = KeyCodec.encodeLong(Fault.KEY);

    @Override
    public int partition(byte[] encodedKey, PartitionMap map, int sourceNode) {
      int hashed = map.partitionOf(encodedKey);
      if (!Arrays.equals(encodedKey, KEY)) {
        return hashed;
      }
      int node = (map.ownerOf(hashed) + 1) % map.nodes();
      for (int p : map.partitionsOf(node)) {
        if (p != hashed) {
          return p;
        }
      }
      throw new IllegalStateException("a cluster of one partition cannot misplace a key");
    }
  }

  /** {@code local}: every key to a partition of the node that emitted it. */
  public static final class LocalPartitioner implements Partitioner {
    private volatile Cached cached;

    @Override
    public int partition(byte[] encodedKey, PartitionMap map, int sourceNode) {
      return pick(encodedKey, map, sourceNode, false);
    }

    int pick(byte[] key, PartitionMap map, int sourceNode, boolean shifted) {
      Cached c = cached;
      if (c == null || c.map != map) {
        c = new Cached(map);
        cached = c;
      }
      int node = shifted ? (sourceNode + 1) % map.nodes() : sourceNode;
      int[] owned = c.owned[node];
      return owned[map.partitionOf(key) % owned.length];
    }
  }

  /** {@code shifted}: every key to a partition of the next node, (sourceNode + 1) mod nodes. */
  public static final class ShiftedPartitioner implements Partitioner {
    private final LocalPartitioner local = new LocalPartitioner();

    @Override
    public int partition(byte[] encodedKey, PartitionMap map, int sourceNode) {
      return local.pick(encodedKey, map, sourceNode, true);
    }
  }

  private static final class Cached {
    final PartitionMap map;
    final int[][] owned;

    Cached(PartitionMap map) {
      this.map = map;
      this.owned = new int[map.nodes()][];
      for (int n = 0; n < map.nodes(); n++) {
        List<Integer> ps = map.partitionsOf(n);
        owned[n] = ps.stream().mapToInt(Integer::intValue).toArray();
      }
    }
  }
}
