package org.sss.client.io;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.io.IOException;
import java.io.RandomAccessFile;
import java.nio.file.Path;
import java.util.List;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

class TextSplitsTest {
  @TempDir
  Path dir;

  /** A sparse file of {@code size} bytes: only its length matters to the plan. */
  private Path file(String name, long size) throws IOException {
    Path f = dir.resolve(name);
    try (RandomAccessFile raf = new RandomAccessFile(f.toFile(), "rw")) {
      raf.setLength(size);
    }
    return f;
  }

  /** The splits of each file follow each other from 0 to its end, none empty. */
  private static void assertCovers(List<TextSplits.Split> splits, List<Path> files) throws IOException {
    for (Path f : files) {
      long at = 0;
      for (TextSplits.Split s : splits) {
        if (s.file().equals(f)) {
          assertEquals(at, s.start(), "splits of " + f + " follow each other");
          assertTrue(s.length() > 0, "an empty split " + s);
          at += s.length();
        }
      }
      assertEquals(java.nio.file.Files.size(f), at, "splits of " + f + " end at its end");
    }
  }

  @Test
  void aFileOfAFewTasksWorth_isCutIntoThatMany() throws IOException {
    Path f = file("a", 300L << 20);
    List<TextSplits.Split> splits = TextSplits.plan(List.of(f), 12);
    assertEquals(12, splits.size());
    assertCovers(splits, List.of(f));
  }

  @Test
  void splitsCappedAt256MiB_comeInAWholeNumberOfWaves() throws IOException {
    // just over 1 GiB for 4 tasks: 4 splits would pass 256 MiB, 5 would leave one task a wave alone
    Path f = file("b", (1L << 30) + 4096);
    List<TextSplits.Split> splits = TextSplits.plan(List.of(f), 4);
    assertEquals(8, splits.size());
    assertTrue(splits.stream().allMatch(s -> s.length() <= TextSplits.MAX_SPLIT), splits::toString);
    assertCovers(splits, List.of(f));
    Path big = file("c", 10L << 30); // 40 splits of 256 MiB at least; 12 tasks: 48
    List<TextSplits.Split> many = TextSplits.plan(List.of(big), 12);
    assertEquals(48, many.size());
    assertTrue(many.stream().allMatch(s -> s.length() <= TextSplits.MAX_SPLIT), many::toString);
    assertCovers(many, List.of(big));
  }

  @Test
  void eachSplitKnowsWhereItsFileStartsInTheFilesEndToEnd() throws IOException {
    Path a = file("g", 20L << 20);
    Path b = file("h", 0);
    Path c = file("i", 30L << 20);
    List<TextSplits.Split> splits = TextSplits.plan(List.of(a, b, c), 4);
    assertTrue(splits.size() > 2, splits::toString);
    for (TextSplits.Split s : splits) {
      assertEquals(s.file().equals(a) ? 0 : 20L << 20, s.fileOffset(), s::toString);
    }
  }

  @Test
  void aDirectoryGivenAsALink_isWalkedWhereItPoints_itsFilesNamedUnderTheLink() throws IOException {
    Path real = dir.resolve("real");
    java.nio.file.Files.createDirectories(real.resolve("sub"));
    java.nio.file.Files.writeString(real.resolve("x.txt"), "x\n");
    java.nio.file.Files.writeString(real.resolve("sub/y.txt"), "y\n");
    java.nio.file.Files.writeString(real.resolve("_SUCCESS"), "");
    Path link = java.nio.file.Files.createSymbolicLink(dir.resolve("link"), real);
    assertEquals(List.of(link.resolve("sub/y.txt"), link.resolve("x.txt")), TextSplits.files(link));
  }

  @Test
  void smallFiles_areOneSplitEach_andAnEmptyOneNone() throws IOException {
    Path small = file("d", 1000);
    Path other = file("e", 3L << 20);
    Path empty = file("f", 0);
    List<TextSplits.Split> splits = TextSplits.plan(List.of(small, other, empty), 12);
    assertEquals(2, splits.size(), splits::toString);
    assertCovers(splits, List.of(small, other, empty));
  }
}
