package org.sss.kvs;

import java.util.regex.Pattern;
import org.sss.core.proto.ErrorCode;

/** Which table names are legal: they become column family names and appear in file names. */
public final class TableNames {
  private static final Pattern LEGAL = Pattern.compile("[A-Za-z0-9_.-]{1,200}");

  private TableNames() {}

  public static void check(String name) {
    if (name == null || !LEGAL.matcher(name).matches() || name.equals("default")) {
      throw new StoreException(ErrorCode.BAD_REQUEST, "illegal table name '" + name
          + "' (1-200 characters of A-Z a-z 0-9 _ . -, not 'default')");
    }
  }
}
