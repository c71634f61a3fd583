package org.sss.cli;

import static org.junit.jupiter.api.Assertions.assertTrue;

import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.Test;
import org.sss.client.cli.SssCommand;
import picocli.CommandLine;

/**
 * {@code bin/sss --help} lists each command with the first line of its description: that line
 * must be a whole sentence, or the list shows a description cut off mid-sentence.
 */
class HelpTextTest {
  @Test
  void everyCommandsListedLine_isAWholeSentence() {
    List<String> cut = new ArrayList<>();
    collect(SssCommand.commandLine(), "sss", cut);
    assertTrue(cut.isEmpty(), "descriptions cut off in the command list: " + cut);
  }

  private static void collect(CommandLine cl, String path, List<String> cut) {
    for (Map.Entry<String, CommandLine> e : cl.getSubcommands().entrySet()) {
      String[] d = e.getValue().getCommandSpec().usageMessage().description();
      String first = d.length == 0 ? "" : d[0].strip();
      if (!e.getKey().equals("help") && !(first.endsWith(".") || first.endsWith(")"))) {
        cut.add(path + " " + e.getKey() + ": \"" + first + "\"");
      }
      collect(e.getValue(), path + " " + e.getKey(), cut);
    }
  }
}
