package org.sss.bench.engine;

import org.sss.client.cli.CommandExtension;

/** Registers {@code sss bench-engine}. */
public final class EngineBenchExtension implements CommandExtension {
  @Override
  public String name() {
    return "bench-engine";
  }

  @Override
  public Object command() {
    return new ShuffleBenchmark();
  }
}
