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
import java.util.TreeSet;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.ExtendWith;
import org.junit.jupiter.api.io.TempDir;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.CsvSource;
import org.sss.client.SssClient;
import org.sss.client.io.BulkIO;
import org.sss.client.job.ProgressListener;
import org.sss.core.api.Serdes;

@ExtendWith(SharedClusters.class)
class AprioriTest {
  private static final int ITEMS = 11;

  @TempDir
  Path dir;

  @ParameterizedTest
  @CsvSource({"1,false,6", "1,true,9", "3,false,9", "3,true,6", "5,true,8", "5,false,12"})
  void apriori_matchesBruteForce(int nodes, boolean combine, long minSupport) throws Exception {
    Random rnd = new Random(nodes * 100 + minSupport);
    List<String> transactions = new ArrayList<>();
    // the items of each transaction as the bits of a mask, recorded while writing its line: the
    // reference never parses the lines (the job does, with its own tokenizer)
    List<Integer> masks = new ArrayList<>();
    for (int t = 0; t < 70; t++) {
      StringBuilder line = new StringBuilder();
      int mask = 0;
      for (int i = 0; i < ITEMS; i++) {
        // low items are common, so that itemsets of 3 and 4 items are frequent
        if (rnd.nextDouble() < 0.75 / (1 + i * 0.25)) {
          line.append(rnd.nextBoolean() ? " " : "\t ").append('i').append(i)
              .append(rnd.nextInt(8) == 0 ? " i" + i : ""); // a duplicate counts once
          mask |= 1 << i;
        }
      }
      transactions.add(line.toString().strip());
      masks.add(mask);
    }
    Path input = dir.resolve("transactions.txt");
    Files.write(input, transactions, StandardCharsets.UTF_8);

    Map<String, Long> expected = bruteForce(masks, minSupport);
    assertTrue(expected.keySet().stream().anyMatch(s -> s.split(" ").length >= 3), "the data has 3-itemsets");

    try (SssClient client = SharedClusters.get(nodes).client()) {
      String in = SharedClusters.table("transactions");
      String out = SharedClusters.table("frequent");
      BulkIO.load(client, in, input, n -> { });
      Apriori.Result r = Apriori.run(client, in, out, minSupport, 0, combine, ProgressListener.none());
      assertEquals(expected, new HashMap<>(r.frequent()));
      Map<String, Long> table = new HashMap<>();
      ExampleIO.scan(client, out, Serdes.STRING, Serdes.LONG, table::put);
      assertEquals(expected, table);
      int largest = expected.keySet().stream().mapToInt(s -> s.split(" ").length).max().orElse(0);
      assertTrue(r.passes().size() >= largest && r.passes().size() <= largest + 1, "passes " + r.passes().size());
      assertEquals(70, r.transactions());
      assertTrue(client.listTables().stream().noneMatch(t -> t.name().equals(out + ".pass")), "pass table dropped");
      client.dropTable(in, true);
      client.dropTable(out, true);
    }
  }

  /** Support of every subset of the items, by enumeration over the transactions' item masks. */
  private static Map<String, Long> bruteForce(List<Integer> masks, long minSupport) {
    Map<String, Long> out = new HashMap<>();
    for (int set = 1; set < 1 << ITEMS; set++) {
      long support = 0;
      for (int m : masks) {
        if ((m & set) == set) {
          support++;
        }
      }
      if (support >= minSupport) {
        TreeSet<String> items = new TreeSet<>();
        for (int i = 0; i < ITEMS; i++) {
          if ((set & 1 << i) != 0) {
            items.add("i" + i);
          }
        }
        out.put(String.join(" ", items), support);
      }
    }
    return out;
  }

  @Test
  void items_areTheDistinctWhitespaceSeparatedWords_inOrder() {
    assertEquals(List.of("a", "b", "c"), List.copyOf(Apriori.items("c a\tb  a\n")));
    assertEquals(List.of(), List.copyOf(Apriori.items(" \t ")));
    assertEquals(List.of("i10", "i2"), List.copyOf(Apriori.items("i2 i10 i2")), "string order, not numeric");
  }

  @Test
  void candidates_joinAndPrune() {
    // L2 = {ab, ac, ad, bc, bd}: joins give abc, abd, acd, bcd; acd lacks cd, bcd lacks cd
    assertEquals(List.of("a b c", "a b d"), Apriori.candidates(List.of("a b", "a c", "a d", "b c", "b d")));
    assertEquals(List.of("x y", "x z", "y z"), Apriori.candidates(List.of("z", "x", "y")));
    assertEquals(List.of(), Apriori.candidates(List.of("a b", "c d")));
  }

  @Test
  void minSupport_countOrFraction() {
    assertEquals(5, Apriori.minSupportCount(5, 100));
    assertEquals(3, Apriori.minSupportCount(0.021, 100));
    assertThrows(IllegalArgumentException.class, () -> Apriori.minSupportCount(2.5, 100));
    assertThrows(IllegalArgumentException.class, () -> Apriori.minSupportCount(0, 100));
  }
}
