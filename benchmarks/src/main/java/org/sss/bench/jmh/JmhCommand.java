package org.sss.bench.jmh;

import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.Callable;
import org.sss.client.cli.CommandExtension;
import picocli.CommandLine;
import picocli.CommandLine.Command;
import picocli.CommandLine.Option;
import picocli.CommandLine.Unmatched;

/**
 * {@code sss jmh}: the JMH micro-benchmarks of the engine's hot paths, run by JMH's own command
 * line ({@link org.openjdk.jmh.Main}) with every argument passed through. The benchmarks'
 * classes set the default settings, so that {@code bin/sss jmh} alone runs them all in about
 * 3 to 4 minutes. JMH's forks start with this JVM's class path ({@code java.class.path}: the
 * launcher's jar and {@code target/lib}), so they find the benchmarks and the engine.
 */
@Command(name = "jmh",
    description = {
        "Runs the JMH micro-benchmarks of the engine's hot paths (key encoding, pair packing and parsing, the"
            + " sorted-run sort, the WordCount tokenizer, the combining buffer).",
        "Every argument goes to JMH (bin/sss jmh -h lists JMH's options; -l lists the benchmarks). Without any,"
            + " all of them run with the settings their classes set: 1 fork, 3 warmup and 5 measured iterations"
            + " of 3 s each, about 3-4 minutes. Results are operations (pairs, lines) per second.",
        "Examples: bin/sss jmh -f 1 -wi 3 -i 5 KeyCodec; bin/sss jmh -rf json -rff results.json;"
            + " benchmarks/results/jmh/run.sh keeps the text and JSON results beside the other results."},
    usageHelpAutoWidth = true)
public final class JmhCommand implements Callable<Integer> {
  /** The arguments for JMH, in their order. */
  @Unmatched
  final List<String> jmhArgs = new ArrayList<>();

  @Option(names = "--help", usageHelp = true, description = "show this help and exit (-h: JMH's options)")
  boolean help;

  @CommandLine.Spec
  CommandLine.Model.CommandSpec spec;

  @Override
  public Integer call() throws Exception {
    if (spec.commandLine().getParseResult().hasMatchedOption("--cluster")) {
      throw new CommandLine.ParameterException(spec.commandLine(),
          "--cluster means nothing to jmh: the benchmarks run in JMH's own JVMs, without a cluster");
    }
    org.openjdk.jmh.Main.main(jmhArgs.toArray(new String[0])); // exits with 1 itself on a bad option or a failure
    return 0;
  }

  /** The arguments JMH gets (for tests). */
  List<String> jmhArgs() {
    return List.copyOf(jmhArgs);
  }

  /** Registers {@code sss jmh}. */
  public static final class Extension implements CommandExtension {
    @Override
    public String name() {
      return "jmh";
    }

    @Override
    public Object command() {
      return new JmhCommand();
    }
  }
}
