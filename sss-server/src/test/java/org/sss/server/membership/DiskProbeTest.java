package org.sss.server.membership;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.nio.ByteBuffer;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.io.TempDir;

/** The disk probe on a real file system: a disk that answers, and one that fails every write. */
@Timeout(value = 30, unit = TimeUnit.SECONDS)
@Tag("serial") // timing it checks (decisions after 5 s of silence, reruns, synced writes): alone on the cores
class DiskProbeTest {
  @TempDir
  Path dir;

  @Test
  void aDiskThatAnswers_isNeverStalledForLong_andTheProbeWritesItsFile() throws Exception {
    try (DiskProbe probe = new DiskProbe(dir, "test-disk-probe")) {
      for (int i = 0; i < 6; i++) {
        Thread.sleep(250);
        assertTrue(probe.stalledMillis() < 1_000, "a synced write of 8 bytes took " + probe.stalledMillis() + " ms");
      }
      Path file = dir.resolve("disk-probe");
      assertEquals(Long.BYTES, Files.size(file));
      long stamp = ByteBuffer.wrap(Files.readAllBytes(file)).getLong();
      assertTrue(System.currentTimeMillis() - stamp < 5_000, "the probe writes the time of each write");
    }
  }

  @Test
  void writesThatFail_countAsStalledFromTheFirst_untilOneSucceeds() throws Exception {
    Path gone = dir.resolve("no-such-directory");
    try (DiskProbe probe = new DiskProbe(gone, "test-disk-probe")) {
      Thread.sleep(1_200);
      assertTrue(probe.stalledMillis() >= 1_000, "stalled " + probe.stalledMillis() + " ms");
      long earlier = probe.stalledMillis();
      Thread.sleep(100);
      assertTrue(probe.stalledMillis() > earlier, "it grows while the writes fail");
      Files.createDirectories(gone); // the disk answers again
      long end = System.nanoTime() + TimeUnit.SECONDS.toNanos(5);
      while (probe.stalledMillis() > 0 && System.nanoTime() < end) {
        Thread.sleep(50);
      }
      assertEquals(0, probe.stalledMillis(), "a write succeeded: no longer stalled");
    }
  }
}
