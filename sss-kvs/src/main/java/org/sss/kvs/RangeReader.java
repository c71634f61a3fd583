package org.sss.kvs;

/** A cursor over one key range of a table, as the table's scans combine them. */
interface RangeReader extends StoreCursor {
  /** Throws the storage error that ended the cursor early, if any. */
  default void checkStatus() {}
}
