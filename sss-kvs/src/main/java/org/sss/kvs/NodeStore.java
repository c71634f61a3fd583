package org.sss.kvs;

import com.google.protobuf.InvalidProtocolBufferException;
import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ConcurrentHashMap;
import java.util.stream.Stream;
import org.rocksdb.ColumnFamilyDescriptor;
import org.rocksdb.ColumnFamilyHandle;
import org.rocksdb.ColumnFamilyOptions;
import org.rocksdb.CompressionType;
import org.rocksdb.DBOptions;
import org.rocksdb.Options;
import org.rocksdb.RocksDB;
import org.rocksdb.RocksDBException;
import org.rocksdb.WriteOptions;
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
 * <h2>Durability</h2>
 * Tables created with the WAL keep every acknowledged write across a process crash
 * ({@code kill -9}); the WAL is not fsynced per write, so a machine crash can lose the last
 * writes, as with RocksDB's defaults. Tables with {@code disable_wal} (intermediate data)
 * may lose everything not yet flushed; they can be recomputed.
 */
public final class NodeStore implements AutoCloseable {
  static {
    RocksDB.loadLibrary();
  }

  private static final String CATALOG_PREFIX = "table/";

  private final Path dir;
  private final RocksDB db;
  private final DBOptions dbOptions;
  private final ColumnFamilyHandle catalog;
  private final Map<String, StoreTable> tables = new ConcurrentHashMap<>();
  private final Object ddlLock = new Object();
  private final Map<String, CompletableFuture<Void>> pendingDrops = new ConcurrentHashMap<>();
  private final java.util.concurrent.ExecutorService dropper = java.util.concurrent.Executors.newSingleThreadExecutor(r -> {
    Thread t = new Thread(r, "sss-table-dropper");
    t.setDaemon(true);
    return t;
  });

  private NodeStore(Path dir, RocksDB db, DBOptions dbOptions, ColumnFamilyHandle catalog) {
    this.dir = dir;
    this.db = db;
    this.dbOptions = dbOptions;
    this.catalog = catalog;
  }

  /** Opens (or creates) the store in {@code dir}, reopening every table it holds. */
  public static NodeStore open(Path dir) {
    try {
      Files.createDirectories(dir);
      clearIngestDir(dir.resolve("ingest"));
      Path dbDir = dir.resolve("rocksdb");
      List<byte[]> families;
      try (Options probe = new Options()) {
        families = Files.exists(dbDir.resolve("CURRENT"))
            ? RocksDB.listColumnFamilies(probe, dbDir.toString())
            : List.of(RocksDB.DEFAULT_COLUMN_FAMILY);
      }
      DBOptions dbOptions = new DBOptions()
          .setCreateIfMissing(true)
          .setCreateMissingColumnFamilies(true)
          .setMaxBackgroundJobs(2)
          .setBytesPerSync(1 << 20)
          .setMaxOpenFiles(512)
          .setKeepLogFileNum(3);
      Map<String, TableOptions> catalog = readCatalog(dbDir, families);
      List<ColumnFamilyDescriptor> descriptors = new ArrayList<>();
      descriptors.add(new ColumnFamilyDescriptor(RocksDB.DEFAULT_COLUMN_FAMILY, new ColumnFamilyOptions()));
      List<String> names = new ArrayList<>();
      for (byte[] f : families) {
        String name = new String(f, StandardCharsets.UTF_8);
        if (!name.equals("default")) {
          names.add(name);
          TableOptions options = catalog.getOrDefault(name, TableOptions.getDefaultInstance());
          descriptors.add(new ColumnFamilyDescriptor(f, columnFamilyOptions(options)));
        }
      }
      List<ColumnFamilyHandle> handles = new ArrayList<>();
      RocksDB db = RocksDB.open(dbOptions, dbDir.toString(), descriptors, handles);
      NodeStore store = new NodeStore(dir, db, dbOptions, handles.get(0));
      for (int i = 0; i < names.size(); i++) {
        String name = names.get(i);
        ColumnFamilyHandle h = handles.get(i + 1);
        TableOptions options = catalog.get(name);
        if (options == null) {
          // created but never cataloged: a crash between the two steps of create
          db.dropColumnFamily(h);
          h.close();
        } else {
          store.tables.put(name, new StoreTable(db, name, options, h, dir.resolve("ingest")));
        }
      }
      for (ColumnFamilyDescriptor d : descriptors) {
        d.getOptions().close();
      }
      return store;
    } catch (RocksDBException | IOException e) {
      throw new StoreException(ErrorCode.STORAGE_ERROR, "cannot open the store in " + dir + ": "
          + e.getMessage(), e);
    }
  }

  /**
   * Reads the catalog with a read-only open first, because RocksDB takes each column family's
   * options at open and they are recorded in the catalog itself.
   */
  private static Map<String, TableOptions> readCatalog(Path dbDir, List<byte[]> families)
      throws RocksDBException {
    Map<String, TableOptions> out = new java.util.HashMap<>();
    if (!Files.exists(dbDir.resolve("CURRENT"))) {
      return out;
    }
    List<ColumnFamilyDescriptor> descriptors = List.of(
        new ColumnFamilyDescriptor(RocksDB.DEFAULT_COLUMN_FAMILY, new ColumnFamilyOptions()));
    List<ColumnFamilyHandle> handles = new ArrayList<>();
    try (DBOptions options = new DBOptions();
         RocksDB readOnly = RocksDB.openReadOnly(options, dbDir.toString(), descriptors, handles);
         org.rocksdb.RocksIterator it = readOnly.newIterator(handles.get(0))) {
      byte[] prefix = CATALOG_PREFIX.getBytes(StandardCharsets.UTF_8);
      for (it.seek(prefix); it.isValid(); it.next()) {
        String key = new String(it.key(), StandardCharsets.UTF_8);
        if (!key.startsWith(CATALOG_PREFIX)) {
          break;
        }
        String name = key.substring(CATALOG_PREFIX.length());
        out.put(name, parse(name, it.value()));
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

  private static ColumnFamilyOptions columnFamilyOptions(TableOptions options) {
    ColumnFamilyOptions cf = new ColumnFamilyOptions()
        .setCompressionType(compressionOf(options))
        .setWriteBufferSize(64L << 20)
        .setMaxWriteBufferNumber(4)
        .setLevel0FileNumCompactionTrigger(8)
        .setDisableAutoCompactions(options.getDisableAutoCompaction());
    if (options.getCompression() == Compression.ZSTD) {
      cf.setBottommostCompressionType(CompressionType.ZSTD_COMPRESSION);
    }
    return cf;
  }

  private static byte[] catalogKey(String name) {
    return (CATALOG_PREFIX + name).getBytes(StandardCharsets.UTF_8);
  }

  /**
   * Creates a table.
   *
   * @return the table, or the existing one when {@code ifAbsent} and it exists
   * @throws StoreException {@link ErrorCode#TABLE_EXISTS} when it exists and not {@code ifAbsent}
   */
  public StoreTable create(String name, TableOptions options, boolean ifAbsent) {
    TableNames.check(name);
    synchronized (ddlLock) {
      StoreTable existing = tables.get(name);
      if (existing != null) {
        if (ifAbsent) {
          return existing;
        }
        throw new StoreException(ErrorCode.TABLE_EXISTS, "table '" + name + "' already exists");
      }
      awaitPendingDrop(name);
      // Tables with a WAL get a synced catalog entry; for tables without one (intermediate
      // data) a lost entry only means the column family is dropped at the next open.
      try (ColumnFamilyOptions cfOptions = columnFamilyOptions(options);
           WriteOptions sync = new WriteOptions().setSync(!options.getDisableWal())) {
        ColumnFamilyHandle h = db.createColumnFamily(
            new ColumnFamilyDescriptor(name.getBytes(StandardCharsets.UTF_8), cfOptions));
        db.put(catalog, sync, catalogKey(name), options.toByteArray());
        StoreTable t = new StoreTable(db, name, options, h, dir.resolve("ingest"));
        tables.put(name, t);
        return t;
      } catch (RocksDBException e) {
        throw new StoreException(ErrorCode.STORAGE_ERROR, "creating table '" + name + "' failed: "
            + e.getMessage(), e);
      }
    }
  }

  /**
   * Drops a table and its data.
   *
   * @return false when it did not exist and {@code ifExists}
   * @throws StoreException {@link ErrorCode#NO_SUCH_TABLE} when it does not exist and not {@code ifExists}
   */
  public boolean drop(String name, boolean ifExists) {
    synchronized (ddlLock) {
      StoreTable t = tables.remove(name);
      if (t == null) {
        if (ifExists) {
          return false;
        }
        throw noSuchTable(name);
      }
      t.retain(); // for the background column family drop below
      try (WriteOptions sync = new WriteOptions().setSync(!t.options().getDisableWal())) {
        // waits for the table's operations under way; later ones see it dropped
        t.drop(() -> db.delete(catalog, sync, catalogKey(name)));
      } catch (RocksDBException e) {
        t.release();
        throw new StoreException(ErrorCode.STORAGE_ERROR, "dropping table '" + name + "' failed: "
            + e.getMessage(), e);
      }
      // The table is gone for every caller from here on; RocksDB's own drop (a MANIFEST and
      // OPTIONS file rewrite, tens of milliseconds) runs in the background. A crash before it
      // ran leaves a column family without a catalog entry, which open() drops.
      pendingDrops.put(name, CompletableFuture.runAsync(() -> {
        try {
          db.dropColumnFamily(t.handle());
        } catch (RocksDBException e) {
          org.slf4j.LoggerFactory.getLogger(NodeStore.class).warn("dropping column family {} failed: {}",
              name, e.getMessage());
        } finally {
          t.release();
        }
      }, dropper));
      return true;
    }
  }

  /** Waits for a background drop of {@code name}, so a new table of that name can be created. */
  private void awaitPendingDrop(String name) {
    CompletableFuture<Void> pending = pendingDrops.remove(name);
    if (pending != null) {
      pending.join();
    }
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

  @Override
  public void close() {
    synchronized (ddlLock) {
      dropper.shutdown();
      try {
        dropper.awaitTermination(60, java.util.concurrent.TimeUnit.SECONDS);
      } catch (InterruptedException e) {
        Thread.currentThread().interrupt();
      }
      for (StoreTable t : tables.values()) {
        t.markDropped();
      }
      tables.clear();
      try {
        db.syncWal();
      } catch (RocksDBException ignored) {
        // closing anyway
      }
      catalog.close();
      db.close();
      dbOptions.close();
    }
  }
}
