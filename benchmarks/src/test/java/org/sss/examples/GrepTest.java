package org.sss.examples;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Random;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.ExtendWith;
import org.junit.jupiter.api.io.TempDir;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.CsvSource;
import org.sss.client.SssClient;
import org.sss.client.io.BulkIO;
import org.sss.core.api.Serdes;

@ExtendWith(SharedClusters.class)
class GrepTest {
  @TempDir
  Path dir;

  @ParameterizedTest
  @CsvSource(delimiter = ';', value = {
      "1;false;[a-c]+[0-9];0",
      "1;true;(a+)(b|c);1",
      "3;false;(a+)(b|c);2",
      "3;true;[a-c]+[0-9];0",
      "5;true;x*;0",
      "5;false;[0-9]{2,};0"})
  void grep_matchesSequentialReference(int nodes, boolean combine, String regex, int group) throws Exception {
    Random rnd = new Random(regex.hashCode() * 7L + nodes);
    List<String> lines = new ArrayList<>();
    String alphabet = "aabbcxyz0123456789 ";
    for (int i = 0; i < 1500; i++) {
      StringBuilder l = new StringBuilder();
      int len = rnd.nextInt(40);
      for (int j = 0; j < len; j++) {
        l.append(alphabet.charAt(rnd.nextInt(alphabet.length())));
      }
      lines.add(l.toString());
    }
    Path input = dir.resolve("in.txt");
    Files.write(input, lines, StandardCharsets.UTF_8);

    Map<String, Long> expected = new HashMap<>();
    Pattern p = Pattern.compile(regex);
    for (String line : lines) {
      Matcher m = p.matcher(line);
      while (m.find()) {
        if (m.group(group) != null) {
          expected.merge(m.group(group), 1L, Long::sum);
        }
      }
    }

    try (SssClient client = SharedClusters.get(nodes).client()) {
      String in = SharedClusters.table("lines");
      String counts = SharedClusters.table("counts");
      String sorted = SharedClusters.table("sorted");
      assertEquals(lines.size(), BulkIO.load(client, in, input, n -> { }));
      client.submit(Grep.job(in, counts, regex, group, combine)).await();
      Map<String, Long> actual = new HashMap<>();
      ExampleIO.scan(client, counts, Serdes.STRING, Serdes.LONG, actual::put);
      assertEquals(expected, actual);

      client.submit(Grep.sortJob(counts, sorted)).await();
      List<Map.Entry<Long, String>> bySorted = new ArrayList<>();
      ExampleIO.scan(client, sorted, Serdes.LONG, Serdes.STRING, (neg, match) -> bySorted.add(Map.entry(-neg, match)));
      assertEquals(expected.size(), bySorted.size());
      Map<String, Long> fromSorted = new HashMap<>();
      for (int i = 0; i < bySorted.size(); i++) {
        if (i > 0) {
          assertTrue(bySorted.get(i - 1).getKey() >= bySorted.get(i).getKey(), "counts must not increase");
        }
        fromSorted.put(bySorted.get(i).getValue(), bySorted.get(i).getKey());
      }
      assertEquals(expected, fromSorted);

      Path out = dir.resolve("out.txt");
      assertEquals(expected.size(), Grep.writeSorted(client, sorted, out));
      List<String> written = Files.readAllLines(out, StandardCharsets.UTF_8);
      for (int i = 0; i < written.size(); i++) {
        assertEquals(bySorted.get(i).getKey() + "\t" + bySorted.get(i).getValue(), written.get(i));
      }
      for (String t : List.of(in, counts, sorted)) {
        client.dropTable(t, true);
      }
    }
  }

  @Test
  void badRegex_failsBeforeRunning() {
    IllegalArgumentException e = assertThrows(IllegalArgumentException.class, () -> Grep.job("a", "b", "([a-", false));
    assertTrue(e.getMessage().startsWith("invalid regex '([a-'"), e.getMessage());
    assertThrows(IllegalArgumentException.class, () -> Grep.job("a", "b", "(a)", 2, false));
  }
}
