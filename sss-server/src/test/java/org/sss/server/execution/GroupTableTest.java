package org.sss.server.execution;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertSame;

import java.nio.ByteBuffer;
import java.util.HashMap;
import java.util.Map;
import java.util.Random;
import org.junit.jupiter.api.Test;

/** The combining buffer's table of groups against a {@code HashMap} of the same keys. */
class GroupTableTest {
  @Test
  void findsWhatAHashMapFindsThroughGrowthAndClears() {
    Random random = new Random(11);
    GroupTable<Object> table = new GroupTable<>();
    Map<Object, Object> model = new HashMap<>();
    String[] colliding = {"Aa", "BB"}; // equal hash codes: "AaAa", "AaBB", "BBAa", "BBBB" all collide
    for (int round = 0; round < 4; round++) {
      int keys = round == 2 ? 50_000 : 3_000; // one round grows the table well past its first size
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
        Object found = table.get(probe);
        assertSame(model.get(key), found, "lookup of " + key);
        if (found == null) {
          Object group = new Object();
          table.putNew(key, group);
          model.put(key, group);
        }
        assertEquals(model.size(), table.size());
      }
      Map<Object, Object> visited = new HashMap<>();
      table.forEach((k, g) -> assertNull(visited.put(k, g), "visited twice: " + k));
      assertEquals(model, visited);
      table.clear();
      model.clear();
      assertEquals(0, table.size());
      assertNull(table.get("k1"));
    }
  }
}
