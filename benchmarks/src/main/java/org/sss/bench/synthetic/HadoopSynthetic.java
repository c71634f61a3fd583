package org.sss.bench.synthetic;

import java.io.IOException;
import org.apache.hadoop.conf.Configuration;
import org.apache.hadoop.io.BytesWritable;
import org.apache.hadoop.io.LongWritable;
import org.apache.hadoop.mapreduce.Mapper;
import org.apache.hadoop.mapreduce.Reducer;
import org.apache.hadoop.mapreduce.lib.partition.HashPartitioner;

/** The synthetic workload as Hadoop MapReduce code, sharing its logic with the SSS version. */
public final class HadoopSynthetic {
  static final String GROUP = "synthetic";
  static final String PREFIX = "synthetic.";

  private HadoopSynthetic() {}

  static void configure(Configuration c, SyntheticParams p) {
    SssSynthetic.config(p).forEach(c::set);
  }

  static long longOf(Configuration c, String name) {
    return c.getLong(PREFIX + name, 0);
  }

  static Fault faultOf(Configuration c) {
    return Fault.parse(c.get(Fault.CONFIG, ""));
  }

  /** Emits mapoutKeyCount/initialKeyCount pairs per input pair. */
  public static final class SynthMapper extends Mapper<LongWritable, BytesWritable, LongWritable, BytesWritable> {
    private SyntheticData.MapLogic logic;
    private final LongWritable outKey = new LongWritable();
    private final BytesWritable outValue = new BytesWritable();
    private long crcSum;
    private long count;

    @Override
    protected void setup(Context context) {
      Configuration c = context.getConfiguration();
      logic = new SyntheticData.MapLogic(longOf(c, "initialKeyCount"), longOf(c, "mapoutKeyCount"), longOf(c, "mapoutUniqueKeyCount"),
          (int) longOf(c, "initialValueLength"), (int) longOf(c, "mapoutValueLength"), faultOf(c));
    }

    @Override
    protected void map(LongWritable key, BytesWritable value, Context context) throws IOException, InterruptedException {
      try {
        crcSum += logic.map(key.get(), value.getBytes(), 0, value.getLength(), (k, v) -> {
          outKey.set(k);
          outValue.set(v, 0, v.length);
          context.write(outKey, outValue);
        });
      } catch (IOException | InterruptedException | RuntimeException e) {
        throw e;
      } catch (Exception e) {
        throw new IOException(e);
      }
      count++;
    }

    @Override
    protected void cleanup(Context context) {
      context.getCounter(GROUP, SyntheticData.INPUT_RECORDS).increment(count);
      context.getCounter(GROUP, SyntheticData.INPUT_CRC).increment(crcSum);
    }
  }

  /** Merges a key's values in runs of combiningFactor. */
  public static final class SynthCombiner extends Reducer<LongWritable, BytesWritable, LongWritable, BytesWritable> {
    private SyntheticData.CombineLogic logic;
    private final BytesWritable outValue = new BytesWritable();

    @Override
    protected void setup(Context context) {
      Configuration c = context.getConfiguration();
      logic = new SyntheticData.CombineLogic((int) longOf(c, "combiningFactor"), (int) longOf(c, "mapoutValueLength"));
    }

    @Override
    protected void reduce(LongWritable key, Iterable<BytesWritable> values, Context context)
        throws IOException, InterruptedException {
      long k = key.get();
      SyntheticData.PairSink sink = (kk, v) -> {
        outValue.set(v, 0, v.length);
        context.write(key, outValue);
      };
      int inRun = 0;
      try {
        for (BytesWritable v : values) {
          logic.add(k, v.getBytes(), 0, v.getLength(), inRun, sink);
          inRun = (inRun + 1) % logic.factor();
        }
        logic.flush(k, sink);
      } catch (IOException | InterruptedException | RuntimeException e) {
        throw e;
      } catch (Exception e) {
        throw new IOException(e);
      }
    }
  }

  /** One output value per group, carrying what the group received (see {@link SyntheticData.ReduceLogic}). */
  public static final class SynthReducer extends Reducer<LongWritable, BytesWritable, LongWritable, BytesWritable> {
    private SyntheticData.ReduceLogic logic;
    private final BytesWritable outValue = new BytesWritable();

    @Override
    protected void setup(Context context) {
      Configuration c = context.getConfiguration();
      logic = new SyntheticData.ReduceLogic((int) longOf(c, "reduceoutValueLength"), faultOf(c));
    }

    @Override
    protected void reduce(LongWritable key, Iterable<BytesWritable> values, Context context)
        throws IOException, InterruptedException {
      SyntheticData.PairSink sink = (k, v) -> {
        outValue.set(v, 0, v.length);
        context.write(key, outValue);
      };
      try {
        logic.start(key.get());
        for (BytesWritable v : values) {
          logic.add(v.getBytes(), 0, v.getLength(), sink);
        }
        logic.finish(sink);
      } catch (IOException | InterruptedException | RuntimeException e) {
        throw e;
      } catch (Exception e) {
        throw new IOException(e);
      }
    }

    @Override
    protected void cleanup(Context context) {
      context.getCounter(GROUP, SyntheticData.REDUCE_VALUES).increment(logic.values);
      context.getCounter(GROUP, SyntheticData.REDUCE_CRC).increment(logic.crcSum);
      context.getCounter(GROUP, SyntheticData.REDUCE_KEYS).increment(logic.groups);
      context.getCounter(GROUP, SyntheticData.REDUCE_DIGEST).increment(logic.digest);
    }
  }

  /**
   * For {@link Fault#WRONG_PARTITION}: key 0 goes to the reduce task after the one
   * {@link HashPartitioner} names, so its output lands in another part file; every other key
   * where HashPartitioner puts it.
   */
  public static final class MisplacingPartitioner extends HashPartitioner<LongWritable, BytesWritable> {
    @Override
    public int getPartition(LongWritable key, BytesWritable value, int reduces) {
      int hashed = super.getPartition(key, value, reduces);
      return key.get() == Fault.KEY ? (hashed + 1) % reduces : hashed;
    }
  }
}
