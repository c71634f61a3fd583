package org.sss.client.cluster;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;
import static org.junit.jupiter.api.Assumptions.assumeTrue;

import java.nio.file.Files;
import java.nio.file.Path;
import java.util.Optional;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.io.TempDir;

/**
 * Only the process that /proc/locks names as the lock holder is signalled:
 * {@code NodeLockProbe.holder()} matches /proc/locks lines by inode number only
 * ({@code f[5].endsWith(":" + inode)}), not by device. Two cluster directories on different
 * file systems (two disks, two tmpfs) easily have lock files with the same inode number, and
 * then the holder found for a stopped node is another cluster's running node: {@code pid()}
 * names it and {@code killNow()} sends it SIGKILL.
 *
 * <p>Needs root (it mounts two small tmpfs in its temporary directory); skipped otherwise.
 */
@Timeout(value = 180, unit = TimeUnit.SECONDS)
class LockHolderAcrossDevicesTest {
  @TempDir
  Path work;

  private Path a;
  private Path b;

  private static boolean run(String... cmd) throws Exception {
    Process p = new ProcessBuilder(cmd).redirectErrorStream(true).start();
    p.getInputStream().readAllBytes();
    return p.waitFor(30, TimeUnit.SECONDS) && p.exitValue() == 0;
  }

  @AfterEach
  void unmount() throws Exception {
    if (a != null) {
      run("umount", "-l", a.toString());
    }
    if (b != null) {
      run("umount", "-l", b.toString());
    }
  }

  @Test
  void holderOfAStoppedNode_isNeverAnotherClustersNodeOnAnotherDevice() throws Exception {
    assumeTrue("root".equals(System.getProperty("user.name")), "needs root to mount tmpfs");
    Path ma = Files.createDirectories(work.resolve("fs-a"));
    Path mb = Files.createDirectories(work.resolve("fs-b"));
    assumeTrue(run("mount", "-t", "tmpfs", "-o", "size=256m", "tmpfs", ma.toString()), "mount tmpfs");
    a = ma;
    assumeTrue(run("mount", "-t", "tmpfs", "-o", "size=256m", "tmpfs", mb.toString()), "mount tmpfs");
    b = mb;

    // cluster A: started once and stopped (its node.lock exists, nobody holds it)
    LocalProcessCluster.start(ma.resolve("c"), 1, 0, "256m").stopAll();
    // cluster B, on the other file system, runs
    LocalProcessCluster clusterB = LocalProcessCluster.start(mb.resolve("c"), 1, 0, "256m");
    try {
      Path lockA = ma.resolve("c/node-0/data/node.lock");
      Path lockB = mb.resolve("c/node-0/data/node.lock");
      long inoA = NodeLockTest.inode(lockA);
      long inoB = NodeLockTest.inode(lockB);
      assumeTrue(inoA == inoB, "the two lock files happen to share an inode number (" + inoA + ", " + inoB + ")");
      long pidB = clusterB.pid(0).orElseThrow();

      LocalProcessCluster clusterA = LocalProcessCluster.attach(ma.resolve("c"));
      assertTrue(!new NodeLockProbe(ma.resolve("c/node-0/data")).held(), "cluster A's node is stopped");
      Optional<Long> pidA = clusterA.pid(0);
      clusterA.killNow(0); // "kill -9 node 0 of cluster A": A's node 0 does not run, so nothing to do
      Thread.sleep(1000);
      boolean bAlive = ProcessHandle.of(pidB).map(ProcessHandle::isAlive).orElse(false);
      assertTrue(bAlive && clusterB.answers(0), "killNow(0) on stopped cluster A killed cluster B's node (pid " + pidB
          + "); A's pid(0) was " + pidA);
      assertEquals(Optional.empty(), pidA, "a stopped node has no holder");
    } finally {
      clusterB.stopAll();
    }
  }
}
