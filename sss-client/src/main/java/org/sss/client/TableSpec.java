package org.sss.client;

import java.util.Locale;
import java.util.Objects;
import org.sss.core.keys.PairTypes;

/**
 * What a table is created with, and what it keeps until it is dropped: its key and value types,
 * whether a key holds many values, and how it is stored. Immutable; each wither returns a new
 * spec, so specs can be shared as constants ({@code TableSpec.defaults().multiValued(true)}).
 *
 * <p>Ours rather than the wire's message, so that what users write does not move with the
 * protocol: the client turns it into the request the nodes read (and back, for
 * {@link SssClient#listTables}), and nothing else of the wire shows through.
 */
public final class TableSpec {
  /** How a table is compressed on disk. */
  public enum Compression {
    /** Fast: the default for tables users create. */
    LZ4,
    /** None: for data read once, or already compressed. */
    NONE,
    /** Smaller than LZ4, slower. */
    ZSTD
  }

  private static final TableSpec DEFAULTS = new TableSpec(PairTypes.BYTES, false, Compression.LZ4, true, true, 0);

  private final PairTypes types;
  private final boolean multiValued;
  private final Compression compression;
  private final boolean writeAheadLog;
  private final boolean autoCompaction;
  private final int replication;

  private TableSpec(PairTypes types, boolean multiValued, Compression compression, boolean writeAheadLog,
                    boolean autoCompaction, int replication) {
    this.types = Objects.requireNonNull(types, "types");
    this.multiValued = multiValued;
    this.compression = Objects.requireNonNull(compression, "compression");
    this.writeAheadLog = writeAheadLog;
    this.autoCompaction = autoCompaction;
    if (replication < 0) {
      throw new IllegalArgumentException("replication must be 0 (the cluster's) or more, got " + replication);
    }
    this.replication = replication;
  }

  /**
   * Raw bytes for keys and values, one value per key, LZ4, with the write-ahead log and
   * automatic compaction, as many copies as the cluster keeps.
   */
  public static TableSpec defaults() {
    return DEFAULTS;
  }

  /** The defaults with these key and value types: the usual way to name a table's contract. */
  public static TableSpec of(PairTypes types) {
    return DEFAULTS.types(types);
  }

  /** Every put, scan and job must use these types; a write of others is refused. */
  public PairTypes types() {
    return types;
  }

  public TableSpec types(PairTypes types) {
    return new TableSpec(types, multiValued, compression, writeAheadLog, autoCompaction, replication);
  }

  /** Whether a key may hold many values (what a reduce stage reads); otherwise a put replaces. */
  public boolean multiValued() {
    return multiValued;
  }

  public TableSpec multiValued(boolean multiValued) {
    return new TableSpec(types, multiValued, compression, writeAheadLog, autoCompaction, replication);
  }

  public Compression compression() {
    return compression;
  }

  public TableSpec compression(Compression compression) {
    return new TableSpec(types, multiValued, compression, writeAheadLog, autoCompaction, replication);
  }

  /**
   * Whether writes go through the write-ahead log. Without it writes are faster, but a node that
   * crashes loses those since the table's last flush (a node that stops cleanly flushes first).
   */
  public boolean writeAheadLog() {
    return writeAheadLog;
  }

  public TableSpec writeAheadLog(boolean writeAheadLog) {
    return new TableSpec(types, multiValued, compression, writeAheadLog, autoCompaction, replication);
  }

  /**
   * Whether the store compacts the table in the background. Off suits a table written once and
   * read once, whose compaction would only cost disk bandwidth.
   */
  public boolean autoCompaction() {
    return autoCompaction;
  }

  public TableSpec autoCompaction(boolean autoCompaction) {
    return new TableSpec(types, multiValued, compression, writeAheadLog, autoCompaction, replication);
  }

  /**
   * Copies of each partition. Creating a table, 0 means the cluster's replication, and any
   * other number must be it: every writer sends the cluster's number of copies. A listed table
   * ({@link TableStatus#spec()}) says what it keeps: 0 for one copy (as recorded before
   * replication existed), else its number of copies.
   */
  public int replication() {
    return replication;
  }

  public TableSpec replication(int replication) {
    return new TableSpec(types, multiValued, compression, writeAheadLog, autoCompaction, replication);
  }

  @Override
  public boolean equals(Object o) {
    return o instanceof TableSpec s && types.equals(s.types) && multiValued == s.multiValued
        && compression == s.compression && writeAheadLog == s.writeAheadLog && autoCompaction == s.autoCompaction
        && replication == s.replication;
  }

  @Override
  public int hashCode() {
    return Objects.hash(types, multiValued, compression, writeAheadLog, autoCompaction, replication);
  }

  /** {@code TableSpec[key=long value=string, multi-valued, compression=lz4, wal, auto-compaction, replication=0]}. */
  @Override
  public String toString() {
    return "TableSpec[" + types + (multiValued ? ", multi-valued" : "")
        + ", compression=" + compression.name().toLowerCase(Locale.ROOT)
        + (writeAheadLog ? ", wal" : ", no wal") + (autoCompaction ? ", auto-compaction" : ", no auto-compaction")
        + ", replication=" + replication + "]";
  }
}
