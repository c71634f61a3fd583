package org.sss.bench.synthetic;

import java.util.Locale;

/** Parses and prints sizes and counts with binary suffixes: 16, 64K, 1M, 32MiB, 1GiB (all powers of 1024). */
public final class Sizes {
  private Sizes() {}

  public static long parse(String name, String text) {
    String s = text.trim();
    String u = s.toUpperCase(Locale.ROOT);
    long mult = 1;
    String[][] suffixes = {{"KIB", "1024"}, {"MIB", "1048576"}, {"GIB", "1073741824"}, {"TIB", "1099511627776"},
        {"KI", "1024"}, {"MI", "1048576"}, {"GI", "1073741824"}, {"K", "1024"}, {"M", "1048576"}, {"G", "1073741824"},
        {"T", "1099511627776"}};
    for (String[] sfx : suffixes) {
      if (u.endsWith(sfx[0])) {
        mult = Long.parseLong(sfx[1]);
        u = u.substring(0, u.length() - sfx[0].length()).trim();
        break;
      }
    }
    if (mult == 1 && u.endsWith("B")) {
      u = u.substring(0, u.length() - 1).trim();
    }
    try {
      return Math.multiplyExact(Long.parseLong(u), mult);
    } catch (NumberFormatException | ArithmeticException e) {
      throw new IllegalArgumentException(name + ": '" + text + "' is not a number (suffixes K, M, G, KiB, MiB, GiB allowed)");
    }
  }

  /** 1024-based, exact when possible: 16, 64Ki, 1Mi; bytes as 32MiB. */
  public static String formatCount(long v) {
    String[] units = {"", "K", "M", "G", "T"};
    int i = 0;
    while (i < units.length - 1 && v >= 1024 && v % 1024 == 0) {
      v /= 1024;
      i++;
    }
    return v + units[i];
  }

  public static String format(long bytes) {
    String c = formatCount(bytes);
    char last = c.charAt(c.length() - 1);
    return Character.isDigit(last) ? c + "B" : c + "iB";
  }
}
