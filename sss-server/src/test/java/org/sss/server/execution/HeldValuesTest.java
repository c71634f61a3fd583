package org.sss.server.execution;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertSame;
import static org.junit.jupiter.api.Assertions.assertThrows;

import java.util.ArrayList;
import java.util.Iterator;
import java.util.List;
import java.util.NoSuchElementException;
import java.util.Random;
import org.junit.jupiter.api.Test;

/**
 * A group's held values against a plain list of the same adds: the same references in the same
 * order, whatever mix of repeated objects, equal copies, removals and clears.
 */
class HeldValuesTest {
  @Test
  void yieldsExactlyTheReferencesAddedInOrder() {
    Random random = new Random(7);
    // three distinct objects that are equal to each other, and one other: a run must merge only the same object
    String[] pool = {new String("one"), new String("one"), new String("one"), "two"};
    HeldValues<String> held = new HeldValues<>();
    List<String> model = new ArrayList<>();
    for (int step = 0; step < 200_000; step++) {
      int op = random.nextInt(100);
      if (op < 85) {
        // long runs of one object as often as alternation
        String v = random.nextBoolean() && !model.isEmpty() ? model.get(model.size() - 1) : pool[random.nextInt(pool.length)];
        held.add(v);
        model.add(v);
      } else if (op < 95 && !model.isEmpty()) {
        held.removeLast();
        model.remove(model.size() - 1);
      } else if (op < 97) {
        List<String> more = List.of(pool[0], pool[0], pool[1], pool[3], pool[3]);
        held.addAll(more);
        model.addAll(more);
      } else if (op < 98) {
        held.clear();
        model.clear();
      } else {
        assertSameSequence(model, held);
      }
      assertEquals(model.size(), held.size());
    }
    assertSameSequence(model, held);
  }

  @Test
  void anIteratorPastTheEndThrows() {
    HeldValues<Long> held = new HeldValues<>();
    Long one = 1L;
    held.add(one);
    held.add(one);
    Iterator<Long> it = held.iterator();
    assertSame(one, it.next());
    assertSame(one, it.next());
    assertFalse(it.hasNext());
    assertThrows(NoSuchElementException.class, it::next);
  }

  private static void assertSameSequence(List<String> model, HeldValues<String> held) {
    Iterator<String> it = held.iterator();
    for (int i = 0; i < model.size(); i++) {
      String actual = it.next();
      assertSame(model.get(i), actual, "value " + i + " of " + model.size());
    }
    assertFalse(it.hasNext(), "more values than added");
  }
}
