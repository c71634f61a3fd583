package org.sss.bench.jmh;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNotNull;

import java.io.InputStream;
import java.util.List;
import java.util.TreeSet;
import org.junit.jupiter.api.Test;
import org.openjdk.jmh.runner.BenchmarkList;
import org.openjdk.jmh.runner.BenchmarkListEntry;
import org.sss.client.cli.SssCommand;
import picocli.CommandLine;

/** {@code sss jmh}: registered, passes its arguments to JMH unchanged, and the build generated the benchmark list. */
class JmhCommandTest {
  @Test
  void jmh_passesEveryArgumentThroughInOrder() {
    CommandLine.ParseResult parsed = SssCommand.commandLine()
        .parseArgs("jmh", "-f", "1", "-wi", "3", "-i", "5", "-rf", "json", "-rff", "out.json", "-h", "KeyCodec");
    JmhCommand jmh = (JmhCommand) parsed.subcommand().commandSpec().userObject();
    assertEquals(List.of("-f", "1", "-wi", "3", "-i", "5", "-rf", "json", "-rff", "out.json", "-h", "KeyCodec"),
        jmh.jmhArgs());
  }

  @Test
  void benchmarkList_holdsTheHotPathBenchmarks() throws Exception {
    TreeSet<String> names = new TreeSet<>();
    try (InputStream in = JmhCommand.class.getResourceAsStream(BenchmarkList.BENCHMARK_LIST)) {
      assertNotNull(in, "no " + BenchmarkList.BENCHMARK_LIST + ": JMH's annotation processor did not run");
      for (BenchmarkListEntry e : BenchmarkList.readBenchmarkList(in)) {
        names.add(e.getUsername());
      }
    }
    assertEquals(new TreeSet<>(List.of(
        "org.sss.core.keys.KeyCodecBenchmark.decodeSortedPairs",
        "org.sss.core.keys.KeyCodecBenchmark.encodePairs",
        "org.sss.core.transport.PairBlockBenchmark.writeAndForEach",
        "org.sss.examples.WordCountTokenizeBenchmark.tokenize",
        "org.sss.kvs.SortedRunsBenchmark.packAndParse",
        "org.sss.kvs.SortedRunsBenchmark.sortRun",
        "org.sss.server.execution.CombiningBufferBenchmark.addAndFlush",
        "org.sss.server.execution.CombiningBufferBenchmark.tokenizeAndCombine")), names);
  }
}
