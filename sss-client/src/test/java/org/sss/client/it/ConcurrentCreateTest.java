package org.sss.client.it;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.util.List;
import java.util.concurrent.CompletableFuture;
import org.junit.jupiter.api.Test;
import org.sss.client.SssClient;
import org.sss.client.TableSpec;
import org.sss.client.TableStatus;
import org.sss.client.cluster.SssCluster;
import org.sss.core.keys.PairTypes;
import org.sss.core.proto.DataType;

/**
 * Two clients creating one name at once with other types: however their requests interleave
 * on the nodes, the table afterwards exists on every node with one of the two contracts, or
 * nowhere; never on some nodes only, never mixed. Each failed create takes back what it made,
 * and only that (the nodes say which creates made the table).
 */
class ConcurrentCreateTest {
  private static final TableSpec LONG_STRING = TableSpec.of(PairTypes.of(DataType.LONG, DataType.STRING));
  private static final TableSpec STRING_LONG = TableSpec.of(PairTypes.of(DataType.STRING, DataType.LONG));

  @Test
  void racingCreatesOfOtherTypes_leaveAWholeTableOrNone() throws Exception {
    try (SssCluster cluster = SssCluster.embedded(3); SssClient a = cluster.client(); SssClient b = cluster.client();
         SssClient check = cluster.client()) {
      int whole = 0;
      for (int round = 0; round < 60; round++) {
        String name = "contested-" + round;
        CompletableFuture<Boolean> first = CompletableFuture.supplyAsync(() -> created(a, name, LONG_STRING));
        CompletableFuture<Boolean> second = CompletableFuture.supplyAsync(() -> created(b, name, STRING_LONG));
        boolean madeA = first.get();
        boolean madeB = second.get();
        assertTrue(!(madeA && madeB), "round " + round + ": both creates of other types succeeded");
        List<TableStatus> found = check.listTables().stream().filter(t -> t.name().equals(name)).toList();
        if (madeA || madeB) {
          assertEquals(1, found.size(), "round " + round);
          assertEquals(0, found.get(0).missingOn().size(), "round " + round + ": made on some nodes only: " + found);
          TableSpec o = found.get(0).spec();
          assertEquals(madeA ? DataType.LONG : DataType.STRING, o.types().key(), "round " + round + ": the winner's types");
          whole++;
        } else if (!found.isEmpty()) {
          // neither succeeded: a leftover must at least be whole and of one contract, and is dropped by the user
          assertEquals(0, found.get(0).missingOn().size(), "round " + round + ": neither create succeeded, yet "
              + "the table is on some nodes only: " + found);
        }
        check.dropTable(name, true);
      }
      System.out.println(whole + " of 60 rounds made a whole table");
    }
  }

  private static boolean created(SssClient client, String name, TableSpec options) {
    try {
      client.createTable(name, options, false);
      return true;
    } catch (RuntimeException refused) {
      return false;
    }
  }
}
