package org.sss.client.io;

import java.io.BufferedOutputStream;
import java.io.IOException;
import java.io.InputStream;
import java.io.OutputStream;
import java.nio.channels.FileChannel;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import java.util.function.LongConsumer;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;
import org.sss.client.BulkWriter;
import org.sss.client.ScanOptions;
import org.sss.client.SssClient;
import org.sss.client.TableScan;
import org.sss.client.TableSpec;
import org.sss.client.job.Job;
import org.sss.client.job.JobFailedException;
import org.sss.client.job.JobResult;
import org.sss.client.job.ProgressListener;
import org.sss.client.job.StagedTable;
import org.sss.client.job.TextOutputCommit;
import org.sss.core.api.Mapper;
import org.sss.core.api.Pair;
import org.sss.core.api.Serde;
import org.sss.core.api.Serdes;
import org.sss.core.io.ConcatenatedOffsets;
import org.sss.core.io.TextOutputDir;
import org.sss.core.io.TextSplitReader;
import org.sss.core.keys.KeyCodec;
import org.sss.core.keys.PairTypes;
import org.sss.core.keys.StoredKeys;
import org.sss.core.proto.DataType;
import org.sss.core.proto.ErrorCode;
import org.sss.core.transport.Pipelines;

/**
 * Moving data between files and tables.
 *
 * <ul>
 *   <li>A text file loads as pairs (byte offset, line), as Hadoop's {@code TextInputFormat}
 *       reads it: long keys, the offset of each line's first byte in the file, and the line's
 *       raw bytes (without its end) as a string value.
 *   <li>A directory loads the same way, as the text of its files (every regular file below it
 *       whose name does not start with {@code .} or {@code _}, as a job over files reads them)
 *       concatenated in path order: each line keyed by its offset in that concatenation
 *       ({@link ConcatenatedOffsets}), since offsets in each file would repeat from one file to
 *       the next. The table's key order is then the files' order.
 *   <li>{@link #loadWholeFiles} loads a directory as pairs (file name, content), as Spark's
 *       {@code wholeTextFiles} reads it: string keys (the path relative to the directory), byte
 *       values; the same files as a load of its lines, one pair each. A name that does not decode in the
 *       JVM's file-name encoding is refused before anything is written: decoded, two such names
 *       could become one key and one file would silently replace another.
 *   <li>A dump writes {@code key<TAB>value} lines in key order, printed by the table's types.
 * </ul>
 * The progress callback receives the bytes of every pair moved.
 */
public final class BulkIO {
  private BulkIO() {}

  /** The spec of a table that holds loaded text: (byte offset, line), long keys and string values. */
  public static TableSpec textTable() {
    return TableSpec.of(PairTypes.of(DataType.LONG, DataType.STRING));
  }

  /** The spec of a table that holds a directory's whole files: (file name, content), string keys and byte values. */
  public static TableSpec filesTable() {
    return TableSpec.of(PairTypes.of(DataType.STRING, DataType.BYTES));
  }

  /** Loads a text file or a directory of them, creating the table if needed; returns the pairs loaded. */
  public static long load(SssClient client, String table, Path path, LongConsumer progress) throws IOException {
    return load(client, table, path, DataType.STRING, progress);
  }

  /**
   * As {@link #load(SssClient, String, Path, LongConsumer)}, with the lines stored as
   * {@code lineType}: {@code string} (the default) or {@code bytes} (the same bytes, for a table
   * whose values are typed as bytes).
   */
  public static long load(SssClient client, String table, Path path, DataType lineType, LongConsumer progress)
      throws IOException {
    return load(client, table, path, lineType, TableSpec.Compression.LZ4, false, progress, ProgressListener.none());
  }

  /**
   * Loads a text file, or a directory of them (see the class's comment for the keys), into
   * {@code table}.
   *
   * <p>The text goes into a new table (or replaces the table, with {@code replace}) through a
   * job whose map tasks read the files' splits on the nodes themselves ({@link #loadTextOnNodes}):
   * the table appears whole when the load commits, durable, or not at all. Nodes that cannot see
   * the file (another machine without a shared file system) refuse it, and the client then sends
   * the lines itself, into a {@link StagedTable} on a cluster keeping one copy: filled under a
   * name of a job's namespace and published whole when every line is in, so a load that fails,
   * or whose client dies, leaves no table (the nodes drop the staged one when the client's
   * connection closes); with more copies, into the table under its name (see {@code stages});
   * a {@code replace}
   * is then refused, since it could not leave the old table whole until the new one is complete.
   * Into an existing table without {@code replace} (appending) the client sends the lines too:
   * those pairs are visible as they arrive, and stay if the load fails.
   *
   * @param compression how a table this load makes (new or replaced) is compressed; an existing
   *                    table appended to keeps its own
   * @param progress    bytes of each pair the client sends (the client's path)
   * @param jobProgress the load job's progress (the nodes' path)
   */
  public static long load(SssClient client, String table, Path path, DataType lineType,
                          TableSpec.Compression compression, boolean replace, LongConsumer progress,
                          ProgressListener jobProgress) throws IOException {
    if (lineType != DataType.STRING && lineType != DataType.BYTES) {
      throw new IllegalArgumentException("the lines of a text file load as string or bytes, not "
          + PairTypes.name(lineType));
    }
    TextSplits.files(path); // the files the load reads, or why it cannot, before anything is made
    TableSpec writes = textTable().types(PairTypes.of(DataType.LONG, lineType)).compression(compression);
    boolean exists = exists(client, table);
    if (replace || !exists) {
      try {
        return loadTextOnNodes(client, table, path, lineType, compression, replace, jobProgress);
      } catch (JobFailedException e) {
        if (e.code() != ErrorCode.NO_SUCH_FILE) {
          throw e;
        }
        if (exists) {
          // sent from here, the new lines would go into the old table or replace it before
          // they are all in: neither is a replace that leaves the old table whole until it succeeds
          throw new IllegalArgumentException(e.getMessage() + "; --replace needs the nodes to read the file,"
              + " so the table is replaced whole or not at all: nothing was changed. Drop the table and load"
              + " again to send the file from here", e);
        }
        LOG.warn("{}; sending {} from this machine instead", e.getMessage(), path);
      }
    }
    if (!exists && stages(client)) {
      // filled under a name of its own and published whole: a load that fails, or whose client
      // dies, leaves no table holding part of the file
      return staged(client, table, writes, name -> loadText(client, name, path, writes.types(), progress));
    }
    createOrCheck(client, table, writes, path, "(byte offset, line)");
    try {
      return loadText(client, table, path, writes.types(), progress);
    } catch (IOException | RuntimeException e) {
      if (!exists) {
        dropQuietly(client, table); // a table this load made and did not fill leaves with it
      }
      throw e;
    }
  }

  /**
   * Whether a new table the client fills is staged ({@link StagedTable}): with one copy. With two
   * or more, a load goes on through a node's death (the bulk writer resends to the copies in
   * sync), which a staged table cannot yet: its commit round is bound to the membership it
   * started on, and a node that restarts drops it. Such a load fills the table under its name,
   * dropped if the load fails; a client killed midway leaves it half filled.
   */
  private static boolean stages(SssClient client) {
    return client.spec().replication() == 1;
  }

  /** A load into the table being made, under its staged name; returns the pairs it loaded. */
  private interface StagedLoad {
    long into(String stagedName) throws IOException;
  }

  /** Fills a {@link StagedTable} for {@code table} by {@code load} and publishes it whole. */
  private static long staged(SssClient client, String table, TableSpec spec, StagedLoad load) throws IOException {
    try (StagedTable staged = StagedTable.create(client, table, spec)) {
      long n = load.into(staged.name());
      staged.publish();
      return n;
    }
  }

  private static final Logger LOG = LoggerFactory.getLogger(BulkIO.class);

  private static void dropQuietly(SssClient client, String table) {
    try {
      client.dropTable(table, true);
    } catch (RuntimeException e) {
      LOG.warn("the partly loaded table '{}' could not be dropped: {}", table, e.getMessage());
    }
  }

  private static boolean exists(SssClient client, String table) {
    return client.listTables().stream().anyMatch(t -> t.name().equals(table));
  }

  /**
   * Loads the files below {@code dir} (those a load of its lines reads) as one pair (file name, content) each
   * ({@link #filesTable}), sent by this client: into a new table (staged and published whole on
   * a cluster keeping one copy, as {@link #load} does), or appended to an existing one of those
   * types. Returns the files loaded.
   *
   * @param compression how a table this load makes is compressed; an existing table keeps its own
   */
  public static long loadWholeFiles(SssClient client, String table, Path dir, TableSpec.Compression compression,
                                    LongConsumer progress) throws IOException {
    if (!Files.isDirectory(dir)) {
      throw new IOException("not a directory: " + dir + " (whole files load from a directory)");
    }
    boolean existed = exists(client, table);
    TableSpec files = filesTable().compression(compression);
    if (!existed && stages(client)) {
      return staged(client, table, files, name -> loadDirectory(client, name, dir, progress));
    }
    createOrCheck(client, table, files, dir, "(file name, content)");
    try {
      return loadDirectory(client, table, dir, progress);
    } catch (IOException | RuntimeException e) {
      if (!existed) {
        dropQuietly(client, table); // a table this load made and did not fill leaves with it
      }
      throw e;
    }
  }

  /**
   * Loads a text file, or a directory of them, as a map-only job over their splits (see
   * {@link Job.Builder#inputText}):
   * every node reads its splits in parallel and sends each line to its owner, where it is
   * gathered into sorted runs and ingested as SST files; the commit flushes the table and makes
   * it visible, replacing the old one when {@code replace}. Fails with {@code NO_SUCH_FILE} when
   * a node cannot see the files. A directory's lines are keyed by their offsets in the files'
   * concatenation ({@link ConcatenatedOffsets}).
   *
   * @return the lines loaded
   */
  public static long loadTextOnNodes(SssClient client, String table, Path path, DataType lineType,
                                     TableSpec.Compression compression, boolean replace, ProgressListener progress) {
    // lines move as the bytes they are: decoded into strings, bytes that are not UTF-8 would change
    Serde<?> lines = lineType == DataType.BYTES ? Serdes.BYTES : Serdes.STRING_BYTES;
    Job.Builder b = Job.named("load").inputText(path, lines).output(table).outputCompression(compression);
    b.map(Files.isDirectory(path) ? ConcatenatedOffsets.class : Mapper.Identity.class, Serdes.LONG, lines);
    if (replace) {
      b.overwrite();
    }
    JobResult r = client.submit(b.build()).await(progress);
    return r.stages().get(0).recordsOut();
  }
  /**
   * Creates the table, or checks that the existing one is typed as the load writes: pairs of
   * other types would be unreadable by the table's types (and by every job declared for them).
   */
  private static void createOrCheck(SssClient client, String table, TableSpec writes, Path path, String what) {
    client.createTable(table, writes, true);
    TableSpec has = client.tableStats(table).spec();
    if (!writes.types().equals(has.types()) || has.multiValued()) {
      throw new IllegalArgumentException("table '" + table + "' holds " + has.types()
          + (has.multiValued() ? " (multi-valued)" : "") + ", but loading " + path + " writes " + what
          + " pairs, " + writes.types() + "; nothing was written: load into a new table, or drop this one first"
          + (textLinesFit(writes, has) ? " (or load the lines as bytes: --value bytes)" : ""));
    }
  }

  /** Whether a text file's lines could honestly go into {@code has} as bytes instead. */
  private static boolean textLinesFit(TableSpec writes, TableSpec has) {
    return writes.types().equals(PairTypes.of(DataType.LONG, DataType.STRING))
        && has.types().equals(PairTypes.of(DataType.LONG, DataType.BYTES)) && !has.multiValued();
  }

  /**
   * The client's path: lines sent by the bulk writer with the same keys as the nodes' path,
   * the offset of each line's first byte in the file, or in the concatenation of a directory's
   * files.
   */
  static long loadText(SssClient client, String table, Path path, PairTypes types, LongConsumer progress)
      throws IOException {
    BulkWriter w = client.writer(table, types);
    try (w) {
      long fileOffset = 0; // where the file starts in the files end to end
      for (Path f : TextSplits.files(path)) {
        try (FileChannel ch = FileChannel.open(f)) {
          long size = ch.size();
          TextSplitReader lines = new TextSplitReader(ch, 0, size, size,
              Pipelines.DEFAULT_MAX_FRAME); // no line goes in one request beyond a frame
          while (lines.next()) {
            byte[] line = lines.line();
            w.put(KeyCodec.encodeLong(fileOffset + lines.offset()), line);
            progress.accept(8 + line.length);
          }
          fileOffset += size;
        }
      }
    }
    return w.acknowledged(); // what the nodes stored, not what was read
  }

  static long loadDirectory(SssClient client, String table, Path dir, LongConsumer progress) throws IOException {
    long n = 0;
    List<Path> files = TextSplits.files(dir);
    for (Path f : files) {
      checkNameDecodes(dir, f);
    }
    BulkWriter w = client.writer(table, filesTable().types());
    try (w) {
      for (Path f : files) {
        byte[] content;
        try (InputStream in = Files.newInputStream(f)) {
          content = in.readAllBytes();
        }
        String name = dir.relativize(f).toString();
        w.put(KeyCodec.encodeString(name), content);
        progress.accept(name.length() + content.length);
        n++;
      }
    }
    return w.acknowledged(); // what the nodes stored, not what was read
  }

  /**
   * A file's key is its relative path as text; a path whose bytes do not decode in the JVM's
   * file-name encoding would become another name's text, and so another file's key.
   */
  private static void checkNameDecodes(Path dir, Path file) throws IOException {
    String name = dir.relativize(file).toString();
    if (!dir.resolve(name).equals(file)) {
      throw new IOException("cannot load " + dir + ": the name of '" + file + "' is not valid in this"
          + " JVM's file-name encoding (" + System.getProperty("sun.jnu.encoding") + "), so it cannot be a"
          + " key; rename it, or run with a UTF-8 locale (LC_ALL=C.UTF-8) if it is UTF-8. Nothing was loaded.");
    }
  }

  /** A scanned key without the uniquifier of a multi-valued table ({@link StoredKeys}). */
  public static byte[] userKey(TableSpec table, byte[] scannedKey) {
    return StoredKeys.withoutUniquifier(scannedKey, table.multiValued());
  }

  /**
   * Writes a table into {@code dir} as text part files, as a Hadoop job writes its output: a
   * map-only job whose tasks each read one partition on the node that holds it and write it to
   * its own {@code part-m-NNNNN}, all nodes at once, then {@code _SUCCESS} (see
   * {@link Job.Builder#outputText}). Each part is in key order, and the lines are those of
   * {@link #dump}. Where the nodes cannot see {@code dir} (another machine without a shared file
   * system) or the table's types cannot be printed on them (opaque), the client writes the whole
   * table into one {@code part-r-00000} itself, in key order, and {@code _SUCCESS} after it.
   * {@code dir} must hold nothing unless {@code overwrite}.
   *
   * @param progress the dump job's progress (the nodes' path)
   * @param sent     bytes of each pair the client writes (the client's path)
   * @return the pairs written
   */
  public static long dumpParts(SssClient client, String table, Path dir, boolean overwrite, ProgressListener progress,
                               LongConsumer sent) throws IOException {
    PairTypes types = client.tableStats(table).spec().types();
    Serde<?> keys = printedSerde(types.key());
    Serde<?> values = printedSerde(types.value());
    if (keys != null && values != null) {
      Job.Builder b = Job.named("dump").input(table, keys, values).map(Mapper.Identity.class, keys, values)
          .outputText(dir);
      if (overwrite) {
        b.overwrite();
      }
      try {
        return client.submit(b.build()).await(progress).stages().get(0).recordsOut();
      } catch (JobFailedException e) {
        if (e.code() != ErrorCode.NO_SUCH_FILE && e.code() != ErrorCode.USER_CODE_FAILED) {
          throw e;
        }
        // USER_CODE_FAILED: a pair that does not decode by the table's types, which the client's
        // printer prints as raw bytes (the identity mapper runs no other code)
        LOG.warn("{}; writing {} from this machine instead", e.getMessage().lines().findFirst().orElse(""), dir);
      }
    }
    // the client's path: the same layout and commit, one part in key order
    TextOutputCommit commit = new TextOutputCommit("dump " + table,
        dir.toAbsolutePath().normalize(), overwrite);
    String attempt = "client-" + Long.toHexString(System.nanoTime());
    commit.prepare(attempt);
    try {
      long n = dump(client, table, commit.attemptDir(attempt).resolve(TextOutputDir.partName(false, 0)),
          sent);
      commit.commit(attempt);
      return n;
    } catch (IOException | RuntimeException e) {
      commit.abandon(attempt);
      throw e;
    }
  }

  /**
   * The serde a node prints a key or value of this type with, as {@link PairPrinter} prints it
   * (text kept as its bytes); null for opaque bytes, which only the client's printer prints.
   */
  private static Serde<?> printedSerde(DataType type) {
    return switch (type) {
      case LONG -> Serdes.LONG;
      case DOUBLE -> Serdes.DOUBLE;
      case STRING -> Serdes.STRING_BYTES;
      case BYTES -> Serdes.BYTES;
      default -> null;
    };
  }

  /**
   * Writes a table as {@code key<TAB>value} lines in key order (a multi-valued table: one line
   * per value); returns the pairs written.
   */
  public static long dump(SssClient client, String table, Path out, LongConsumer progress) throws IOException {
    TableSpec o = client.tableStats(table).spec();
    Path parent = out.toAbsolutePath().getParent();
    if (parent != null) {
      Files.createDirectories(parent);
    }
    long n = 0;
    PairPrinter printer = new PairPrinter(o);
    try (OutputStream os = new BufferedOutputStream(Files.newOutputStream(out), 1 << 16);
         TableScan scan = client.scan(table, ScanOptions.inKeyOrder())) {
      while (scan.hasNext()) {
        Pair p = scan.next();
        os.write(printer.keyBytes(p.key()));
        os.write('\t');
        if (o.types().value() == DataType.STRING) {
          os.write(p.value()); // the line as loaded, byte for byte
        } else {
          os.write(printer.value(p.value()).getBytes(StandardCharsets.UTF_8));
        }
        os.write('\n');
        progress.accept(p.key().length + p.value().length);
        n++;
      }
    }
    if (printer.warning(table) != null) {
      System.err.println(printer.warning(table));
    }
    return n;
  }
}
