package org.sss.kvs;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertTrue;

import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;

/** A size set by a system property: taken within its range, refused (naming it) outside it or when not a number. */
class SizeSettingTest {
  private static final String PROPERTY = "sss.test.size.setting";

  @AfterEach
  void clear() {
    System.clearProperty(PROPERTY);
  }

  private static SizeSetting read() {
    return SizeSetting.read(PROPERTY, 4096, 1024, 1 << 20, "a thing holds");
  }

  @Test
  void unsetOrInRange_isTaken() {
    assertEquals(new SizeSetting(4096, null), read());
    for (String v : new String[] {"1024", " 2048 ", "1048576"}) {
      System.setProperty(PROPERTY, v);
      SizeSetting s = read();
      assertNull(s.refused(), v);
      assertEquals(Long.parseLong(v.trim()), s.bytes(), v);
    }
  }

  @Test
  void outOfRangeOrNotANumber_isRefusedNamingPropertyAndValue() {
    for (String v : new String[] {"1023", "1048577", "0", "-5", "64k", "", "lots"}) {
      System.setProperty(PROPERTY, v);
      SizeSetting s = read();
      assertEquals(4096, s.bytes(), v);
      assertTrue(s.refused() != null && s.refused().startsWith(PROPERTY + "=" + v + ": a thing holds from 1024 to"),
          v + ": " + s.refused());
    }
  }
}
