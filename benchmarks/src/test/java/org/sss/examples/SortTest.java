package org.sss.examples;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.io.ByteArrayOutputStream;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Random;
import org.junit.jupiter.api.extension.ExtendWith;
import org.junit.jupiter.api.io.TempDir;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;
import org.sss.client.SssClient;
import org.sss.client.io.BulkIO;
import org.sss.core.api.Serdes;

@ExtendWith(SharedClusters.class)
class SortTest {
  @TempDir
  Path dir;

  @ParameterizedTest
  @ValueSource(ints = {1, 3, 5})
  void sort_ordersEveryLineGlobally(int nodes) throws Exception {
    Random rnd = new Random(nodes);
    String chars = "abcXYZ019 \t~é€\u0000😀";
    List<String> pool = new ArrayList<>();
    for (int i = 0; i < 400; i++) {
      StringBuilder s = new StringBuilder();
      int len = rnd.nextInt(12);
      for (int j = 0; j < len; j++) {
        s.appendCodePoint(chars.codePointAt(chars.offsetByCodePoints(0, rnd.nextInt(chars.codePointCount(0, chars.length())))));
      }
      pool.add(s.toString());
    }
    List<byte[]> lines = new ArrayList<>();
    List<Long> offsets = new ArrayList<>();
    ByteArrayOutputStream text = new ByteArrayOutputStream();
    for (int i = 0; i < 3000; i++) {
      byte[] line = pool.get(rnd.nextInt(pool.size())).getBytes(StandardCharsets.UTF_8); // duplicates
      lines.add(line);
      offsets.add((long) text.size());
      text.write(line);
      text.write('\n');
    }
    Path input = dir.resolve("in.txt");
    Files.write(input, text.toByteArray());

    try (SssClient client = SharedClusters.get(nodes).client()) {
      String in = SharedClusters.table("lines");
      String sorted = SharedClusters.table("sorted");
      BulkIO.load(client, in, input, n -> { });
      client.submit(Sort.job(in, sorted)).await();

      List<byte[]> keys = new ArrayList<>();
      Map<Long, byte[]> byOffset = new HashMap<>();
      ExampleIO.scan(client, sorted, Serdes.BYTES, Serdes.LONG, (line, offset) -> {
        keys.add(line);
        byOffset.put(offset, line);
      });
      // a permutation of the input: every line's offset once, with its own line
      assertEquals(lines.size(), keys.size());
      assertEquals(lines.size(), byOffset.size());
      for (int i = 0; i < lines.size(); i++) {
        assertArrayEquals(lines.get(i), byOffset.get(offsets.get(i)), "line " + (i + 1));
      }
      // ordered: unsigned bytes never decrease
      for (int i = 1; i < keys.size(); i++) {
        assertTrue(Arrays.compareUnsigned(keys.get(i - 1), keys.get(i)) <= 0, "out of order at " + i);
      }
      // the written text is the reference sort of the input, byte for byte
      List<byte[]> reference = new ArrayList<>(lines);
      reference.sort(Arrays::compareUnsigned);
      ByteArrayOutputStream expected = new ByteArrayOutputStream();
      for (byte[] l : reference) {
        expected.write(l);
        expected.write('\n');
      }
      Path out = dir.resolve("sorted.txt");
      assertEquals(lines.size(), Sort.writeLines(client, sorted, out));
      assertArrayEquals(expected.toByteArray(), Files.readAllBytes(out));

      // `sss dump` of the multi-valued table: a line per duplicate, in order
      Path dump = dir.resolve("dump.txt");
      assertEquals(lines.size(), BulkIO.dump(client, sorted, dump, n -> {}));
      List<String> dumped = Files.readAllLines(dump, StandardCharsets.UTF_8);
      assertEquals(lines.size(), dumped.size());
      client.dropTable(in, true);
      client.dropTable(sorted, true);
    }
  }
}
