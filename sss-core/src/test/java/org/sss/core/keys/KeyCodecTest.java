package org.sss.core.keys;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNotNull;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.HexFormat;
import java.util.List;
import java.util.Random;
import org.junit.jupiter.api.Test;

class KeyCodecTest {
  private static final int PAIRS = 10_000;
  private static final long[] EDGE_LONGS = {
      Long.MIN_VALUE, Long.MIN_VALUE + 1, -256, -255, -1, 0, 1, 255, 256,
      Integer.MIN_VALUE, Integer.MAX_VALUE, Long.MAX_VALUE - 1, Long.MAX_VALUE};
  private static final String[] EDGE_STRINGS = {
      "", "\u0000", "\u0000\u0000", "\u0001", "a", "a\u0000", "a\u0000b", "a\u0001", "ab", "b",
      "\u007f", "\u0080", "\u00ff", "é", "ü", "\u07ff", "\u0800", "日本", "\uffff",
      "\uD83D\uDE00", "\uD800\uDC00", "\uDBFF\uDFFF", "z\u0000\u0000z"};

  // ---------------------------------------------------------------- round trips

  @Test
  void encodeLong_roundTripsEdgeAndRandomValues() {
    Random rnd = new Random(1);
    List<Long> values = new ArrayList<>();
    for (long v : EDGE_LONGS) {
      values.add(v);
    }
    for (int i = 0; i < PAIRS; i++) {
      values.add(randomLong(rnd));
    }
    for (long v : values) {
      byte[] enc = KeyCodec.encodeLong(v);
      assertEquals(8, enc.length);
      assertEquals(v, KeyCodec.decodeLong(enc), () -> "value " + v);
      assertEquals(v, KeyCodec.decodeLong(enc, 0));
    }
  }

  @Test
  void encodeLong_knownLayoutIsBigEndianWithSignFlipped() {
    assertEquals("0000000000000000", hex(KeyCodec.encodeLong(Long.MIN_VALUE)));
    assertEquals("7fffffffffffffff", hex(KeyCodec.encodeLong(-1)));
    assertEquals("8000000000000000", hex(KeyCodec.encodeLong(0)));
    assertEquals("8000000000000001", hex(KeyCodec.encodeLong(1)));
    assertEquals("ffffffffffffffff", hex(KeyCodec.encodeLong(Long.MAX_VALUE)));
  }

  @Test
  void putLong_writesAtOffsetAndDecodeLongReadsAtOffset() {
    byte[] buf = new byte[20];
    Arrays.fill(buf, (byte) 0x5A);
    KeyCodec.putLong(buf, 7, -123456789L);
    assertEquals(-123456789L, KeyCodec.decodeLong(buf, 7));
    for (int i = 0; i < 7; i++) {
      assertEquals(0x5A, buf[i], "byte before the long untouched");
    }
    for (int i = 15; i < 20; i++) {
      assertEquals(0x5A, buf[i], "byte after the long untouched");
    }
  }

  @Test
  void decodeLong_wrongLengthThrowsWithLength() {
    IllegalArgumentException e = assertThrows(IllegalArgumentException.class,
        () -> KeyCodec.decodeLong(new byte[7]));
    assertTrue(e.getMessage().contains("7"), e.getMessage());
    assertThrows(IllegalArgumentException.class, () -> KeyCodec.decodeLong(new byte[9]));
  }

  @Test
  void encodeString_roundTripsEdgeAndRandomValues() {
    Random rnd = new Random(2);
    List<String> values = new ArrayList<>(Arrays.asList(EDGE_STRINGS));
    for (int i = 0; i < PAIRS; i++) {
      values.add(randomString(rnd));
    }
    for (String s : values) {
      byte[] enc = KeyCodec.encodeString(s);
      assertEquals(s, KeyCodec.decodeString(enc), () -> "string " + escape(s));
      assertEquals(enc.length, KeyCodec.terminatedLength(enc, 0, enc.length));
    }
  }

  @Test
  void encodeBytes_roundTripsEdgeAndRandomValues() {
    Random rnd = new Random(3);
    List<byte[]> values = new ArrayList<>(edgeByteArrays());
    for (int i = 0; i < PAIRS; i++) {
      values.add(randomBytes(rnd));
    }
    for (byte[] b : values) {
      byte[] enc = KeyCodec.encodeBytes(b);
      assertArrayEquals(b, KeyCodec.decodeBytes(enc), () -> "bytes " + hex(b));
    }
  }

  @Test
  void encodeBytes_knownLayoutEscapesZeroAndTerminates() {
    assertEquals("0001", hex(KeyCodec.encodeBytes(new byte[0])));
    assertEquals("00ff0001", hex(KeyCodec.encodeBytes(new byte[] {0})));
    assertEquals("01ff00ff7f0001", hex(KeyCodec.encodeBytes(new byte[] {1, (byte) 0xFF, 0, 0x7F})));
    assertEquals("610001", hex(KeyCodec.encodeString("a")));
  }

  // ---------------------------------------------------------------- order

  @Test
  void encodeLong_preservesSignedOrder() {
    Random rnd = new Random(10);
    for (int i = 0; i < PAIRS; i++) {
      long a = pickLong(rnd);
      long b = pickLong(rnd);
      assertSameSign(Long.compare(a, b), KeyCodec.compare(KeyCodec.encodeLong(a), KeyCodec.encodeLong(b)),
          () -> a + " vs " + b);
    }
    for (long a : EDGE_LONGS) {
      for (long b : EDGE_LONGS) {
        assertSameSign(Long.compare(a, b), KeyCodec.compare(KeyCodec.encodeLong(a), KeyCodec.encodeLong(b)),
            () -> a + " vs " + b);
      }
    }
  }

  @Test
  void encodeString_preservesUtf8ByteOrder() {
    Random rnd = new Random(11);
    for (int i = 0; i < PAIRS; i++) {
      String a = pickString(rnd);
      String b = rnd.nextInt(10) == 0 ? a + pickString(rnd) : pickString(rnd);
      assertStringOrder(a, b);
      assertStringOrder(b, a);
    }
    for (String a : EDGE_STRINGS) {
      for (String b : EDGE_STRINGS) {
        assertStringOrder(a, b);
      }
    }
  }

  @Test
  void encodeString_ordersByCodePointNotUtf16() {
    // U+FFFF sorts below U+10000 by code point, but above it in UTF-16 (String.compareTo).
    String bmp = "\uffff";
    String supplementary = "\uD800\uDC00";
    assertTrue(bmp.compareTo(supplementary) > 0, "precondition: UTF-16 order is reversed");
    assertTrue(KeyCodec.compare(KeyCodec.encodeString(bmp), KeyCodec.encodeString(supplementary)) < 0);
  }

  @Test
  void encodeString_shorterSortsBeforeItsExtensions() {
    for (String ext : new String[] {"\u0000", "\u0001", "a", "\u00ff", "\uffff"}) {
      assertTrue(KeyCodec.compare(KeyCodec.encodeString("ab"), KeyCodec.encodeString("ab" + ext)) < 0,
          () -> "ab < ab" + escape(ext));
    }
  }

  @Test
  void encodeBytes_preservesUnsignedByteOrder() {
    Random rnd = new Random(12);
    List<byte[]> edges = edgeByteArrays();
    for (int i = 0; i < PAIRS; i++) {
      byte[] a = pickBytes(rnd, edges);
      byte[] b = rnd.nextInt(10) == 0 ? concat(a, pickBytes(rnd, edges)) : pickBytes(rnd, edges);
      assertBytesOrder(a, b);
      assertBytesOrder(b, a);
    }
    for (byte[] a : edges) {
      for (byte[] b : edges) {
        assertBytesOrder(a, b);
      }
    }
  }

  @Test
  void encodeBytes_sortedEncodingsDecodeToSortedValues() {
    Random rnd = new Random(13);
    List<byte[]> values = new ArrayList<>(edgeByteArrays());
    for (int i = 0; i < 2_000; i++) {
      values.add(randomBytes(rnd));
    }
    List<byte[]> byValue = new ArrayList<>(values);
    byValue.sort(Arrays::compareUnsigned);
    List<byte[]> byEncoding = new ArrayList<>();
    for (byte[] v : values) {
      byEncoding.add(KeyCodec.encodeBytes(v));
    }
    byEncoding.sort(KeyCodec::compare);
    for (int i = 0; i < values.size(); i++) {
      assertArrayEquals(byValue.get(i), KeyCodec.decodeBytes(byEncoding.get(i)), "position " + i);
    }
  }

  // ---------------------------------------------------------------- prefix freedom

  @Test
  void encodeString_isPrefixFree() {
    Random rnd = new Random(20);
    for (int i = 0; i < PAIRS; i++) {
      String a = pickString(rnd);
      // half the time b extends a, the case where a prefix relation would show up
      String b = rnd.nextBoolean() ? a + pickString(rnd) : pickString(rnd);
      if (a.equals(b)) {
        continue;
      }
      assertNotPrefix(KeyCodec.encodeString(a), KeyCodec.encodeString(b));
      assertNotPrefix(KeyCodec.encodeString(b), KeyCodec.encodeString(a));
    }
    for (String a : EDGE_STRINGS) {
      for (String b : EDGE_STRINGS) {
        if (!a.equals(b)) {
          assertNotPrefix(KeyCodec.encodeString(a), KeyCodec.encodeString(b));
        }
      }
    }
  }

  @Test
  void encodeBytes_isPrefixFree() {
    Random rnd = new Random(21);
    List<byte[]> edges = edgeByteArrays();
    for (int i = 0; i < PAIRS; i++) {
      byte[] a = pickBytes(rnd, edges);
      byte[] b = rnd.nextBoolean() ? concat(a, pickBytes(rnd, edges)) : pickBytes(rnd, edges);
      if (Arrays.equals(a, b)) {
        continue;
      }
      assertNotPrefix(KeyCodec.encodeBytes(a), KeyCodec.encodeBytes(b));
      assertNotPrefix(KeyCodec.encodeBytes(b), KeyCodec.encodeBytes(a));
    }
  }

  @Test
  void encodeBytes_keyFollowedByAnythingStillSortsInsideItsRun() {
    // the reason for prefix freedom: a suffix appended to a key never moves it past another key
    Random rnd = new Random(22);
    for (int i = 0; i < 2_000; i++) {
      byte[] a = randomBytes(rnd);
      byte[] b = randomBytes(rnd);
      int cmp = Arrays.compareUnsigned(a, b);
      if (cmp == 0) {
        continue;
      }
      byte[] aSuffixed = concat(KeyCodec.encodeBytes(a), randomBytes(rnd));
      byte[] bSuffixed = concat(KeyCodec.encodeBytes(b), randomBytes(rnd));
      assertSameSign(cmp, KeyCodec.compare(aSuffixed, bSuffixed), () -> hex(a) + " vs " + hex(b));
    }
  }

  // ---------------------------------------------------------------- terminatedLength

  @Test
  void terminatedLength_findsEndOfKeyFollowedByMoreBytes() {
    byte[] key = KeyCodec.encodeBytes(new byte[] {0, 1, 0, (byte) 0xFF});
    byte[] buf = concat(concat(new byte[] {9, 9, 9}, key), new byte[] {0, 1, 0, 0, 7});
    assertEquals(key.length, KeyCodec.terminatedLength(buf, 3, buf.length));
  }

  @Test
  void terminatedLength_ofEmptyKeyIsTwo() {
    assertEquals(2, KeyCodec.terminatedLength(new byte[] {0, 1, 5, 5}, 0, 4));
  }

  @Test
  void terminatedLength_respectsLimit() {
    byte[] key = KeyCodec.encodeString("abc");
    IllegalArgumentException e = assertThrows(IllegalArgumentException.class,
        () -> KeyCodec.terminatedLength(key, 0, key.length - 1));
    assertMessage(e);
    assertThrows(IllegalArgumentException.class, () -> KeyCodec.terminatedLength(key, 0, key.length - 2));
  }

  @Test
  void terminatedLength_escapedZeroIsNotATerminator() {
    byte[] buf = {'a', 0, (byte) 0xFF, 'b', 0, 1};
    assertEquals(6, KeyCodec.terminatedLength(buf, 0, buf.length));
    assertEquals(3, KeyCodec.terminatedLength(buf, 3, buf.length));
  }

  // ---------------------------------------------------------------- decode errors

  @Test
  void decodeBytes_withoutTerminatorThrows() {
    for (byte[] bad : new byte[][] {{}, {'a'}, {'a', 'b'}, {0}, {'a', 0}, {0, (byte) 0xFF}}) {
      IllegalArgumentException e = assertThrows(IllegalArgumentException.class,
          () -> KeyCodec.decodeBytes(bad), () -> hex(bad));
      assertMessage(e);
      assertTrue(e.getMessage().contains("terminator"), e.getMessage());
    }
  }

  @Test
  void decodeBytes_badEscapeThrowsNamingTheBytes() {
    for (int second : new int[] {0x00, 0x02, 0x7F, 0x80, 0xFE}) {
      byte[] bad = {'a', 0, (byte) second, 0, 1};
      IllegalArgumentException e = assertThrows(IllegalArgumentException.class,
          () -> KeyCodec.decodeBytes(bad), () -> hex(bad));
      assertTrue(e.getMessage().contains("bad escape"), e.getMessage());
      assertTrue(e.getMessage().contains(String.format("%02x", second)), e.getMessage());
    }
  }

  @Test
  void decodeBytes_trailingBytesAfterTerminatorThrow() {
    byte[] bad = {'a', 0, 1, 'b'};
    IllegalArgumentException e = assertThrows(IllegalArgumentException.class, () -> KeyCodec.decodeBytes(bad));
    assertMessage(e);
  }

  @Test
  void decodeString_withoutTerminatorThrows() {
    byte[] bad = "abc".getBytes(StandardCharsets.UTF_8);
    assertMessage(assertThrows(IllegalArgumentException.class, () -> KeyCodec.decodeString(bad)));
  }

  // ---------------------------------------------------------------- helpers

  private static void assertStringOrder(String a, String b) {
    int expected = Arrays.compareUnsigned(a.getBytes(StandardCharsets.UTF_8), b.getBytes(StandardCharsets.UTF_8));
    assertSameSign(expected, KeyCodec.compare(KeyCodec.encodeString(a), KeyCodec.encodeString(b)),
        () -> escape(a) + " vs " + escape(b));
  }

  private static void assertBytesOrder(byte[] a, byte[] b) {
    assertSameSign(Arrays.compareUnsigned(a, b), KeyCodec.compare(KeyCodec.encodeBytes(a), KeyCodec.encodeBytes(b)),
        () -> hex(a) + " vs " + hex(b));
  }

  private static void assertSameSign(int expected, int actual, java.util.function.Supplier<String> what) {
    assertEquals(Integer.signum(expected), Integer.signum(actual), what);
  }

  private static void assertNotPrefix(byte[] a, byte[] b) {
    boolean prefix = a.length <= b.length && Arrays.equals(a, 0, a.length, b, 0, a.length);
    assertFalse(prefix, () -> hex(a) + " is a prefix of " + hex(b));
  }

  private static void assertMessage(IllegalArgumentException e) {
    assertNotNull(e.getMessage());
    assertFalse(e.getMessage().isBlank());
  }

  private static long randomLong(Random rnd) {
    return switch (rnd.nextInt(4)) {
      case 0 -> rnd.nextLong();
      case 1 -> rnd.nextInt(2001) - 1000;            // small, both signs, many equal pairs
      case 2 -> rnd.nextLong() >> rnd.nextInt(64);   // every magnitude, both signs
      default -> rnd.nextInt();
    };
  }

  private static long pickLong(Random rnd) {
    return rnd.nextInt(10) == 0 ? EDGE_LONGS[rnd.nextInt(EDGE_LONGS.length)] : randomLong(rnd);
  }

  private static String randomString(Random rnd) {
    int len = rnd.nextInt(6) == 0 ? 0 : rnd.nextInt(12);
    StringBuilder sb = new StringBuilder();
    for (int i = 0; i < len; i++) {
      int kind = rnd.nextInt(8);
      int cp = switch (kind) {
        case 0 -> 0;                                    // NUL
        case 1 -> 1 + rnd.nextInt(2);                   // just above NUL
        case 2 -> 0x80 + rnd.nextInt(0x780);            // 2-byte UTF-8
        case 3 -> 0x800 + rnd.nextInt(0xD800 - 0x800);  // 3-byte UTF-8 below the surrogates
        case 4 -> 0xE000 + rnd.nextInt(0x10000 - 0xE000); // 3-byte UTF-8 above the surrogates
        case 5 -> 0x10000 + rnd.nextInt(0x110000 - 0x10000); // 4-byte UTF-8 (surrogate pairs)
        default -> 'a' + rnd.nextInt(4);                // small alphabet: long common prefixes
      };
      sb.appendCodePoint(cp);
    }
    return sb.toString();
  }

  private static String pickString(Random rnd) {
    return rnd.nextInt(10) == 0 ? EDGE_STRINGS[rnd.nextInt(EDGE_STRINGS.length)] : randomString(rnd);
  }

  private static byte[] randomBytes(Random rnd) {
    int len = rnd.nextInt(6) == 0 ? 0 : rnd.nextInt(10);
    byte[] b = new byte[len];
    for (int i = 0; i < len; i++) {
      // favour 00, 01, FE, FF: the bytes the escaping treats specially or sits next to
      b[i] = switch (rnd.nextInt(6)) {
        case 0 -> 0;
        case 1 -> 1;
        case 2 -> (byte) 0xFF;
        case 3 -> (byte) 0xFE;
        default -> (byte) rnd.nextInt(256);
      };
    }
    return b;
  }

  private static byte[] pickBytes(Random rnd, List<byte[]> edges) {
    return rnd.nextInt(10) == 0 ? edges.get(rnd.nextInt(edges.size())) : randomBytes(rnd);
  }

  private static List<byte[]> edgeByteArrays() {
    return List.of(new byte[0], new byte[] {0}, new byte[] {0, 0}, new byte[] {0, 1}, new byte[] {0, (byte) 0xFF},
        new byte[] {1}, new byte[] {1, 0}, new byte[] {(byte) 0xFE}, new byte[] {(byte) 0xFF},
        new byte[] {(byte) 0xFF, 0}, new byte[] {(byte) 0xFF, (byte) 0xFF}, new byte[] {0x7F}, new byte[] {(byte) 0x80});
  }

  private static byte[] concat(byte[] a, byte[] b) {
    byte[] out = Arrays.copyOf(a, a.length + b.length);
    System.arraycopy(b, 0, out, a.length, b.length);
    return out;
  }

  private static String hex(byte[] b) {
    return HexFormat.of().formatHex(b);
  }

  private static String escape(String s) {
    StringBuilder sb = new StringBuilder("\"");
    s.codePoints().forEach(cp -> {
      if (cp >= 0x20 && cp < 0x7F) {
        sb.appendCodePoint(cp);
      } else {
        sb.append(String.format("\\u{%x}", cp));
      }
    });
    return sb.append('"').toString();
  }
}
