package org.sss.client.cluster;

import java.nio.channels.FileChannel;
import java.nio.channels.FileLock;
import java.nio.file.Path;
import java.nio.file.StandardOpenOption;

/**
 * Run in a child JVM by the lock tests: says whether another process holds an fcntl lock on
 * the file given ({@code held}) or not ({@code free}), as a separate process sees it.
 */
public final class LockCheckMain {
  private LockCheckMain() {}

  public static void main(String[] args) throws Exception {
    try (FileChannel ch = FileChannel.open(Path.of(args[0]), StandardOpenOption.WRITE)) {
      FileLock lock = ch.tryLock();
      if (lock == null) {
        System.out.println("held");
      } else {
        lock.release();
        System.out.println("free");
      }
    }
  }
}
