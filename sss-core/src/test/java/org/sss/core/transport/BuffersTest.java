package org.sss.core.transport;

import static org.junit.jupiter.api.Assertions.assertTrue;

import java.lang.management.ManagementFactory;
import java.util.List;
import org.junit.jupiter.api.Test;

/**
 * The tests' JVM is started with {@link Buffers#JVM_OPTIONS} (the build's argLine), as every SSS
 * JVM is: with them, this Netty makes its chunks unzeroed. A Netty or JDK that stops honouring
 * them fails here rather than silently making every start slower.
 */
class BuffersTest {
  @Test
  void startedWithTheOptions_chunksComeUnzeroed() {
    List<String> args = ManagementFactory.getRuntimeMXBean().getInputArguments();
    assertTrue(args.containsAll(Buffers.JVM_OPTIONS), "the build's argLine lacks " + Buffers.JVM_OPTIONS + ": " + args);
    assertTrue(Buffers.unzeroedChunks(), "Netty zeroes its chunks despite " + Buffers.JVM_OPTIONS);
  }
}
