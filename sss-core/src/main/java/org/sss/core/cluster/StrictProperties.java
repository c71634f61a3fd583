package org.sss.core.cluster;

import java.io.IOException;
import java.io.Reader;
import java.nio.charset.CharacterCodingException;
import java.nio.charset.StandardCharsets;
import java.nio.file.FileSystemException;
import java.nio.file.Files;
import java.nio.file.NoSuchFileException;
import java.nio.file.Path;
import java.util.Locale;
import java.util.Properties;

/**
 * Reads a configuration file as {@link Properties} do, but refuses a key given twice: Java's
 * loader keeps the last silently, so a second {@code node.0=} line would quietly move a node.
 * Also parses booleans strictly ({@code tls=yes} is a mistake, not false).
 */
public final class StrictProperties {
  private StrictProperties() {}

  /** Loads {@code file}; a repeated key fails naming it. */
  public static Properties load(Path file) throws IOException {
    Properties p = new Properties() {
      @Override
      public synchronized Object put(Object key, Object value) {
        if (containsKey(key)) {
          throw new IllegalArgumentException(file + ": '" + key + "' is given twice");
        }
        return super.put(key, value);
      }
    };
    if (Files.isDirectory(file)) {
      throw new FileSystemException(file.toString(), null, "is a directory, not a configuration file");
    }
    if (!Files.exists(file)) {
      throw new NoSuchFileException(file.toString(), null, "no such configuration file");
    }
    try (Reader r = Files.newBufferedReader(file, StandardCharsets.UTF_8)) {
      p.load(r);
    } catch (CharacterCodingException e) {
      throw new IOException(file + ": not a text configuration file (it is not UTF-8)", e);
    }
    Properties plain = new Properties();
    plain.putAll(p);
    return plain;
  }

  /** {@code true} or {@code false} (any case); anything else fails naming the key. */
  public static boolean parseBoolean(String key, String value) {
    String v = value.trim().toLowerCase(Locale.ROOT);
    if (v.equals("true") || v.equals("false")) {
      return v.equals("true");
    }
    throw new IllegalArgumentException(key + " must be true or false, not '" + value + "'");
  }
}
