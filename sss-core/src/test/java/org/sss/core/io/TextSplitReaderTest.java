package org.sss.core.io;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;

import java.io.IOException;
import java.nio.channels.FileChannel;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.Random;
import java.util.TreeSet;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * Every cut of a file into splits gives every line exactly once, with its offset, compared with
 * a plain model that reads the whole text at once.
 */
class TextSplitReaderTest {
  @TempDir
  Path dir;

  /** The model: lines of the whole text with the offset of their first byte. */
  private static List<String> model(byte[] text) {
    List<String> lines = new ArrayList<>();
    int i = 0;
    while (i < text.length) {
      int start = i;
      while (i < text.length && text[i] != '\n' && text[i] != '\r') {
        i++;
      }
      lines.add(start + ":" + new String(text, start, i - start, java.nio.charset.StandardCharsets.ISO_8859_1));
      if (i < text.length) {
        if (text[i] == '\r' && i + 1 < text.length && text[i + 1] == '\n') {
          i++;
        }
        i++;
      }
    }
    return lines;
  }

  private List<String> read(Path file, long[] cuts) throws IOException {
    return read(file, cuts, 1 << 20);
  }

  private List<String> read(Path file, long[] cuts, int buffer) throws IOException {
    List<String> lines = new ArrayList<>();
    long size = Files.size(file);
    try (FileChannel ch = FileChannel.open(file)) {
      for (int s = 0; s + 1 < cuts.length; s++) {
        TextSplitReader r = new TextSplitReader(ch, cuts[s], cuts[s + 1] - cuts[s], size, Integer.MAX_VALUE - 8, buffer);
        while (r.next()) {
          lines.add(r.offset() + ":" + new String(r.line(), java.nio.charset.StandardCharsets.ISO_8859_1));
        }
      }
    }
    return lines;
  }

  private static byte[] randomText(Random rnd, int bytes) {
    byte[] alphabet = "ab\n\r ".getBytes();
    byte[] text = new byte[bytes];
    for (int i = 0; i < bytes; i++) {
      text[i] = alphabet[rnd.nextInt(alphabet.length)];
    }
    return text;
  }

  @Test
  void everyCutGivesEveryLineOnce() throws IOException {
    Random rnd = new Random(42);
    for (int round = 0; round < 2000; round++) {
      byte[] text = randomText(rnd, rnd.nextInt(60));
      Path f = dir.resolve("t" + round);
      Files.write(f, text);
      TreeSet<Long> cuts = new TreeSet<>(List.of(0L, (long) text.length));
      int n = rnd.nextInt(6);
      for (int i = 0; i < n && text.length > 0; i++) {
        cuts.add((long) rnd.nextInt(text.length + 1));
      }
      long[] c = cuts.stream().mapToLong(Long::longValue).toArray();
      // buffers of 1 to 7 bytes: line ends, \r\n pairs and split starts fall across every refill
      int buffer = 1 + round % 7;
      assertEquals(model(text), read(f, c, buffer), "text " + Arrays.toString(text) + " cut at "
          + Arrays.toString(c) + ", buffer " + buffer);
      assertEquals(model(text), read(f, c), "text " + Arrays.toString(text) + " cut at " + Arrays.toString(c));
    }
  }

  /**
   * A line as a string is its bytes decoded as the string serde decodes them: multi-byte
   * characters whole (also where a small buffer cuts through them), malformed bytes as U+FFFD.
   */
  @Test
  void aLineAsAStringIsItsBytesDecodedAsUtf8() throws IOException {
    byte[] text = ("gr\u00fc\u00dfe \u4e16\u754c \ud83d\ude00\nplain\r\n").getBytes(java.nio.charset.StandardCharsets.UTF_8);
    byte[] malformed = {'a', (byte) 0xC3, 'b', (byte) 0xFF, (byte) 0xE4, (byte) 0xB8, '\n'};
    byte[] all = Arrays.copyOf(text, text.length + malformed.length);
    System.arraycopy(malformed, 0, all, text.length, malformed.length);
    Path f = dir.resolve("utf8");
    Files.write(f, all);
    for (int buffer : new int[] {1, 2, 3, 5, 1 << 20}) {
      List<String> strings = new ArrayList<>();
      List<String> decodedCopies = new ArrayList<>();
      try (FileChannel ch = FileChannel.open(f)) {
        TextSplitReader r = new TextSplitReader(ch, 0, all.length, all.length, 1 << 20, buffer);
        while (r.next()) {
          strings.add(r.lineString());
          decodedCopies.add(new String(r.line(), java.nio.charset.StandardCharsets.UTF_8));
        }
      }
      assertEquals(List.of("gr\u00fc\u00dfe \u4e16\u754c \ud83d\ude00", "plain", "a\ufffdb\ufffd\ufffd"), strings,
          "buffer " + buffer);
      assertEquals(decodedCopies, strings, "buffer " + buffer);
    }
  }

  @Test
  void cutsAtEveryByteOfLineEndsAndLongLines() throws IOException {
    // lines longer than the reader's buffer, \r\n and lone \r around every cut
    StringBuilder sb = new StringBuilder();
    sb.append("x".repeat(3 << 20)).append("\r\n").append("\r\r\n\n").append("y".repeat((1 << 20) - 1)).append('\r')
        .append("tail");
    byte[] text = sb.toString().getBytes(java.nio.charset.StandardCharsets.ISO_8859_1);
    Path f = dir.resolve("long");
    Files.write(f, text);
    List<String> expected = model(text);
    for (long cut : new long[] {1, (3 << 20) - 1, 3 << 20, (3 << 20) + 1, (3 << 20) + 2, (3 << 20) + 3,
        (3 << 20) + 4, (3 << 20) + 5, (3 << 20) + 6, 1 << 20, text.length - 5, text.length - 1}) {
      assertEquals(expected, read(f, new long[] {0, cut, text.length}), "cut at " + cut);
    }
    assertEquals(expected, read(f, new long[] {0, 1 << 20, 2 << 20, 3 << 20, 4 << 20, text.length}));
  }

  @Test
  void aFileShorterThanPlannedIsRefusedByName() throws IOException {
    Path f = dir.resolve("short");
    Files.write(f, "abc\n".getBytes());
    try (FileChannel ch = FileChannel.open(f)) {
      TextSplitReader r = new TextSplitReader(ch, 0, 10, 10, 100);
      IOException e = assertThrows(IOException.class, () -> {
        while (r.next()) {
          // read to the end
        }
      });
      assertEquals(true, e.getMessage().contains("changed while it was read"), e.getMessage());
    }
  }

  @Test
  void aLineLongerThanTheLimitFailsNamingWhereItStarts() throws IOException {
    Path f = dir.resolve("binary");
    Files.write(f, ("ok\n" + "z".repeat(5000)).getBytes());
    try (FileChannel ch = FileChannel.open(f)) {
      TextSplitReader r = new TextSplitReader(ch, 0, Files.size(f), Files.size(f), 1000);
      assertEquals(true, r.next());
      IOException e = assertThrows(IOException.class, r::next);
      assertEquals(true, e.getMessage().contains("the line at byte 3 is longer than 1000 bytes"), e.getMessage());
    }
  }

  /**
   * The eight-bytes-at-a-time scan finds the same first line end as a byte loop, from every start
   * to every limit, over bytes chosen to trip a wrong mask: the ends themselves, their neighbours
   * (0x0B, 0x0C, 0x09), their high-bit twins (0x8A, 0x8D), 0x00, 0x01 and 0xFF.
   */
  @Test
  void scanForLineEndsMatchesAByteLoop() {
    byte[] alphabet = {'\n', '\r', 0x0B, 0x0C, 0x09, (byte) 0x8A, (byte) 0x8D, 0, 1, (byte) 0xFF, 'a', 'a', 'a', 'a'};
    Random random = new Random(11);
    for (int round = 0; round < 300; round++) {
      byte[] b = new byte[random.nextInt(40)];
      int density = 1 + random.nextInt(alphabet.length);
      for (int j = 0; j < b.length; j++) {
        b[j] = random.nextInt(density) == 0 ? alphabet[random.nextInt(alphabet.length)] : (byte) 'x';
      }
      for (int from = 0; from <= b.length; from++) {
        for (int limit = from; limit <= b.length; limit++) {
          int expected = from;
          while (expected < limit && b[expected] != '\n' && b[expected] != '\r') {
            expected++;
          }
          assertEquals(expected, TextSplitReader.lineEnd(b, from, limit),
              "from " + from + " to " + limit + " of " + Arrays.toString(b));
        }
      }
    }
  }
}
