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
 * must be a whole sentence, or the list shows a description cut off mid-sentence. And every
 * paragraph of a description ends a sentence, or its help prints a line cut short.
 */
class HelpTextTest {
  @Test
  void everyCommandsListedLine_isAWholeSentence() {
    List<String> cut = new ArrayList<>();
    collect(SssCommand.commandLine(), "sss", cut);
    assertTrue(cut.isEmpty(), "descriptions cut off in the command list: " + cut);
  }

  /**
   * Each element of a description is printed as a paragraph of its own, wrapped to the screen: a
   * sentence split over two elements prints as a line cut short, then the rest on a new line.
   */
  @Test
  void everyDescriptionParagraph_endsASentence() {
    List<String> split = new ArrayList<>();
    paragraphs(SssCommand.commandLine(), "sss", split);
    assertTrue(split.isEmpty(), "sentences split over two paragraphs of a description: " + split);
  }

  private static void paragraphs(CommandLine cl, String path, List<String> split) {
    for (Map.Entry<String, CommandLine> e : cl.getSubcommands().entrySet()) {
      if (e.getKey().equals("help")) {
        continue; // picocli's own
      }
      for (String p : e.getValue().getCommandSpec().usageMessage().description()) {
        String end = p.strip();
        if (!end.isEmpty() && !(end.endsWith(".") || end.endsWith(")") || end.endsWith(":"))) {
          split.add(path + " " + e.getKey() + ": \"..." + end.substring(Math.max(0, end.length() - 40)) + "\"");
        }
      }
      paragraphs(e.getValue(), path + " " + e.getKey(), split);
    }
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
