package org.sss.server.execution;

import java.nio.ByteBuffer;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.HashMap;
import java.util.Iterator;
import java.util.List;
import java.util.Map;
import org.sss.core.api.Reducer;
import org.sss.core.api.Serde;

/**
 * Runs the combiner on a task's emitted pairs before they are shuffled.
 *
 * <h2>Memory</h2>
 * Pairs are grouped by encoded key in a hash map. When one key has gathered
 * {@link #EAGER_VALUES} values they are combined at once into (usually) one, so a hot key never
 * holds more than a few values; when the map holds more than its byte budget, or the task
 * ends, every group is combined and written out, and the map starts empty. Memory is thus
 * bounded by the budget, and heavy combining (WordCount's few distinct words) touches the
 * shuffle only once per key per flush.
 *
 * <h2>Contract checks</h2>
 * A combiner must keep its key: output under any other key fails the task with a message
 * naming the combiner, rather than silently mis-grouping data.
 */
final class CombiningBuffer<K, V> {
  static final int EAGER_VALUES = 64;

  private final Reducer<K, V, K, V> combiner;
  private final Serde<K> keySerde;
  private final Serde<V> valueSerde;
  private final ShuffleWriter out;
  private final long budgetBytes;
  private final Map<ByteBuffer, List<byte[]>> groups = new HashMap<>();
  private long heldBytes;

  CombiningBuffer(Reducer<K, V, K, V> combiner, Serde<K> keySerde, Serde<V> valueSerde,
                  ShuffleWriter out, long budgetBytes) {
    this.combiner = combiner;
    this.keySerde = keySerde;
    this.valueSerde = valueSerde;
    this.out = out;
    this.budgetBytes = budgetBytes;
  }

  void add(byte[] key, byte[] value) throws Exception {
    ByteBuffer k = ByteBuffer.wrap(key);
    List<byte[]> values = groups.get(k);
    if (values == null) {
      values = new ArrayList<>(4);
      groups.put(k, values);
      heldBytes += key.length + 64;
    }
    values.add(value);
    heldBytes += value.length + 16;
    if (values.size() >= EAGER_VALUES) {
      List<byte[]> combined = combine(key, values);
      for (byte[] v : values) {
        heldBytes -= v.length + 16;
      }
      for (byte[] v : combined) {
        heldBytes += v.length + 16;
      }
      groups.put(k, combined);
    }
    if (heldBytes > budgetBytes) {
      flush();
    }
  }

  /** Combines every group and writes the results to the shuffle. */
  void flush() throws Exception {
    for (Map.Entry<ByteBuffer, List<byte[]>> e : groups.entrySet()) {
      byte[] key = e.getKey().array();
      List<byte[]> values = e.getValue().size() > 1 ? combine(key, e.getValue()) : e.getValue();
      for (byte[] v : values) {
        out.write(key, v);
      }
    }
    groups.clear();
    heldBytes = 0;
  }

  private List<byte[]> combine(byte[] key, List<byte[]> values) throws Exception {
    List<byte[]> result = new ArrayList<>(1);
    Iterable<V> decoded = () -> new Iterator<>() {
      private int i;

      @Override
      public boolean hasNext() {
        return i < values.size();
      }

      @Override
      public V next() {
        return valueSerde.decodeValue(values.get(i++));
      }
    };
    combiner.reduce(keySerde.decodeKey(key), decoded, (k, v) -> {
      byte[] ek = keySerde.encodeKey(k);
      if (!Arrays.equals(ek, key)) {
        throw new IllegalStateException("combiner " + combiner.getClass().getName()
            + " changed key " + keySerde.decodeKey(key) + " to " + k + "; a combiner must keep keys unchanged");
      }
      byte[] ev = valueSerde.encodeValue(v);
      result.add(ev == (Object) v ? ev.clone() : ev); // held after emit returns: the combiner may reuse v
    });
    return result;
  }
}
