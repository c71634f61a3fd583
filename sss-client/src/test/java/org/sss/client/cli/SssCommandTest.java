package org.sss.client.cli;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.io.PrintWriter;
import java.io.StringWriter;
import java.util.Set;
import org.junit.jupiter.api.Test;
import picocli.CommandLine;

/** The command line main builds: only the command the arguments name, or all of them when they name none. */
class SssCommandTest {
  @Test
  void theCommandNamed_isTheFirstArgument_pastTheRootOptionsAndTheirValues() {
    assertEquals("load", SssCommand.commandNamed("load", "t", "f"));
    assertEquals("scan", SssCommand.commandNamed("--cluster", "c.properties", "scan", "t"));
    assertEquals("scan", SssCommand.commandNamed("--cluster=c.properties", "scan"));
    assertEquals("count", SssCommand.commandNamed("--nodes", "2", "--cluster", "load", "count"),
        "an option's value is never the command, whatever it reads like");
    assertNull(SssCommand.commandNamed("-h", "table", "create"), "the root's help lists every command");
    assertNull(SssCommand.commandNamed("--help", "get"));
    assertNull(SssCommand.commandNamed("-V", "get"));
    assertEquals("table", SssCommand.commandNamed("table", "create", "-h"), "the command's own help");
    assertNull(SssCommand.commandNamed());
    assertNull(SssCommand.commandNamed("--help"));
    assertNull(SssCommand.commandNamed("help", "load"), "help lists the commands: it needs them all");
    assertNull(SssCommand.commandNamed("--", "load"));
  }

  @Test
  void aNamedCommand_isTheOnlyOneBuilt() {
    assertEquals(Set.of("load"), SssCommand.commandLine("load", "t", "f").getSubcommands().keySet());
    CommandLine table = SssCommand.commandLine("--cluster", "x", "table", "list");
    assertEquals(Set.of("table"), table.getSubcommands().keySet());
    // the subcommands below it are whole, and --cluster reaches them
    assertTrue(table.getSubcommands().get("table").getSubcommands().containsKey("create"));
    assertTrue(table.getSubcommands().get("table").getSubcommands().get("create").getCommandSpec()
        .findOption("--cluster") != null);
  }

  @Test
  void noCommand_help_orAnUnknownOne_buildThemAll() {
    int all = SssCommand.commandLine().getSubcommands().size();
    assertTrue(all > 12, "the built-in commands and the help command at least: " + all);
    assertEquals(all, SssCommand.commandLine("--help").getSubcommands().size());
    assertEquals(all, SssCommand.commandLine("help", "load").getSubcommands().size());
    CommandLine unknown = SssCommand.commandLine("laod", "t", "f");
    assertEquals(all, unknown.getSubcommands().size());
    StringWriter err = new StringWriter();
    unknown.setErr(new PrintWriter(err, true));
    assertEquals(2, unknown.execute("laod", "t", "f"));
    assertTrue(err.toString().contains("laod"), err.toString());
  }

  @Test
  void commandsWithoutAClusterFile_stillRefuseIt_whenBuiltAlone() {
    CommandLine start = SssCommand.commandLine("cluster", "start", "--dir", "d");
    CommandLine.Model.CommandSpec spec = start.getSubcommands().get("cluster").getSubcommands().get("start")
        .getCommandSpec();
    assertNull(spec.findOption("--cluster"), "cluster start takes no cluster file");
  }
}
