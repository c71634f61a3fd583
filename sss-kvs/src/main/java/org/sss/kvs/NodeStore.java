package org.sss.kvs;

import com.google.protobuf.InvalidProtocolBufferException;
import java.io.IOException;
import java.nio.channels.FileChannel;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardOpenOption;
import java.nio.file.attribute.PosixFilePermissions;
import java.util.ArrayList;
import java.util.Collections;
import java.util.Comparator;
import java.util.HashMap;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.Set;
import java.util.TreeSet;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.TimeUnit;
import java.util.stream.Stream;
import org.rocksdb.BlockBasedTableConfig;
import org.rocksdb.Cache;
import org.rocksdb.ColumnFamilyDescriptor;
import org.rocksdb.ColumnFamilyHandle;
import org.rocksdb.ColumnFamilyOptions;
import org.rocksdb.CompressionType;
import org.rocksdb.DBOptions;
import org.rocksdb.HyperClockCache;
import org.rocksdb.Options;
import org.rocksdb.RocksDB;
import org.rocksdb.RocksDBException;
import org.rocksdb.WriteBatch;
import org.rocksdb.WriteOptions;
import org.sss.core.cluster.JobTables;
import org.sss.core.proto.Compression;
import org.sss.core.proto.ErrorCode;
import org.sss.core.proto.TableOptions;

/**
 * One node's storage: a RocksDB database with a column family per table.
 *
 * <h2>Catalog</h2>
 * The default column family is the catalog: {@code table/<name>} maps to the table's
 * {@link TableOptions}. Creating a table writes its catalog entry (with the WAL, synced)
 * after creating the column family; opening the store reopens every column family with the
 * options its entry records, so tables and their options survive restarts. A column family
 * without a catalog entry (a crash between the two steps) is dropped at open.
 *
 * <p>A table normally lives in the column family of its own name. A table created from a
 * {@linkplain SpareFamilies spare} (created ahead of need, so creating a table costs one catalog
 * write) lives in the spare's family, which {@code family/<name>} records.
 *
 * <h2>Durability</h2>
 * Tables created with the WAL keep every acknowledged write across a process crash
 * ({@code kill -9}); the WAL is not fsynced per write, so a machine crash can lose the last
 * writes, as with RocksDB's defaults. Tables with {@code disable_wal} (intermediate data)
 * may lose everything not yet flushed; they can be recomputed.
 */
public final class NodeStore implements AutoCloseable {
  static {
    RocksLibrary.load();
  }

  /** The bound on a node's write-ahead logs (see {@link #open}). */
  public static final long MAX_TOTAL_WAL_BYTES = 128L << 20;

  private static final String CATALOG_PREFIX = "table/";
  private static final String FAMILY_PREFIX = "family/";

  /**
   * Written in the store's directory once it closed with every table flushed, and removed when
   * it opens: a store that opens without it stopped otherwise (a crash, {@code kill -9}), and its
   * tables without a WAL may have lost writes.
   */
  static final String CLOSED_FLUSHED = "closed-flushed";

  private final Path dir;
  /** False when this store stopped without flushing its tables last time (see {@link #CLOSED_FLUSHED}). */
  private final boolean openedAfterFlushedClose;
  /** The store's marks of tables holding unsealed bulk pairs ({@link UnsealedMarks}), in {@code dir/unsealed}. */
  static final String UNSEALED = "unsealed";
  private final UnsealedMarks marks;
  /** The column families marked when the store last stopped (see {@link #tablesThatLostUnsealedPairs}). */
  private final Set<String> unsealedFamilies;
  /** See {@link #owesCatchUp}. */
  private volatile boolean catchUpOwed;
  private final RocksDB db;
  private final DBOptions dbOptions;
  private final ColumnFamilyHandle catalog;
  /** The block cache every table of this node reads through ({@link #BLOCK_CACHE_BYTES}). */
  private final Cache blockCache;
  private final Map<String, StoreTable> tables = new ConcurrentHashMap<>();
  private final Object ddlLock = new Object();
  private final Map<String, CompletableFuture<Void>> pendingDrops = new ConcurrentHashMap<>();
  /** Drops column families and creates spares, one at a time, off the callers' threads. */
  private final ExecutorService background = Executors.newSingleThreadExecutor(r -> {
    Thread t = new Thread(r, "sss-store-background");
    t.setDaemon(true);
    return t;
  });
  private final SpareFamilies spares;
  /** Names that running jobs will give their tables when they commit; guarded by ddlLock. */
  private final Map<String, Reservation> reserved = new HashMap<>();

  /**
   * Jobs abandoned here (aborted, or their coordinator lost): they may create nothing more, so a
   * create that was still queued when the job was cleaned up cannot leave a table behind.
   * Bounded; guarded by ddlLock.
   */
  private final Set<String> abandoned = Collections.newSetFromMap(
      new LinkedHashMap<>() {
        @Override
        protected boolean removeEldestEntry(Map.Entry<String, Boolean> eldest) {
          return size() > 10_000;
        }
      });

  /** A name reserved by a job: its table {@code table} takes the name at commit. */
  private record Reservation(String jobId, String table, boolean replaces) {}

  private NodeStore(Path dir, boolean openedAfterFlushedClose, UnsealedMarks marks, RocksDB db,
                    DBOptions dbOptions, ColumnFamilyHandle catalog, Cache blockCache) throws IOException {
    this.dir = dir;
    this.openedAfterFlushedClose = openedAfterFlushedClose;
    this.marks = marks;
    this.unsealedFamilies = marks.list();
    this.db = db;
    this.dbOptions = dbOptions;
    this.catalog = catalog;
    this.blockCache = blockCache;
    this.spares = new SpareFamilies(db, catalog, blockCache, background);
  }

  /** What the catalog records: tables, the family of each table not in its own, and spares. */
  private record Catalog(Map<String, TableOptions> tables, Map<String, String> families,
                         Map<String, TableOptions> spares) {
    /** The table stored in {@code family}, or null. */
    Map<String, String> ownerByFamily() {
      Map<String, String> owners = new HashMap<>();
      tables.keySet().forEach(t -> owners.put(families.getOrDefault(t, t), t));
      return owners;
    }
  }

  /** Opens (or creates) the store in {@code dir}, reopening every table it holds. */
  public static NodeStore open(Path dir) {
    return open(dir, false);
  }

  /**
   * Like {@link #open(Path)}; with {@code groupReadable} the directory is 0750 rather than 0700,
   * so that its group (a backup or monitoring account) can read it.
   */
  public static NodeStore open(Path dir, boolean groupReadable) {
    for (SizeSetting size : List.of(BLOCK_SIZE, BLOCK_CACHE_SIZE)) {
      if (size.refused() != null) {
        throw new IllegalArgumentException(size.refused());
      }
    }
    Cache blockCache = null;
    DBOptions dbOptions = null;
    List<ColumnFamilyDescriptor> descriptors = new ArrayList<>();
    RocksDB db = null;
    NodeStore store = null;
    try {
      Files.createDirectories(dir);
      keepPrivate(dir, groupReadable);
      clearIngestDir(dir.resolve("ingest"));
      Path dbDir = dir.resolve("rocksdb");
      // a new store has nothing to lose; an old one closed flushed only if it left the marker
      boolean flushedClose = Files.deleteIfExists(dir.resolve(CLOSED_FLUSHED)) || !Files.exists(dbDir.resolve("CURRENT"));
      if (flushedClose) {
        syncDirectory(dir); // the mark must not come back after a power loss: a crash from here on must be seen
      }
      List<byte[]> families;
      try (Options probe = new Options()) {
        families = Files.exists(dbDir.resolve("CURRENT"))
            ? RocksDB.listColumnFamilies(probe, dbDir.toString())
            : List.of(RocksDB.DEFAULT_COLUMN_FAMILY);
      }
      dbOptions = new DBOptions()
          .setCreateIfMissing(true)
          .setCreateMissingColumnFamilies(true)
          .setMaxBackgroundJobs(2)
          .setBytesPerSync(1 << 20)
          .setMaxOpenFiles(512)
          .setKeepLogFileNum(3)
          // Write-ahead logs are freed only when every live table's data in them is flushed; the
          // catalog's few entries would pin every log since its last flush (it never fills a
          // memtable), and with them the logs of dropped tables. Past this total RocksDB
          // flushes the tables holding the oldest log, the catalog included.
          .setMaxTotalWalSize(MAX_TOTAL_WAL_BYTES);
      Catalog catalog = readCatalog(dbDir, families);
      blockCache = newBlockCache();
      Map<String, String> owners = catalog.ownerByFamily();
      descriptors.add(new ColumnFamilyDescriptor(RocksDB.DEFAULT_COLUMN_FAMILY, new ColumnFamilyOptions()));
      List<String> names = new ArrayList<>();
      for (byte[] f : families) {
        String family = new String(f, StandardCharsets.UTF_8);
        if (!family.equals("default")) {
          names.add(family);
          String owner = owners.get(family);
          TableOptions options = owner != null ? catalog.tables().get(owner)
              : catalog.spares().getOrDefault(family, TableOptions.getDefaultInstance());
          descriptors.add(new ColumnFamilyDescriptor(f, columnFamilyOptions(options, blockCache)));
        }
      }
      // a new store makes its first spares with the database, in the same open
      List<String> firstSpares = new ArrayList<>();
      if (families.size() == 1) {
        for (int i = 0; i < SpareFamilies.PER_PROFILE; i++) {
          String family = SpareFamilies.newName();
          firstSpares.add(family);
          descriptors.add(new ColumnFamilyDescriptor(family.getBytes(StandardCharsets.UTF_8),
              columnFamilyOptions(SpareFamilies.BETWEEN_STAGES, blockCache)));
        }
      }
      List<ColumnFamilyHandle> handles = new ArrayList<>();
      db = RocksDB.open(dbOptions, dbDir.toString(), descriptors, handles);
      store = new NodeStore(dir, flushedClose, new UnsealedMarks(dir.resolve(UNSEALED)), db, dbOptions,
          handles.get(0), blockCache);
      for (int i = 0; i < names.size(); i++) {
        String family = names.get(i);
        ColumnFamilyHandle h = handles.get(i + 1);
        String owner = owners.get(family);
        if (owner != null) {
          store.tables.put(owner, new StoreTable(db, owner, family, catalog.tables().get(owner), h, dir.resolve("ingest"),
              store.marks, store.unsealedFamilies.contains(family)));
        } else if (catalog.spares().containsKey(family)) {
          store.spares.adopt(catalog.spares().get(family), new SpareFamilies.Spare(family, h));
        } else {
          // created but never cataloged (a crash between the two steps of create), or
          // dropped but not yet removed (a crash before the background drop ran)
          db.dropColumnFamily(h);
          h.close();
        }
      }
      for (int i = 0; i < firstSpares.size(); i++) {
        store.spares.adoptNew(SpareFamilies.BETWEEN_STAGES,
            new SpareFamilies.Spare(firstSpares.get(i), handles.get(names.size() + 1 + i)));
      }
      for (String family : store.unsealedFamilies) {
        if (!owners.containsKey(family)) {
          store.marks.clear(family); // its table is gone
        }
      }
      return store;
    } catch (RocksDBException | IOException | RuntimeException e) {
      // what was made goes: the store closes its database, options and cache (without the mark of
      // a flushed close: the failed open may follow a crash); before it, each alone
      if (store != null) {
        store.closeDatabase();
      } else {
        if (db != null) {
          db.close();
        }
        if (dbOptions != null) {
          dbOptions.close();
        }
        if (blockCache != null) {
          blockCache.close();
        }
      }
      if (e instanceof RuntimeException r) {
        throw r;
      }
      throw new StoreException(ErrorCode.STORAGE_ERROR, "cannot open the store in " + dir + ": "
          + e.getMessage(), e);
    } finally {
      for (ColumnFamilyDescriptor d : descriptors) {
        d.getOptions().close(); // RocksDB copied them
      }
    }
  }

  private static void syncDirectory(Path dir) throws IOException {
    try (FileChannel d = FileChannel.open(dir, StandardOpenOption.READ)) {
      d.force(true);
    }
  }

  /**
   * Reads the catalog with a read-only open first, because RocksDB takes each column family's
   * options at open and they are recorded in the catalog itself.
   */
  private static Catalog readCatalog(Path dbDir, List<byte[]> families) throws RocksDBException {
    Catalog out = new Catalog(new HashMap<>(), new HashMap<>(), new HashMap<>());
    if (!Files.exists(dbDir.resolve("CURRENT"))) {
      return out;
    }
    List<ColumnFamilyDescriptor> descriptors = List.of(
        new ColumnFamilyDescriptor(RocksDB.DEFAULT_COLUMN_FAMILY, new ColumnFamilyOptions()));
    List<ColumnFamilyHandle> handles = new ArrayList<>();
    try (DBOptions options = new DBOptions();
         RocksDB readOnly = RocksDB.openReadOnly(options, dbDir.toString(), descriptors, handles);
         org.rocksdb.RocksIterator it = readOnly.newIterator(handles.get(0))) {
      for (it.seekToFirst(); it.isValid(); it.next()) {
        String key = new String(it.key(), StandardCharsets.UTF_8);
        if (key.startsWith(CATALOG_PREFIX)) {
          String name = key.substring(CATALOG_PREFIX.length());
          out.tables().put(name, parse(name, it.value()));
        } else if (key.startsWith(FAMILY_PREFIX)) {
          out.families().put(key.substring(FAMILY_PREFIX.length()), new String(it.value(), StandardCharsets.UTF_8));
        } else if (key.startsWith(SpareFamilies.CATALOG_PREFIX)) {
          String family = key.substring(SpareFamilies.CATALOG_PREFIX.length());
          out.spares().put(family, parse(family, it.value()));
        }
      }
    } finally {
      handles.forEach(ColumnFamilyHandle::close);
      descriptors.get(0).getOptions().close();
    }
    return out;
  }

  private static TableOptions parse(String name, byte[] raw) {
    try {
      return TableOptions.parseFrom(raw);
    } catch (InvalidProtocolBufferException e) {
      throw new StoreException(ErrorCode.STORAGE_ERROR, "catalog entry of table '" + name + "' is corrupt", e);
    }
  }

  /**
   * The data directory is its owner's alone (0700): the files RocksDB writes in it (with the
   * process's umask) and the job JARs below it are then out of other local users' reach, whatever
   * their own modes; the cluster secret guards the network, this guards the disk.
   */
  private static void keepPrivate(Path dir, boolean groupReadable) throws IOException {
    try {
      Files.setPosixFilePermissions(dir, PosixFilePermissions.fromString(
          groupReadable ? "rwxr-x---" : "rwx------"));
    } catch (UnsupportedOperationException notPosix) {
      // a file system without POSIX modes: nothing to set
    }
  }

  private static void clearIngestDir(Path ingest) throws IOException {
    if (Files.isDirectory(ingest)) {
      try (Stream<Path> files = Files.list(ingest)) {
        for (Path p : (Iterable<Path>) files::iterator) {
          Files.deleteIfExists(p);
        }
      }
    }
  }

  static CompressionType compressionOf(TableOptions options) {
    return switch (options.getCompression()) {
      case NONE -> CompressionType.NO_COMPRESSION;
      case ZSTD -> CompressionType.ZSTD_COMPRESSION;
      case LZ4, UNRECOGNIZED -> CompressionType.LZ4_COMPRESSION;
    };
  }

  /**
   * The size of a table's SST blocks before compression: 64 KiB (HBase's default), not RocksDB's
   * 4 KiB, since SSS reads tables mostly whole (map tasks, dumps, scans): the table of 1 GiB of
   * text takes about half the disk (LZ4 finds more to share in a larger block), and WordCount
   * over it and a dump run faster; a batched read of random keys whose blocks are not cached costs more.
   * Measured in benchmarks/results/edges/block-size.md. The system property
   * {@code sss.block.bytes} sets another size for the files a node writes from then on.
   */
  static final long BLOCK_BYTES;
  private static final SizeSetting BLOCK_SIZE = SizeSetting.read("sss.block.bytes", 64 << 10, 1024, 1 << 20,
      "a table's SST blocks hold"); // a scan merging many sorted runs holds a block of each

  /**
   * The block cache a node's tables share, outside the heap: 256 MiB unless the system property
   * {@code sss.block.cache.bytes} says otherwise. One per node rather than RocksDB's default of
   * 32 MiB per column family, so that a node's cache memory is bounded whatever number of tables
   * (and spare column families) it holds, and a table read by key gets the cache the others
   * leave unused. Scans do not fill it (see {@code RangeCursor}): it holds what gets read.
   */
  static final long BLOCK_CACHE_BYTES;
  private static final SizeSetting BLOCK_CACHE_SIZE = SizeSetting.read("sss.block.cache.bytes", 256L << 20,
      1L << 20, 1L << 40, "a node's block cache holds");

  static {
    BLOCK_BYTES = BLOCK_SIZE.bytes();
    BLOCK_CACHE_BYTES = BLOCK_CACHE_SIZE.bytes();
  }

  /**
   * The SST files' format of every table: {@link #BLOCK_BYTES} blocks, the rest RocksDB's
   * defaults (RocksJava's {@code uniformCvThreshold} differs from the C++ default and is put
   * back). No block cache: the caller sets one where the files are read.
   */
  static BlockBasedTableConfig tableFormat() {
    return new BlockBasedTableConfig().setBlockSize(BLOCK_BYTES).setUniformCvThreshold(-1);
  }

  /**
   * A new node's block cache: hyper clock, RocksDB's default kind (its entries' size estimated
   * as they come, 0; shards and strictness as RocksDB chooses).
   */
  static Cache newBlockCache() {
    return new HyperClockCache(BLOCK_CACHE_BYTES, 0, -1, false);
  }

  /**
   * RocksDB's options for a table's column family, reading through the node's {@code blockCache};
   * only {@link SpareFamilies#profileOf} fields count.
   */
  static ColumnFamilyOptions columnFamilyOptions(TableOptions options, Cache blockCache) {
    ColumnFamilyOptions cf = new ColumnFamilyOptions()
        .setTableFormatConfig(tableFormat().setBlockCache(blockCache))
        .setCompressionType(compressionOf(options))
        .setWriteBufferSize(64L << 20)
        .setMaxWriteBufferNumber(4)
        .setLevel0FileNumCompactionTrigger(8)
        .setDisableAutoCompactions(options.getDisableAutoCompaction())
        // Large values live in blob files beside the SST files, which then hold only references:
        // a scan merging many sorted runs holds one block per run, and a block holds at least
        // one whole pair, so inline values of 30 MiB cost 30 MiB per run (gigabytes of native
        // memory for one hot key). With blobs a block stays small and a value is read when asked.
        .setEnableBlobFiles(true)
        .setMinBlobSize(StoreTable.LARGE_VALUE_BYTES)
        .setBlobCompressionType(compressionOf(options))
        .setEnableBlobGarbageCollection(true);
    if (options.getCompression() == Compression.ZSTD) {
      cf.setBottommostCompressionType(CompressionType.ZSTD_COMPRESSION);
    }
    return cf;
  }

  private static byte[] catalogKey(String name) {
    return (CATALOG_PREFIX + name).getBytes(StandardCharsets.UTF_8);
  }

  private static byte[] familyKey(String name) {
    return (FAMILY_PREFIX + name).getBytes(StandardCharsets.UTF_8);
  }

  /** A table and whether the create that returned it made it (or found it, with ifAbsent). */
  public record Created(StoreTable table, boolean made) {}

  /**
   * Creates a table.
   *
   * @return the table, or the existing one when {@code ifAbsent} and it exists
   * @throws StoreException {@link ErrorCode#TABLE_EXISTS} when it exists and not {@code ifAbsent}
   */
  public StoreTable create(String name, TableOptions options, boolean ifAbsent) {
    return createReporting(name, options, ifAbsent).table();
  }

  /**
   * {@link #create}, saying whether this call made the table: decided under the lock every
   * create takes, so that of two creates of one name exactly one is told it made it.
   */
  public Created createReporting(String name, TableOptions options, boolean ifAbsent) {
    TableNames.check(name);
    synchronized (ddlLock) {
      StoreTable existing = tables.get(name);
      if (existing != null) {
        if (ifAbsent) {
          return new Created(existing, false);
        }
        throw new StoreException(ErrorCode.TABLE_EXISTS, "table '" + name + "' already exists");
      }
      checkNotReserved(name);
      // Tables with a WAL get a synced catalog entry; for tables without one (intermediate
      // data) a lost entry only means the column family is dropped at the next open.
      try (WriteOptions sync = new WriteOptions().setSync(!options.getDisableWal());
           WriteBatch entry = new WriteBatch()) {
        SpareFamilies.Spare spare = spares.take(SpareFamilies.profileOf(options));
        ColumnFamilyHandle h;
        String family = name;
        if (spare != null) {
          h = spare.handle();
          family = spare.family();
          entry.delete(catalog, SpareFamilies.catalogKey(spare.family()));
          entry.put(catalog, familyKey(name), spare.family().getBytes(StandardCharsets.UTF_8));
        } else {
          awaitPendingDrop(name);
          try (ColumnFamilyOptions cfOptions = columnFamilyOptions(options, blockCache)) {
            h = db.createColumnFamily(new ColumnFamilyDescriptor(name.getBytes(StandardCharsets.UTF_8), cfOptions));
          }
        }
        entry.put(catalog, catalogKey(name), options.toByteArray());
        db.write(sync, entry);
        StoreTable t = new StoreTable(db, name, family, options, h, dir.resolve("ingest"), marks, false);
        tables.put(name, t);
        return new Created(t, true);
      } catch (RocksDBException e) {
        throw new StoreException(ErrorCode.STORAGE_ERROR, "creating table '" + name + "' failed: "
            + e.getMessage(), e);
      }
    }
  }

  private void checkNotReserved(String name) {
    Reservation r = reserved.get(name);
    if (r != null) {
      throw new StoreException(ErrorCode.TABLE_EXISTS, "table '" + name + "' is being written by job "
          + r.jobId() + " (it appears when the job commits)");
    }
  }

  /**
   * Creates table {@code name} for job {@code jobId}; with a {@code commitAs} name, reserves that
   * name for the job until {@link #commit} or {@link #release}: nobody else can create it
   * meanwhile, and it must not exist unless {@code commitReplaces}. Checking and reserving
   * here, under the lock every create takes, leaves no gap for another client's create.
   */
  public StoreTable createForJob(String jobId, String name, TableOptions options, String commitAs,
                                 boolean commitReplaces) {
    synchronized (ddlLock) {
      checkNotAbandoned(jobId);
      if (!commitAs.isEmpty()) {
        TableNames.check(commitAs);
        if (JobTables.isJobTable(commitAs)) {
          throw new StoreException(ErrorCode.BAD_REQUEST, "a job's output cannot be named '" + commitAs
              + "': names starting with '" + JobTables.PREFIX + "' are the engine's own");
        }
        Reservation r = reserved.get(commitAs);
        if (r != null && !r.jobId().equals(jobId)) {
          throw new StoreException(ErrorCode.TABLE_EXISTS, "table '" + commitAs + "' is being written by job "
              + r.jobId() + " (it appears when the job commits)");
        }
        if (!commitReplaces && tables.containsKey(commitAs)) {
          throw new StoreException(ErrorCode.TABLE_EXISTS, "table '" + commitAs
              + "' already exists (drop it, or build the job with overwrite())");
        }
      }
      StoreTable t = create(name, options, false);
      if (!commitAs.isEmpty()) {
        reserved.put(commitAs, new Reservation(jobId, name, commitReplaces));
      }
      return t;
    }
  }

  /**
   * Gives every table job {@code jobId} created with a commit name that name, replacing the
   * table of that name where the job said so, and releases the job's reservations. Each
   * rename, with the drop of the table it replaces, is one synced catalog write: a crash leaves
   * the old table or the new one under the name, never neither. Each table is flushed first:
   * a job writes its tables without the WAL ({@link StoreTable}), so that what is committed
   * survives a crash.
   *
   * @return the number of tables renamed (0 for a job already committed)
   */
  public int commit(String jobId) {
    synchronized (ddlLock) {
      checkNotAbandoned(jobId);
      List<Map.Entry<String, Reservation>> mine = new ArrayList<>();
      for (Map.Entry<String, Reservation> e : reserved.entrySet()) {
        if (e.getValue().jobId().equals(jobId)) {
          mine.add(e);
        }
      }
      for (Map.Entry<String, Reservation> e : mine) {
        String target = e.getKey();
        Reservation r = e.getValue();
        StoreTable t = tables.get(r.table());
        if (t == null) {
          throw new StoreException(ErrorCode.NO_SUCH_TABLE, "job " + jobId + " cannot commit: its table '"
              + r.table() + "' is gone");
        }
        t.flush();
        StoreTable old = tables.get(target);
        if (old != null && !r.replaces()) {
          throw new StoreException(ErrorCode.TABLE_EXISTS, "table '" + target + "' already exists");
        }
        try (WriteOptions sync = new WriteOptions().setSync(true);
             WriteBatch entry = new WriteBatch()) {
          if (old != null) {
            addDropEntries(target, entry); // first: the rename's entries below must win
          }
          entry.delete(catalog, catalogKey(r.table()));
          entry.delete(catalog, familyKey(r.table()));
          entry.put(catalog, catalogKey(target), t.options().toByteArray());
          if (!t.family().equals(target)) {
            entry.put(catalog, familyKey(target), t.family().getBytes(StandardCharsets.UTF_8));
          }
          // the new table takes the name before the old one goes: a reader never finds none
          t.renameTo(target);
          tables.put(target, t);
          tables.remove(r.table());
          try {
            if (old != null) {
              dropLocked(old, entry, sync);
            } else {
              db.write(sync, entry);
            }
          } catch (RocksDBException | RuntimeException x) {
            tables.remove(target, t); // the catalog still says what it said: so does the map
            t.renameTo(r.table());
            tables.put(r.table(), t);
            if (old != null && !old.isDropped()) {
              tables.put(target, old);
            }
            throw x;
          }
        } catch (RocksDBException x) {
          throw new StoreException(ErrorCode.STORAGE_ERROR, "committing table '" + target + "' of job " + jobId
              + " failed: " + x.getMessage(), x);
        }
        reserved.remove(target);
      }
      return mine.size();
    }
  }

  /**
   * Gives up job {@code jobId} here (it failed or was aborted): releases the names it reserved,
   * drops every table of its namespace, and refuses its later creates and commit.
   *
   * @return the tables dropped
   */
  public int abandon(String jobId) {
    synchronized (ddlLock) {
      abandoned.add(jobId);
      reserved.values().removeIf(r -> r.jobId().equals(jobId));
      int dropped = 0;
      for (String name : new ArrayList<>(tables.keySet())) {
        if (JobTables.belongsTo(name, jobId)) {
          drop(name, true);
          dropped++;
        }
      }
      return dropped;
    }
  }

  /**
   * Gives up every job this node holds (its reservations and tables): a node that was out of the
   * in-sync copies can commit none of them, and their reservations would refuse the tables it
   * must make again. Returns how many jobs.
   */
  public int abandonAllJobs() {
    synchronized (ddlLock) {
      Set<String> jobs = new TreeSet<>();
      reserved.values().forEach(r -> jobs.add(r.jobId()));
      for (String name : tables.keySet()) {
        if (JobTables.isJobTable(name)) {
          String rest = name.substring(JobTables.PREFIX.length());
          jobs.add(rest.contains("-") ? rest.substring(0, rest.indexOf('-')) : rest);
        }
      }
      jobs.forEach(this::abandon);
      return jobs.size();
    }
  }

  private void checkNotAbandoned(String jobId) {
    if (abandoned.contains(jobId)) {
      throw new StoreException(ErrorCode.JOB_ABORTED, "job " + jobId + " was aborted on this node");
    }
  }

  /**
   * Drops a table and its data.
   *
   * @return false when it did not exist and {@code ifExists}
   * @throws StoreException {@link ErrorCode#NO_SUCH_TABLE} when it does not exist and not {@code ifExists}
   */
  public boolean drop(String name, boolean ifExists) {
    return drop(name, ifExists, () -> { });
  }

  /**
   * As {@link #drop(String, boolean)}, running {@code unlisted} once the table is gone from the
   * node's list of tables (and before the drop waits for the table's operations under way): what
   * lists tables after it no longer sees the table. Also run when there is no such table.
   */
  public boolean drop(String name, boolean ifExists, Runnable unlisted) {
    synchronized (ddlLock) {
      StoreTable t = tables.get(name);
      if (t == null) {
        unlisted.run();
        if (ifExists) {
          return false;
        }
        throw noSuchTable(name);
      }
      try (WriteOptions sync = new WriteOptions().setSync(!t.options().getDisableWal());
           WriteBatch entry = new WriteBatch()) {
        addDropEntries(name, entry);
        tables.remove(name);
        unlisted.run();
        dropLocked(t, entry, sync);
      } catch (RocksDBException e) {
        throw new StoreException(ErrorCode.STORAGE_ERROR, "dropping table '" + name + "' failed: "
            + e.getMessage(), e);
      }
      return true;
    }
  }

  /** Adds the catalog deletions that drop table {@code name} to {@code entry}. */
  private void addDropEntries(String name, WriteBatch entry) throws RocksDBException {
    entry.delete(catalog, catalogKey(name));
    entry.delete(catalog, familyKey(name));
  }

  /**
   * Drops table {@code t}: writes {@code entry} (holding its catalog
   * deletions) once no operation uses the table, and removes its column family in the
   * background. Called under the DDL lock, once the table is out of {@link #tables}.
   */
  private void dropLocked(StoreTable t, WriteBatch entry, WriteOptions sync)
      throws RocksDBException {
    t.retain(); // for the background column family drop below
    try {
      // waits for the table's operations under way; later ones see it dropped
      t.drop(() -> db.write(sync, entry), background);
    } catch (RocksDBException | RuntimeException e) {
      t.release();
      throw e;
    }
    // The table is gone for every caller from here on; RocksDB's own drop (a MANIFEST and
    // OPTIONS file rewrite, tens of milliseconds) runs in the background. A crash before it
    // ran leaves a column family without a catalog entry, which open() drops.
    // A small table created from a spare is emptied and becomes a spare again instead.
    String family = t.family();
    CompletableFuture<Void> removal = CompletableFuture.runAsync(() -> {
      if (SpareFamilies.isSpare(t.family()) && spares.recycle(t)) {
        return;
      }
      try {
        db.dropColumnFamily(t.handle());
      } catch (RocksDBException e) {
        org.slf4j.LoggerFactory.getLogger(NodeStore.class).warn("dropping column family {} failed: {}",
            family, e.getMessage());
      } finally {
        t.release();
      }
    }, background);
    pendingDrops.put(family, removal);
    removal.whenComplete((r, e) -> pendingDrops.remove(family, removal));
  }

  private static final byte[] LAYOUT_KEY = "layout".getBytes(StandardCharsets.UTF_8);

  /**
   * Checks that this store's data was written under partition layout {@code layout} (see
   * {@code PartitionMap.layout()}), recording it on first use. Where a key lives depends on the
   * layout; a store opened under another one would hide the keys it holds from every task and
   * scan, so the node must not start.
   */
  public void checkLayout(String layout) {
    synchronized (ddlLock) {
      try {
        byte[] recorded = db.get(catalog, LAYOUT_KEY);
        if (recorded == null) {
          try (WriteOptions sync = new WriteOptions().setSync(true)) {
            db.put(catalog, sync, LAYOUT_KEY, layout.getBytes(StandardCharsets.UTF_8));
          }
          return;
        }
        String was = new String(recorded, StandardCharsets.UTF_8);
        if (!was.equals(layout)) {
          throw new StoreException(ErrorCode.BAD_REQUEST, "the data in " + dir + " was written under partition layout "
              + was + " but the cluster file says " + layout + "; the partition count and map cannot change by editing"
              + " the cluster file (start with the file the data was written with)");
        }
      } catch (RocksDBException e) {
        throw new StoreException(ErrorCode.STORAGE_ERROR, "reading the layout of " + dir + " failed: " + e.getMessage(), e);
      }
    }
  }

  /** The partition layout this store's data was written under; null before {@link #checkLayout} first ran. */
  public String recordedLayout() {
    try {
      byte[] recorded = db.get(catalog, LAYOUT_KEY);
      return recorded == null ? null : new String(recorded, StandardCharsets.UTF_8);
    } catch (RocksDBException e) {
      throw new StoreException(ErrorCode.STORAGE_ERROR, "reading the layout of " + dir + " failed: " + e.getMessage(), e);
    }
  }

  /**
   * Records that this store's data is now laid out under {@code layout}: for a rebalance, once
   * the data of every partition the node no longer holds under it is gone. Synced.
   */
  public void recordLayout(String layout) {
    synchronized (ddlLock) {
      try (WriteOptions sync = new WriteOptions().setSync(true)) {
        db.put(catalog, sync, LAYOUT_KEY, layout.getBytes(StandardCharsets.UTF_8));
      } catch (RocksDBException e) {
        throw new StoreException(ErrorCode.STORAGE_ERROR, "recording the layout of " + dir + " failed: "
            + e.getMessage(), e);
      }
    }
  }

  /** Waits for a background drop of {@code name}, so a new table of that name can be created. */
  private void awaitPendingDrop(String name) {
    CompletableFuture<Void> pending = pendingDrops.remove(name);
    if (pending != null) {
      pending.join();
    }
  }

  /** Spare column families ready to become tables. */
  int spareCount() {
    return spares.readyCount();
  }

  /** Waits until the background work queued so far (drops, spares) has run. */
  void awaitBackground() {
    CompletableFuture.runAsync(() -> { }, background).join();
  }

  public Optional<StoreTable> table(String name) {
    return Optional.ofNullable(tables.get(name));
  }

  /** The table, or {@link ErrorCode#NO_SUCH_TABLE}. */
  public StoreTable require(String name) {
    StoreTable t = tables.get(name);
    if (t == null) {
      throw noSuchTable(name);
    }
    return t;
  }

  private static StoreException noSuchTable(String name) {
    return new StoreException(ErrorCode.NO_SUCH_TABLE, "no table named '" + name + "'");
  }

  /** All tables, sorted by name. */
  public List<StoreTable> tables() {
    List<StoreTable> out = new ArrayList<>(tables.values());
    out.sort(Comparator.comparing(StoreTable::name));
    return out;
  }

  public Path dir() {
    return dir;
  }

  /**
   * Writes every user table's memtables to disk and waits for it: what a stop does first, so
   * that tables without a WAL keep every acknowledged write. A job's tables (between stages, and
   * its output before the commit) are left alone: a stopping node fails their job, and its next
   * start drops them.
   *
   * @return the tables flushed
   */
  public int flushAll() {
    int n = 0;
    for (StoreTable t : tables()) {
      if (JobTables.isJobTable(t.name())) {
        continue; // a job's table is written without the WAL and dropped when its node starts again
      }
      try {
        t.flush();
        n++;
      } catch (StoreException e) {
        if (e.code() != ErrorCode.NO_SUCH_TABLE) {
          throw e;
        }
        // dropped meanwhile: nothing to keep
      }
    }
    return n;
  }

  /** Flushes every user table, then closes the database. */
  @Override
  public void close() {
    closeFlushed();
  }

  /**
   * Flushes every user table ({@link #flushAll}), then closes the database.
   *
   * @return the tables flushed
   */
  public int closeFlushed() {
    int flushed = 0;
    boolean complete = false;
    try {
      flushed = flushAll();
      complete = true;
    } catch (StoreException e) {
      org.slf4j.LoggerFactory.getLogger(NodeStore.class).error("flushing before close failed: {}", e.getMessage());
    }
    boolean closed = closeDatabase();
    if (complete && closed && !catchUpOwed) {
      boolean interrupted = Thread.interrupted(); // an interrupted closer would lose the mark (an interruptible channel)
      try {
        Files.writeString(dir.resolve(CLOSED_FLUSHED), "every table was flushed when this store closed\n");
      } catch (IOException e) {
        // the next open counts the close as a crash: only more cautious
      } finally {
        if (interrupted) {
          Thread.currentThread().interrupt();
        }
      }
    }
    return flushed;
  }

  private static final byte[] STORE_ID_KEY = "store-id".getBytes(StandardCharsets.UTF_8);

  /**
   * This store's id: a random one made with the store (or the first time a store made before
   * ids were kept is opened), kept in its catalog. A node that comes back on another store (its
   * data directory lost or replaced) answers with another id, which the cluster's members tell
   * from the one they recorded: that node holds none of the writes it took.
   */
  public String storeId() {
    synchronized (ddlLock) {
      try {
        byte[] id = db.get(catalog, STORE_ID_KEY);
        if (id == null) {
          id = java.util.UUID.randomUUID().toString().getBytes(StandardCharsets.UTF_8);
          try (WriteOptions sync = new WriteOptions().setSync(true)) {
            db.put(catalog, sync, STORE_ID_KEY, id);
          }
        }
        return new String(id, StandardCharsets.UTF_8);
      } catch (RocksDBException e) {
        throw new StoreException(ErrorCode.STORAGE_ERROR, "reading the store id of " + dir + " failed: "
            + e.getMessage(), e);
      }
    }
  }

  /**
   * False when this store last stopped without flushing its tables (a crash, {@code kill -9}):
   * its tables without a WAL may then have lost acknowledged writes.
   */
  public boolean openedAfterFlushedClose() {
    return openedAfterFlushedClose;
  }

  /**
   * The tables that held bulk writers' pairs not sealed yet when this store last stopped, which
   * it may have lost since ({@link UnsealedMarks}): only replicated tables are marked.
   */
  public List<StoreTable> tablesThatLostUnsealedPairs() {
    return tables().stream().filter(t -> unsealedFamilies.contains(t.family())).toList();
  }

  /**
   * Says that this node may lack writes other copies hold (see {@link #openedAfterFlushedClose},
   * {@link #tablesThatLostUnsealedPairs}) and has not caught up yet: until
   * {@link #lostWritesSettled}, a stop leaves neither the closed-flushed mark nor removes the
   * unsealed marks, so that the next start still knows.
   */
  public void owesCatchUp() {
    catchUpOwed = true;
  }

  /**
   * What this node may have lost is decided on: it was decided out of the in-sync copies and
   * catches up (the members' view now records that), or it holds the only copy in sync. The marks
   * found at open go (once nothing is gathered), and a clean stop marks the store flushed again.
   */
  public void lostWritesSettled() {
    catchUpOwed = false;
    tables().forEach(StoreTable::lostPairsSettled);
  }

  /** Closes the database; false when background work still ran, which leaves it open (see below). */
  private boolean closeDatabase() {
    synchronized (ddlLock) {
      spares.close();
      background.shutdown();
      boolean ended = false;
      boolean interrupted = false;
      long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(60);
      while (true) { // an interrupted closer still waits: closing under running work would crash
        try {
          ended = background.awaitTermination(Math.max(0, deadline - System.nanoTime()), TimeUnit.NANOSECONDS);
          break;
        } catch (InterruptedException e) {
          interrupted = true;
        }
      }
      if (interrupted) {
        Thread.currentThread().interrupt();
      }
      for (StoreTable t : tables.values()) {
        t.markDropped();
      }
      tables.clear();
      if (!ended) {
        // work still running uses the database and the cache: closing them under it would crash
        // the process in native code, so they are left to the process's exit
        org.slf4j.LoggerFactory.getLogger(NodeStore.class).warn(
            "store {}: background work did not end within 60 s of the close; the database stays open", dir);
        background.shutdownNow();
        return false;
      }
      try {
        db.syncWal();
      } catch (RocksDBException ignored) {
        // closing anyway
      }
      catalog.close();
      db.close();
      dbOptions.close();
      blockCache.close();
    }
    return true;
  }
}
