package org.sss.client.cli;

import java.lang.reflect.InvocationTargetException;
import java.nio.file.Path;
import java.util.concurrent.Callable;
import picocli.CommandLine;
import picocli.CommandLine.Command;
import picocli.CommandLine.Option;

/** Runs one node in the foreground (what a container runs). */
@Command(name = "server", mixinStandardHelpOptions = true,
    description = "Run one node in the foreground with the given node file.")
final class ServerCommand implements Callable<Integer> {
  @Option(names = "--config", paramLabel = "FILE", required = true,
      description = "node file: cluster=, node.id=, data.dir=, ...")
  Path config;

  @picocli.CommandLine.Spec
  CommandLine.Model.CommandSpec spec;

  @Override
  public Integer call() throws Exception {
    SssCommand.refuseClusterFile(spec, "the node file (--config) names its cluster file");
    // The server module is found at run time: the client does not link it.
    Class<?> main;
    try {
      main = Class.forName("org.sss.server.ServerMain");
    } catch (ClassNotFoundException e) {
      throw new IllegalStateException("the server module is not on the class path");
    }
    try {
      main.getMethod("main", String[].class).invoke(null, (Object) new String[] {"--config", config.toString()});
    } catch (InvocationTargetException e) {
      throw e.getCause() instanceof Exception ex ? ex : e;
    }
    return 0;
  }
}
