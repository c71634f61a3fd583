package org.sss.client;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.util.ArrayList;
import java.util.List;
import org.junit.jupiter.api.Test;

/** The membership as read: whole only with no node down, out or catching up; its lists are its own. */
class MembershipViewTest {
  private static MembershipView view(List<Integer> down, List<Integer> out, List<Integer> joining) {
    return new MembershipView(true, 7, down, out, joining, 0, List.of(0, 1, 2), 12);
  }

  @Test
  void whole_onlyWithEveryNodeUpAndInSync() {
    assertTrue(view(List.of(), List.of(), List.of()).whole());
    assertFalse(view(List.of(1), List.of(), List.of()).whole(), "a node down");
    assertFalse(view(List.of(), List.of(1), List.of()).whole(), "a node out");
    assertFalse(view(List.of(), List.of(), List.of(1)).whole(), "a node catching up");
  }

  @Test
  void lists_areCopies() {
    List<Integer> down = new ArrayList<>(List.of(1));
    MembershipView v = view(down, List.of(), List.of());
    down.clear();
    assertEquals(List.of(1), v.down());
    assertThrows(UnsupportedOperationException.class, () -> v.voters().add(3));
  }
}
