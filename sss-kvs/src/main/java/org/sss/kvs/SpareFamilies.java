package org.sss.kvs;

import java.nio.charset.StandardCharsets;
import java.util.ArrayDeque;
import java.util.ArrayList;
import java.util.Deque;
import java.util.HashMap;
import java.util.HexFormat;
import java.util.List;
import java.util.Map;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.ThreadLocalRandom;
import org.rocksdb.Cache;
import org.rocksdb.ColumnFamilyDescriptor;
import org.rocksdb.ColumnFamilyHandle;
import org.rocksdb.RocksDB;
import org.rocksdb.RocksDBException;
import org.rocksdb.WriteOptions;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;
import org.sss.core.cluster.JobTables;
import org.sss.core.proto.DataType;
import org.sss.core.proto.TableOptions;

/**
 * Empty column families created ahead of need, a few per column-family profile.
 *
 * <h2>Why</h2>
 * Creating a column family rewrites RocksDB's MANIFEST and OPTIONS files with syncs: tens of
 * milliseconds, paid for every table of every job (its intermediate tables and its output).
 * A job of milliseconds would spend most of its time there. Taking a spare instead costs one
 * catalog write; the spare is replaced in the background.
 *
 * <h2>Recycling</h2>
 * Dropping a small table that was created from a spare empties its column family (a range
 * delete, a flush and a compaction that leave no file behind) and returns it to the pool, so
 * a steady stream of jobs creates and drops no column family at all. Large tables, tables with
 * open cursors and tables beyond a full pool are dropped as usual.
 *
 * <h2>Profiles</h2>
 * A column family's options are fixed at creation, so a spare only serves a table whose
 * {@linkplain #profileOf profile} (the options RocksDB sees) matches. Profiles are kept warm
 * once asked for: the first table of a profile is created directly and starts the refill. The
 * tables between a job's stages are the exception: a new store has spares of theirs from its
 * creation ({@link #BETWEEN_STAGES}).
 *
 * <h2>Durability</h2>
 * A spare is named {@code #spare-<random>} ('#' is not legal in table names, so spares never
 * collide with tables) and recorded in the catalog under {@code spare/<family>} with its
 * profile, so it is reopened with the right options and reused after a restart. A spare whose
 * entry was lost (a crash right after creating it, or a refill whose call failed midway, which
 * returns no handle for the families it did make) has no owner at open and is dropped.
 */
final class SpareFamilies implements AutoCloseable {
  private static final Logger LOG = LoggerFactory.getLogger(SpareFamilies.class);
  static final String NAME_PREFIX = "#spare-";
  static final String CATALOG_PREFIX = "spare/";
  /** Enough for a job's intermediate tables and its output without waiting for a refill. */
  static final int PER_PROFILE = 4;
  /** Spares kept per profile at most; a recycled family beyond that is dropped. */
  static final int MAX_READY = 2 * PER_PROFILE;
  /** Tables holding more than this are dropped, not emptied for reuse (dropping is cheaper). */
  static final long RECYCLE_MAX_BYTES = 64L << 20;

  /** A spare: its family name and open handle. */
  record Spare(String family, ColumnFamilyHandle handle) {}

  private final RocksDB db;
  private final ColumnFamilyHandle catalog;
  private final Cache blockCache;
  private final ExecutorService background;
  private final Map<TableOptions, Deque<Spare>> ready = new HashMap<>();
  private final Map<TableOptions, Integer> creating = new HashMap<>();
  private boolean closed;

  SpareFamilies(RocksDB db, ColumnFamilyHandle catalog, Cache blockCache, ExecutorService background) {
    this.db = db;
    this.catalog = catalog;
    this.blockCache = blockCache;
    this.background = background;
  }

  /** The options of {@code table} that RocksDB's column family sees (the rest live in the catalog). */
  static TableOptions profileOf(TableOptions table) {
    return TableOptions.newBuilder()
        .setCompression(table.getCompression())
        .setDisableAutoCompaction(table.getDisableAutoCompaction())
        .build();
  }

  static boolean isSpare(String family) {
    return family.startsWith(NAME_PREFIX);
  }

  static byte[] catalogKey(String family) {
    return (CATALOG_PREFIX + family).getBytes(StandardCharsets.UTF_8);
  }

  /**
   * The profile of the tables between a job's stages (read once: no compression, no automatic
   * compaction). Every job of two or more stages makes one on every node, so a new store starts
   * with spares of it, made with the database itself.
   */
  static final TableOptions BETWEEN_STAGES = profileOf(JobTables.betweenStages(DataType.BYTES, DataType.BYTES));

  /** A new spare's family name. */
  static String newName() {
    return NAME_PREFIX + HexFormat.of().formatHex(randomBytes());
  }

  /** Adds a spare made with the database at its creation, recording it in the catalog. */
  synchronized void adoptNew(TableOptions profile, Spare spare) throws RocksDBException {
    try (WriteOptions noSync = new WriteOptions()) {
      db.put(catalog, noSync, catalogKey(spare.family()), profile.toByteArray());
    }
    adopt(profile, spare);
  }

  /** Adds a spare found at open. */
  synchronized void adopt(TableOptions profile, Spare spare) {
    ready.computeIfAbsent(profile, p -> new ArrayDeque<>()).add(spare);
  }

  /**
   * A spare of {@code profile}, or null when none is ready; either way the profile is refilled
   * in the background. The caller owns the returned spare and must remove its catalog entry.
   */
  synchronized Spare take(TableOptions profile) {
    Deque<Spare> spares = ready.computeIfAbsent(profile, p -> new ArrayDeque<>());
    Spare spare = spares.poll();
    if (spares.isEmpty()) {
      refill(profile); // dropped tables normally come back; new families only when they run out
    }
    return spare;
  }

  /**
   * Empties the column family of a dropped table and keeps it as a spare of the table's
   * profile. Runs in the background. Returns false (the caller drops the family) when the
   * table is large, still used by a cursor, or the pool is full; the table is untouched then.
   */
  boolean recycle(StoreTable dropped) {
    TableOptions profile = profileOf(dropped.options());
    synchronized (this) {
      if (closed || ready.computeIfAbsent(profile, p -> new ArrayDeque<>()).size() >= MAX_READY) {
        return false;
      }
    }
    ColumnFamilyHandle h = dropped.handle();
    try {
      long bytes = StoreTable.fileBytes(db, h) + db.getLongProperty(h, "rocksdb.cur-size-all-mem-tables");
      if (bytes > RECYCLE_MAX_BYTES) {
        return false;
      }
    } catch (RocksDBException e) {
      return false;
    }
    h = dropped.detach();
    if (h == null) {
      return false;
    }
    try (WriteOptions noSync = new WriteOptions()) {
      empty(h);
      db.put(catalog, noSync, catalogKey(dropped.family()), profile.toByteArray());
    } catch (RocksDBException e) {
      LOG.warn("emptying column family {} for reuse failed, dropping it: {}", dropped.family(), e.getMessage());
      dropNow(h);
      return true;
    }
    synchronized (this) {
      if (!closed) {
        ready.get(profile).add(new Spare(dropped.family(), h));
        return true;
      }
    }
    h.close();
    return true;
  }

  /**
   * Deletes every key of the family and compacts, so it holds neither data nor tombstones:
   * a table made from it starts as a new one would (empty, statistics at zero).
   */
  private void empty(ColumnFamilyHandle h) throws RocksDBException {
    byte[] first;
    byte[] last;
    try (org.rocksdb.RocksIterator it = db.newIterator(h)) {
      it.seekToFirst();
      if (!it.isValid()) {
        it.status();
        return; // never written: nothing to remove
      }
      first = it.key();
      it.seekToLast();
      last = it.key();
    }
    db.deleteRange(h, first, last);
    db.delete(h, last);
    try (org.rocksdb.FlushOptions flush = new org.rocksdb.FlushOptions().setWaitForFlush(true);
         org.rocksdb.CompactRangeOptions compact = new org.rocksdb.CompactRangeOptions()
             .setBottommostLevelCompaction(org.rocksdb.CompactRangeOptions.BottommostLevelCompaction.kForce)) {
      db.flush(flush, h);
      db.compactRange(h, null, null, compact);
    }
    if (StoreTable.fileBytes(db, h) != 0
        || db.getLongProperty(h, "rocksdb.estimate-num-keys") != 0) {
      throw new RocksDBException("data left after emptying");
    }
  }

  private void dropNow(ColumnFamilyHandle h) {
    try {
      db.dropColumnFamily(h);
    } catch (RocksDBException e) {
      LOG.warn("dropping a column family failed: {}", e.getMessage());
    } finally {
      h.close();
    }
  }

  private void refill(TableOptions profile) {
    if (closed) {
      return;
    }
    int missing = PER_PROFILE - ready.get(profile).size() - creating.getOrDefault(profile, 0);
    if (missing > 0) {
      creating.merge(profile, missing, Integer::sum);
      background.execute(() -> create(profile, missing));
    }
  }

  /**
   * Creates {@code count} spares of {@code profile} in one call: RocksDB rewrites its OPTIONS
   * file (every column family's options, as text) once per call, not once per family, and that
   * rewrite was most of a creation's CPU (a command on a 6-byte file spent 0.3 s of CPU making
   * its nodes' spares one by one).
   */
  private void create(TableOptions profile, int count) {
    synchronized (this) {
      if (closed) {
        return; // before any options are made: the node's cache may be closed by now
      }
    }
    // options of its own for each family (RocksDB copies them), all reading through the node's cache
    List<ColumnFamilyDescriptor> families = new ArrayList<>(count);
    for (int i = 0; i < count; i++) {
      byte[] name = newName().getBytes(StandardCharsets.UTF_8);
      families.add(new ColumnFamilyDescriptor(name, NodeStore.columnFamilyOptions(profile, blockCache)));
    }
    List<Spare> made = new ArrayList<>(count);
    try (WriteOptions noSync = new WriteOptions()) {
      synchronized (this) {
        if (closed) {
          return;
        }
      }
      List<ColumnFamilyHandle> handles = db.createColumnFamilies(families);
      for (int i = 0; i < handles.size(); i++) { // in the order of the descriptors
        made.add(new Spare(new String(families.get(i).getName(), StandardCharsets.UTF_8), handles.get(i)));
      }
      for (Spare spare : made) {
        db.put(catalog, noSync, catalogKey(spare.family()), profile.toByteArray());
      }
    } catch (RocksDBException e) {
      LOG.warn("creating spare column families failed: {}", e.getMessage());
    } finally {
      families.forEach(f -> f.getOptions().close()); // RocksDB copied them
      synchronized (this) {
        creating.merge(profile, -count, Integer::sum);
        for (Spare spare : made) {
          if (closed) {
            spare.handle().close();
          } else {
            ready.get(profile).add(spare);
          }
        }
      }
    }
  }

  private static byte[] randomBytes() {
    byte[] b = new byte[8];
    ThreadLocalRandom.current().nextBytes(b);
    return b;
  }

  /** Spares ready now, over all profiles (for tests and stats). */
  synchronized int readyCount() {
    return ready.values().stream().mapToInt(Deque::size).sum();
  }

  /** Closes the handles of the spares left; they stay in the database for the next open. */
  @Override
  public synchronized void close() {
    closed = true;
    ready.values().forEach(d -> d.forEach(s -> s.handle().close()));
    ready.clear();
  }
}
