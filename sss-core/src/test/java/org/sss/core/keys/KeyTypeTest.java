package org.sss.core.keys;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.nio.charset.StandardCharsets;
import java.util.Locale;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;
import org.sss.core.proto.DataType;

class KeyTypeTest {

  @ParameterizedTest
  @ValueSource(strings = {"0", "1", "-1", "42", "-9223372036854775808", "9223372036854775807"})
  void encodeKey_longRoundTrips(String text) {
    byte[] key = KeyType.encodeKey(DataType.LONG, text);
    assertArrayEquals(KeyCodec.encodeLong(Long.parseLong(text)), key);
    assertEquals(text, KeyType.decodeKey(DataType.LONG, key));
  }

  @Test
  void encodeKey_longTrimsWhitespace() {
    assertArrayEquals(KeyCodec.encodeLong(17), KeyType.encodeKey(DataType.LONG, " 17\t"));
  }

  @Test
  void encodeKey_longOrderMatchesNumericOrder() {
    byte[] minus = KeyType.encodeKey(DataType.LONG, "-5");
    byte[] zero = KeyType.encodeKey(DataType.LONG, "0");
    byte[] ten = KeyType.encodeKey(DataType.LONG, "10");
    byte[] nine = KeyType.encodeKey(DataType.LONG, "9");
    assertTrue(KeyCodec.compare(minus, zero) < 0);
    assertTrue(KeyCodec.compare(nine, ten) < 0, "numeric, not lexicographic, order");
  }

  @ParameterizedTest
  @ValueSource(strings = {"", "hello", "a\u0000b", "日本語", "\uD83D\uDE00", " spaced "})
  void encodeKey_stringRoundTrips(String text) {
    byte[] key = KeyType.encodeKey(DataType.STRING, text);
    assertArrayEquals(KeyCodec.encodeString(text), key);
    assertEquals(text, KeyType.decodeKey(DataType.STRING, key));
  }

  @ParameterizedTest
  @ValueSource(strings = {"", "raw", "x\u0000y", "ünï"})
  void encodeKey_bytesRoundTripsPrintableText(String text) {
    byte[] key = KeyType.encodeKey(DataType.BYTES, text);
    assertArrayEquals(KeyCodec.encodeBytes(text.getBytes(StandardCharsets.UTF_8)), key);
    assertEquals(text, KeyType.decodeKey(DataType.BYTES, key));
  }

  @Test
  void decodeKey_bytesPrintsInvalidUtf8AsHex() {
    byte[] key = KeyCodec.encodeBytes(new byte[] {(byte) 0xFF, 0x00, 0x41});
    assertEquals("0xff0041", KeyType.decodeKey(DataType.BYTES, key));
  }

  @Test
  void decodeKey_longOfWrongLengthThrows() {
    assertThrows(IllegalArgumentException.class, () -> KeyType.decodeKey(DataType.LONG, new byte[3]));
  }

  @Test
  void decodeKey_stringWithoutTerminatorThrows() {
    assertThrows(IllegalArgumentException.class,
        () -> KeyType.decodeKey(DataType.STRING, "abc".getBytes(StandardCharsets.UTF_8)));
  }

  @Test
  void encodeValue_longIsEightOrderedBytesAndRoundTrips() {
    byte[] v = KeyType.encodeValue(DataType.LONG, "-77");
    assertArrayEquals(KeyCodec.encodeLong(-77), v);
    assertEquals("-77", KeyType.decodeValue(DataType.LONG, v));
  }

  @Test
  void encodeValue_stringIsPlainUtf8WithoutTerminator() {
    byte[] v = KeyType.encodeValue(DataType.STRING, "añb\u0000");
    assertArrayEquals("añb\u0000".getBytes(StandardCharsets.UTF_8), v);
    assertEquals("añb\u0000", KeyType.decodeValue(DataType.STRING, v));
  }

  @Test
  void encodeValue_bytesIsPlainUtf8AndDecodesToText() {
    byte[] v = KeyType.encodeValue(DataType.BYTES, "payload");
    assertArrayEquals("payload".getBytes(StandardCharsets.UTF_8), v);
    assertEquals("payload", KeyType.decodeValue(DataType.BYTES, v));
  }

  @Test
  void decodeValue_bytesPrintsInvalidUtf8AsHex() {
    assertEquals("0xc328", KeyType.decodeValue(DataType.BYTES, new byte[] {(byte) 0xC3, 0x28}));
    assertEquals("", KeyType.decodeValue(DataType.BYTES, new byte[0]));
  }

  @ParameterizedTest
  @ValueSource(strings = {"abc", "", "1.5", "12x", "9223372036854775808"})
  void encodeKey_nonLongTextThrowsNamingTheText(String text) {
    IllegalArgumentException e = assertThrows(IllegalArgumentException.class,
        () -> KeyType.encodeKey(DataType.LONG, text));
    assertTrue(e.getMessage().contains("'" + text + "'"), e.getMessage());
  }

  @Test
  void encodeValue_nonLongTextThrowsNamingTheText() {
    IllegalArgumentException e = assertThrows(IllegalArgumentException.class,
        () -> KeyType.encodeValue(DataType.LONG, "abc"));
    assertTrue(e.getMessage().contains("abc"), e.getMessage());
  }

  @Test
  void parse_knownNamesInAnyCase() {
    assertEquals(DataType.LONG, KeyType.parse("long"));
    assertEquals(DataType.LONG, KeyType.parse("LONG"));
    assertEquals(DataType.STRING, KeyType.parse("string"));
    assertEquals(DataType.STRING, KeyType.parse("String"));
    assertEquals(DataType.STRING, KeyType.parse("text"));
    assertEquals(DataType.BYTES, KeyType.parse("bytes"));
    assertEquals(DataType.BYTES, KeyType.parse("Bytes"));
  }

  @Test
  void parse_isIndependentOfDefaultLocale() {
    // In a Turkish locale "STRING".toLowerCase() is "strıng" (dotless i).
    Locale saved = Locale.getDefault();
    try {
      Locale.setDefault(Locale.forLanguageTag("tr-TR"));
      assertEquals(DataType.STRING, KeyType.parse("STRING"));
    } finally {
      Locale.setDefault(saved);
    }
  }

  @ParameterizedTest
  @ValueSource(strings = {"int", "", "longs", "unrecognized"})
  void parse_unknownNameThrowsNamingIt(String name) {
    IllegalArgumentException e = assertThrows(IllegalArgumentException.class, () -> KeyType.parse(name));
    assertTrue(e.getMessage().contains("'" + name + "'"), e.getMessage());
  }

  @Test
  void bytesThatLookLikeHex_printAsHex_andTypeBackToTheSameBytes() {
    byte[] text0x = "0xff".getBytes(java.nio.charset.StandardCharsets.UTF_8); // four bytes of text
    byte[] raw = {(byte) 0xFF};                                              // one byte, not text
    String printedText = KeyType.decodeKey(DataType.BYTES, KeyCodec.encodeBytes(text0x));
    String printedRaw = KeyType.decodeKey(DataType.BYTES, KeyCodec.encodeBytes(raw));
    assertEquals("0x30786666", printedText);
    assertEquals("0xff", printedRaw);
    assertArrayEquals(KeyCodec.encodeBytes(text0x), KeyType.encodeKey(DataType.BYTES, printedText));
    assertArrayEquals(KeyCodec.encodeBytes(raw), KeyType.encodeKey(DataType.BYTES, printedRaw));
    assertArrayEquals(raw, KeyType.encodeValue(DataType.BYTES, KeyType.decodeValue(DataType.BYTES, raw)));
    assertArrayEquals("plain".getBytes(java.nio.charset.StandardCharsets.UTF_8), KeyType.encodeValue(DataType.BYTES, "plain"));
  }
}
