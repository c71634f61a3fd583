package org.sss.client.cluster;

import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.nio.file.Files;
import java.nio.file.Path;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/** The kernel's transparent-huge-page setting read as the launcher reads it. */
class HugePagesTest {
  @TempDir
  Path dir;

  private boolean offered(String setting) throws Exception {
    Path f = dir.resolve("enabled");
    Files.writeString(f, setting + "\n");
    return HugePages.offered(f);
  }

  @Test
  void alwaysAndMadviseOfferHugePages_neverAndNoSettingDoNot() throws Exception {
    assertTrue(offered("always [madvise] never"));
    assertTrue(offered("[always] madvise never"));
    assertFalse(offered("always madvise [never]"));
    assertFalse(HugePages.offered(dir.resolve("missing")));
  }
}
