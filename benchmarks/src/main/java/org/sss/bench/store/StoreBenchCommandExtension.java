package org.sss.bench.store;

import org.sss.client.cli.CommandExtension;

/** Adds {@code bench-store} ({@link StoreThroughputBenchmark}) to the {@code sss} command line. */
public final class StoreBenchCommandExtension implements CommandExtension {
  @Override
  public String name() {
    return "bench-store";
  }

  @Override
  public Object command() {
    StoreThroughputBenchmark command = new StoreThroughputBenchmark();
    command.entryPoint = "bin/sss"; // the arguments start with the subcommand
    return command;
  }
}
