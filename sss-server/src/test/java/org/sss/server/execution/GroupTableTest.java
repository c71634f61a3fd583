package org.sss.server.execution;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertSame;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.nio.ByteBuffer;
import java.util.HashMap;
import java.util.Map;
import java.util.Random;
import java.util.function.LongFunction;
import org.junit.jupiter.api.Test;

/** The combining buffer's table of groups against a {@code HashMap} of the same keys. */
class GroupTableTest {
  /**
   * Mixed keys: strings, byte buffers, and 256 strings of one hash code, which soon move the
   * table's entries into its {@code HashMap}; the clears bring it back to its slots. Growth of
   * the slots themselves is in the tests below, whose keys stay there.
   */
  @Test
  void findsWhatAHashMapFindsThroughChainingAndClears() {
    Random random = new Random(11);
    GroupTable<Object> table = new GroupTable<>();
    Map<Object, Object> model = new HashMap<>();
    String[] colliding = {"Aa", "BB"}; // equal hash codes: "AaAa", "AaBB", "BBAa", "BBBB" all collide
    for (int round = 0; round < 4; round++) {
      int keys = round == 2 ? 50_000 : 3_000;
      for (int i = 0; i < 4 * keys; i++) {
        Object key = switch (random.nextInt(3)) {
          case 0 -> "k" + random.nextInt(keys);
          case 1 -> {
            StringBuilder b = new StringBuilder();
            int bits = random.nextInt(256);
            for (int j = 0; j < 8; j++) {
              b.append(colliding[(bits >> j) & 1]);
            }
            yield b.toString();
          }
          default -> ByteBuffer.wrap(new byte[] {(byte) random.nextInt(4), (byte) random.nextInt(256)});
        };
        // a fresh but equal object, as a mapper emits
        Object probe = key instanceof String s ? new String(s) : ByteBuffer.wrap(((ByteBuffer) key).array().clone());
        lookUpOrPut(table, model, key, probe);
        assertEquals(model.size(), table.size());
      }
      assertTrue(table.chained(), "256 keys of one hash code stayed in the slots");
      assertVisitsAsTheModel(table, model);
      table.clear();
      assertFalse(table.chained());
      model.clear();
      assertEquals(0, table.size());
      assertNull(table.get("k1"));
    }
  }

  /**
   * Packed pairs of small ids ({@code src << 32 | dst}: {@code Long.hashCode} is {@code src ^ dst},
   * so 65,536 keys share 256 codes) would make one run of slots every lookup walks: the table
   * moves its entries into a {@code HashMap} and still answers as the model does, then returns
   * to slots after a clear.
   */
  @Test
  void keysSharingFewHashCodesMoveIntoAHashMapAndStayCorrect() {
    GroupTable<Object> table = new GroupTable<>();
    assertSameAsAModel(table, 256 * 256, i -> (i / 256) << 32 | (i % 256));
    assertTrue(table.chained(), "65,536 keys with 256 hash codes stayed in the slots");
    table.clear();
    assertFalse(table.chained());
    assertSameAsAModel(table, 50_000, i -> i);
    assertFalse(table.chained(), "spread keys after a clear went to the HashMap");
  }

  /** Keys whose hash codes spread, however regular, stay in the slots. */
  @Test
  void keysWithSpreadHashCodesStayInTheSlots() {
    Random random = new Random(5);
    long[][] shapes = new long[4][];
    shapes[0] = random.longs(200_000).toArray();
    shapes[1] = java.util.stream.LongStream.range(0, 200_000).toArray(); // consecutive
    shapes[2] = java.util.stream.LongStream.range(0, 200_000).map(i -> i * 2048).toArray(); // multiples of a table's size
    shapes[3] = java.util.stream.LongStream.range(0, 200_000).map(i -> i << 40).toArray(); // only high bits differ
    for (long[] shape : shapes) {
      GroupTable<Object> table = new GroupTable<>();
      assertSameAsAModel(table, shape.length, i -> shape[(int) i]);
      assertFalse(table.chained(), "regular keys went to the HashMap");
    }
    GroupTable<Object> words = new GroupTable<>();
    assertSameAsAModel(words, 100_000, i -> "w" + (i * 7919 % 1000));
    assertFalse(words.chained());
  }

  /** Looks up every key twice (fresh, equal objects), putting it when absent; checks size and visits against a HashMap. */
  private static void assertSameAsAModel(GroupTable<Object> table, int n, LongFunction<Object> keyOf) {
    Map<Object, Object> model = new HashMap<>();
    for (int round = 0; round < 2; round++) {
      for (long i = 0; i < n; i++) {
        Object key = keyOf.apply(i);
        lookUpOrPut(table, model, key, key);
      }
      assertEquals(model.size(), table.size());
    }
    assertVisitsAsTheModel(table, model);
  }

  /** Looks {@code probe} up as the combining buffer does, putting {@code key} with a new group when absent. */
  private static void lookUpOrPut(GroupTable<Object> table, Map<Object, Object> model, Object key, Object probe) {
    Object found = table.get(probe);
    assertSame(model.get(key), found, "lookup of " + key);
    if (found == null) {
      Object group = new Object();
      table.putNew(key, group);
      model.put(key, group);
    }
  }

  private static void assertVisitsAsTheModel(GroupTable<Object> table, Map<Object, Object> model) {
    Map<Object, Object> visited = new HashMap<>();
    table.forEach((k, g) -> assertNull(visited.put(k, g), "visited twice: " + k));
    assertEquals(model, visited);
  }
}
