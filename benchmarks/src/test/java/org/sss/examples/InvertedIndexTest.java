package org.sss.examples;

import static org.junit.jupiter.api.Assertions.assertEquals;

import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Random;
import java.util.StringTokenizer;
import java.util.TreeMap;
import java.util.TreeSet;
import org.junit.jupiter.api.extension.ExtendWith;
import org.junit.jupiter.api.io.TempDir;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.CsvSource;
import org.sss.client.SssClient;
import org.sss.client.TableSpec;
import org.sss.client.io.BulkIO;
import org.sss.core.api.Serdes;

@ExtendWith(SharedClusters.class)
class InvertedIndexTest {
  @TempDir
  Path dir;

  @ParameterizedTest
  @CsvSource({"1,false", "1,true", "3,false", "3,true", "5,true", "5,false"})
  void index_matchesSequentialReference(int nodes, boolean combine) throws Exception {
    Random rnd = new Random(nodes * 2 + (combine ? 1 : 0));
    Path docs = Files.createDirectories(dir.resolve("docs"));
    Files.createDirectories(docs.resolve("sub"));
    Map<String, TreeSet<String>> expected = new TreeMap<>();
    for (int f = 0; f < 40; f++) {
      String name = (f % 5 == 0 ? "sub/" : "") + "doc-" + f + ".txt";
      StringBuilder text = new StringBuilder();
      int words = f == 7 ? 0 : rnd.nextInt(300);
      for (int w = 0; w < words; w++) {
        text.append(rnd.nextInt(4) == 0 ? "wörd" : "w").append(rnd.nextInt(f % 2 == 0 ? 500 : 40))
            .append(rnd.nextInt(10) == 0 ? "\n" : rnd.nextBoolean() ? " " : "\t");
      }
      Files.writeString(docs.resolve(name), text, StandardCharsets.UTF_8);
      StringTokenizer t = new StringTokenizer(text.toString());
      while (t.hasMoreTokens()) {
        expected.computeIfAbsent(t.nextToken(), k -> new TreeSet<>()).add(name);
      }
    }
    try (SssClient client = SharedClusters.get(nodes).client()) {
      String in = SharedClusters.table("docs");
      String out = SharedClusters.table("index");
      assertEquals(40, BulkIO.loadWholeFiles(client, in, docs, TableSpec.Compression.LZ4, n -> {}));
      client.submit(InvertedIndex.job(in, out, combine)).await();
      Map<String, List<String>> actual = new TreeMap<>();
      ExampleIO.scan(client, out, Serdes.STRING, new InvertedIndex.FileList(), actual::put);
      Map<String, List<String>> expectedLists = new TreeMap<>();
      expected.forEach((w, files) -> expectedLists.put(w, new ArrayList<>(files)));
      assertEquals(expectedLists, actual);

      Path dump = dir.resolve("index.txt");
      BulkIO.dump(client, out, dump, n -> {});
      List<String> lines = Files.readAllLines(dump, StandardCharsets.UTF_8);
      assertEquals(expected.size(), lines.size());
      String first = lines.get(0);
      Map.Entry<String, TreeSet<String>> e = expected.entrySet().iterator().next();
      assertEquals(e.getKey() + "\t" + String.join("\t", e.getValue()), first);
      client.dropTable(in, true);
      client.dropTable(out, true);
    }
  }
}
