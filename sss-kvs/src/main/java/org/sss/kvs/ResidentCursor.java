package org.sss.kvs;

import java.nio.ByteBuffer;

/**
 * A cursor over one key range of a table's resident sorted run ({@link SortedRuns.Resident}),
 * merged with the cursor over the same range in RocksDB when that is not empty.
 *
 * <p>The resident run is newer than everything RocksDB holds for the table (any other write
 * stores it first), so of two equal keys the resident one is the current value and RocksDB's is
 * skipped.
 */
final class ResidentCursor implements RangeReader {
  private final SortedRuns.Resident run;
  private final int end;
  private int at;

  private ResidentCursor(SortedRuns.Resident run, byte[] lower, byte[] upper) {
    this.run = run;
    this.at = lower == null ? 0 : run.lowerBound(lower);
    this.end = upper == null ? run.n : Math.max(at, run.lowerBound(upper));
  }

  /** The range {@code [lower, upper)} of {@code run} over {@code stored} (which this takes over). */
  static RangeReader over(SortedRuns.Resident run, byte[] lower, byte[] upper, RangeReader stored) {
    ResidentCursor newer = new ResidentCursor(run, lower, upper);
    if (!stored.valid()) {
      stored.checkStatus();
      stored.close();
      return newer;
    }
    return new NewerFirst(newer, stored);
  }

  int compareKey(byte[] key) {
    return run.compareKeyAt(at, key);
  }

  @Override
  public boolean valid() {
    return at < end;
  }

  @Override
  public byte[] key() {
    return run.key(at);
  }

  @Override
  public byte[] value() {
    return run.value(at);
  }

  @Override
  public int key(ByteBuffer target) {
    return run.key(at, target);
  }

  @Override
  public int value(ByteBuffer target) {
    return run.value(at, target);
  }

  @Override
  public void next() {
    at++;
  }

  @Override
  public void close() {}

  /** Two sorted cursors merged; on equal keys the newer one's pair, the older one's skipped. */
  private static final class NewerFirst implements RangeReader {
    private final ResidentCursor newer;
    private final RangeReader older;
    private byte[] olderKey;
    /** The cursor at the current pair. */
    private StoreCursor current;

    NewerFirst(ResidentCursor newer, RangeReader older) {
      this.newer = newer;
      this.older = older;
      olderKey = older.valid() ? older.key() : null;
      pick();
    }

    private void pick() {
      if (!newer.valid()) {
        current = olderKey == null ? null : older;
        return;
      }
      if (olderKey == null) {
        current = newer;
        return;
      }
      int c = newer.compareKey(olderKey);
      if (c == 0) {
        advanceOlder(); // shadowed by the newer pair
      }
      current = c <= 0 ? newer : older;
    }

    private void advanceOlder() {
      older.next();
      if (older.valid()) {
        olderKey = older.key();
      } else {
        older.checkStatus();
        olderKey = null;
      }
    }

    @Override
    public boolean valid() {
      return current != null;
    }

    @Override
    public byte[] key() {
      return current == older ? olderKey : newer.key();
    }

    @Override
    public byte[] value() {
      return current.value();
    }

    @Override
    public int key(ByteBuffer target) {
      return current.key(target);
    }

    @Override
    public int value(ByteBuffer target) {
      return current.value(target);
    }

    @Override
    public void next() {
      if (current == older) {
        advanceOlder();
      } else {
        newer.next();
      }
      pick();
    }

    @Override
    public void checkStatus() {
      older.checkStatus();
    }

    @Override
    public void close() {
      older.close();
    }
  }
}
