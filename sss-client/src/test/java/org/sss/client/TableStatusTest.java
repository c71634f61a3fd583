package org.sss.client;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.util.ArrayList;
import java.util.List;
import org.junit.jupiter.api.Test;

/** A listed table: its nodes missing it are a copy of what it was given, and make it not whole. */
class TableStatusTest {
  @Test
  void missingOn_isCopied_andNamesATableNotWhole() {
    List<Integer> missing = new ArrayList<>(List.of(2));
    TableStatus t = new TableStatus("t", TableSpec.defaults(), 10, 100, false, missing, false);
    missing.add(3);
    assertEquals(List.of(2), t.missingOn(), "a later change of the caller's list does not reach the status");
    assertThrows(UnsupportedOperationException.class, () -> t.missingOn().add(4));
    assertFalse(t.whole());
    assertTrue(new TableStatus("t", TableSpec.defaults(), 10, 100, false, List.of(), false).whole());
  }

  @Test
  void nameAndSpec_areRequired() {
    assertThrows(NullPointerException.class, () -> new TableStatus(null, TableSpec.defaults(), 0, 0, false, List.of(),
        false));
    assertThrows(NullPointerException.class, () -> new TableStatus("t", null, 0, 0, false, List.of(), false));
  }
}
