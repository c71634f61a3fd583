package org.sss.kvs;

/**
 * A size in bytes that a system property may set, read once when the store's classes load. A
 * value outside its range or not a number is not silently replaced: {@link #refused} says why,
 * and {@link NodeStore#open} refuses to start with it, since a node that quietly ran with
 * another size than its operator set would be hard to explain.
 *
 * @param bytes the size in force (the default when the property is unset or refused)
 * @param refused why the property was not taken, or null
 */
record SizeSetting(long bytes, String refused) {

  /**
   * Reads {@code property}, taking values from {@code min} to {@code max} bytes.
   *
   * @param what what the size is, for the message of a refused value
   */
  static SizeSetting read(String property, long defaultBytes, long min, long max, String what) {
    String setting = System.getProperty(property);
    if (setting == null) {
      return new SizeSetting(defaultBytes, null);
    }
    long bytes = bytesOrZero(setting);
    if (bytes >= min && bytes <= max) {
      return new SizeSetting(bytes, null);
    }
    return new SizeSetting(defaultBytes, property + "=" + setting + ": " + what + " from " + min + " to " + max
        + " bytes (a number of bytes)");
  }

  private static long bytesOrZero(String setting) {
    try {
      return Long.parseLong(setting.trim());
    } catch (NumberFormatException e) {
      return 0;
    }
  }
}
