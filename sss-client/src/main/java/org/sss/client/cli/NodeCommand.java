package org.sss.client.cli;

import java.nio.file.Path;
import java.time.Duration;
import java.util.Locale;
import java.util.concurrent.Callable;
import org.sss.client.cluster.NodeControl;
import picocli.CommandLine.Command;
import picocli.CommandLine.Option;

/** One node, known from itself (its data directory's lock and its answer): state and stop. */
@Command(name = "node", mixinStandardHelpOptions = true,
    description = "Ask whether one node runs, or stop it, by its node file (what scripts use).",
    subcommands = {NodeCommand.State.class, NodeCommand.Stop.class})
final class NodeCommand {

  @Command(name = "state", mixinStandardHelpOptions = true,
      description = "Print running, stopped or unresponsive; waits up to --wait seconds while the node's "
          + "lock is held without an answer (starting, or a process being torn down). Exit 0 running, "
          + "3 stopped, 4 unresponsive.")
  static final class State implements Callable<Integer> {
    @Option(names = "--config", paramLabel = "FILE", required = true, description = "the node's node.properties")
    Path config;

    @Option(names = "--wait", paramLabel = "SECONDS", defaultValue = "30",
        description = "how long to wait for a held, silent lock to settle (default: ${DEFAULT-VALUE})")
    int waitSeconds;

    @Option(names = "--serving", description = "say `not serving` (exit status 5) for a node that runs but neither"
        + " serves nor catches up yet: in a cluster keeping copies, one whose view the members have not confirmed,"
        + " or whose store they have not recorded")
    boolean serving;

    @Override
    public Integer call() throws Exception {
      NodeControl node = NodeControl.ofNodeFile(config);
      NodeControl.State s = node.awaitSettled(Duration.ofSeconds(waitSeconds));
      if (serving && s == NodeControl.State.RUNNING && !node.serves()) {
        System.out.println("not serving");
        return 5;
      }
      System.out.println(s.name().toLowerCase(Locale.ROOT));
      return switch (s) {
        case RUNNING -> 0;
        case STOPPED -> 3;
        case UNRESPONSIVE -> 4;
      };
    }
  }

  @Command(name = "stop", mixinStandardHelpOptions = true,
      description = "Stop the node: asked over the wire it flushes every table and exits; one that does not "
          + "answer gets SIGTERM, then SIGKILL after 15 s (said, with what may be lost).")
  static final class Stop implements Callable<Integer> {
    @Option(names = "--config", paramLabel = "FILE", required = true, description = "the node's node.properties")
    Path config;

    @Override
    public Integer call() throws Exception {
      String line = NodeControl.ofNodeFile(config).stop();
      System.out.println(line);
      return line.contains("NOT STOPPED") ? 1 : 0;
    }
  }
}
