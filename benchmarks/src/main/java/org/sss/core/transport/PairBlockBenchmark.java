package org.sss.core.transport;

import io.netty.buffer.ByteBuf;
import io.netty.buffer.Unpooled;
import org.openjdk.jmh.annotations.Benchmark;
import org.openjdk.jmh.annotations.OperationsPerInvocation;
import org.openjdk.jmh.annotations.Setup;
import org.openjdk.jmh.annotations.TearDown;
import org.openjdk.jmh.infra.Blackhole;
import org.sss.bench.jmh.HotPathBenchmark;
import org.sss.bench.jmh.JmhData;

/**
 * Pair packing on the wire: {@link PairBlock#write} packs each pair into a direct buffer (a
 * client's put, a shuffle's send) and {@link PairBlock#forEach} parses the block back into
 * key and value arrays (a node's receiving side). One operation is one pair, packed and parsed.
 */
public class PairBlockBenchmark extends HotPathBenchmark {
  byte[][] keys;
  byte[][] values;
  ByteBuf block;

  @Setup
  public void setup() {
    JmhData.Pairs pairs = JmhData.pairs(JmhData.PAIRS, JmhData.SEED);
    keys = pairs.stored;
    values = pairs.values;
    int bytes = 0;
    for (int i = 0; i < keys.length; i++) {
      bytes += PairBlock.encodedSize(keys[i].length, values[i].length);
    }
    block = Unpooled.directBuffer(bytes, bytes); // the whole batch fits: no growth inside the timing
  }

  @TearDown
  public void tearDown() {
    block.release();
  }

  /** Every pair that crosses the network between client and node, or node and node in a shuffle, is packed and parsed once. */
  @Benchmark
  @OperationsPerInvocation(JmhData.PAIRS)
  public int writeAndForEach(Blackhole bh) {
    return writeAndForEach(block, keys, values, (k, v) -> {
      bh.consume(k);
      bh.consume(v);
    });
  }

  /** Packs the pairs into {@code block} (emptied first), then hands each one parsed to {@code visitor}. */
  static int writeAndForEach(ByteBuf block, byte[][] keys, byte[][] values, PairBlock.PairVisitor visitor) {
    block.clear();
    for (int i = 0; i < keys.length; i++) {
      PairBlock.write(block, keys[i], values[i]);
    }
    return PairBlock.forEach(block, visitor);
  }
}
