package org.sss.bench;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNotEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.nio.file.Path;
import org.junit.jupiter.api.Test;

class ResultsDirTest {
  @Test
  void givenOut_isKept() {
    assertEquals(Path.of("benchmarks/results/store"), ResultsDir.orFresh(Path.of("benchmarks/results/store"), "store"));
  }

  @Test
  void withoutOut_aNewDirectoryUnderTmp_neverThePublishedOne() throws Exception {
    Path a = ResultsDir.orFresh(null, "store");
    assertTrue(a.startsWith(Path.of(System.getProperty("java.io.tmpdir"), "sss-results")), a.toString());
    assertTrue(a.getFileName().toString().matches("store-\\d{8}-\\d{6}"), a.toString());
    assertTrue(!a.toString().contains("benchmarks/results"), a.toString());
    Thread.sleep(1100);
    assertNotEquals(a, ResultsDir.orFresh(null, "store"), "a later run gets its own directory");
  }
}
