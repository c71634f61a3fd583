package org.sss.server.store;

import com.google.protobuf.ByteString;
import io.netty.buffer.ByteBuf;
import io.netty.buffer.ByteBufAllocator;
import java.io.IOException;
import java.nio.ByteBuffer;
import java.util.ArrayList;
import java.util.List;
import java.util.function.Consumer;
import java.util.function.Supplier;
import java.util.regex.Pattern;
import org.sss.core.cluster.ClusterSpec;
import org.sss.core.cluster.JobTables;
import org.sss.core.cluster.PartitionMap;
import org.sss.core.cluster.ReplicaPlacement;
import org.sss.core.keys.StoredKeys;
import org.sss.core.proto.Ack;
import org.sss.core.proto.CountResult;
import org.sss.core.proto.PartitionDigest;
import org.sss.core.proto.CreateTable;
import org.sss.core.proto.ErrorCode;
import org.sss.core.proto.GetResult;
import org.sss.core.proto.Request;
import org.sss.core.proto.Response;
import org.sss.core.proto.ScanOpen;
import org.sss.core.proto.SealBulk;
import org.sss.core.proto.TableList;
import org.sss.core.proto.ViewAnswer;
import org.sss.core.transport.Frame;
import org.sss.core.transport.PairBlock;
import org.sss.core.transport.Pipelines;
import org.sss.kvs.KeyRanges;
import org.sss.kvs.NodeStore;
import org.sss.kvs.StoreCursor;
import org.sss.kvs.StoreException;
import org.sss.kvs.StoreTable;
import org.sss.kvs.TableBatch;
import org.sss.server.membership.Membership;

/**
 * The store operations of the wire protocol, on one node. Each method runs on a worker thread
 * (never on an event loop: RocksDB calls block), takes the request and its body, and returns
 * the response frame. Failures are {@link StoreException}s carrying the code the client sees.
 */
public final class KvsService {
  private final NodeStore store;
  private final PartitionMap partitionMap;
  private final int nodeId;
  private final int maxValueBytes;
  private final MultiValued multiValued;
  /**
   * The most key and value bytes one answer may carry: an answer over the client's frame limit
   * (64 MiB, whatever this node's own limit for requests) would close the connection it shares
   * with other work (a job's coordinator among them).
   */
  /** Where each partition's copies are: a node answers only for the copies it holds. */
  private final ReplicaPlacement placement;
  private final int answerBudget = Pipelines.DEFAULT_MAX_FRAME - (1 << 20);

  /** This node's part in a replicated cluster's membership; yields null with one copy. */
  private final Supplier<Membership> membership;

  public KvsService(NodeStore store, ClusterSpec cluster, int nodeId, int maxValueBytes) {
    this(store, cluster, nodeId, maxValueBytes, () -> null);
  }

  /**
   * {@code membership}: this node's part in the membership, which answers {@code GetView} and
   * admits reads and writes of replicated tables (null with one copy).
   */
  public KvsService(NodeStore store, ClusterSpec cluster, int nodeId, int maxValueBytes,
                    Supplier<Membership> membership) {
    this.membership = membership;
    this.store = store;
    this.partitionMap = cluster.partitionMap();
    this.placement = cluster.placement();
    this.nodeId = nodeId;
    this.maxValueBytes = maxValueBytes;
    this.multiValued = new MultiValued();
  }

  public NodeStore store() {
    return store;
  }

  /** Runs one request; {@code body} is released by the caller. */
  public Frame<Response> handle(Request req, ByteBuf body, ScanRegistry scans, ByteBufAllocator alloc) {
    Response.Builder ok = Response.newBuilder().setId(req.getId()).setCode(ErrorCode.OK);
    switch (req.getOpCase()) {
      case CREATE_TABLE -> {
        var c = req.getCreateTable();
        checkNamespace(c);
        // a table of a type no write can declare could never be written (nor printed)
        StoreTable.checkKnown(c.getOptions().getKeyTypeValue(), c.getOptions().getValueTypeValue(),
            "table '" + c.getTable() + "'", "it was not created");
        NodeStore.Created created;
        try (var admitted = admitTableChange(c.getViewEpoch(), c.getTable())) {
          created = create(c);
        }
        return Frame.of(ok.setTable(created.table().info().toBuilder().setCreated(created.made())).build());
      }
      case GET_VIEW -> {
        Membership m = membership.get();
        return Frame.of(ok.setView(m == null ? ViewAnswer.getDefaultInstance() : m.answer()).build());
      }
      case COPY_AGAIN -> {
        Membership m = membership.get();
        if (m == null) {
          throw new StoreException(ErrorCode.BAD_REQUEST, "node " + nodeId + " is in a cluster of one copy: there is no"
              + " other copy to copy its partitions from");
        }
        try {
          m.copyAgain(req.getCopyAgain().getReason());
        } catch (IOException e) {
          throw new StoreException(ErrorCode.NOT_SERVING, "node " + nodeId + ": no answer from the members on taking it"
              + " out (" + e.getMessage() + "); it does not serve until they have decided (it asks again itself)");
        }
        return Frame.of(ok.setAck(Ack.getDefaultInstance()).build());
      }
      case DROP_TABLE -> {
        boolean dropped;
        try (var admitted = admitTableChange(req.getDropTable().getViewEpoch(), req.getDropTable().getTable())) {
          // the view is held until the table is unlisted, not while the drop waits for the
          // table's operations (a long scan): the membership must not wait on a scan
          dropped = store.drop(req.getDropTable().getTable(), req.getDropTable().getIfExists(),
              admitted == null ? () -> { } : admitted::close);
        }
        return Frame.of(ok.setAck(Ack.newBuilder().setPairs(dropped ? 1 : 0)).build());
      }
      case LIST_TABLES -> {
        TableList.Builder list = TableList.newBuilder();
        for (StoreTable t : store.tables()) {
          t.infoIfLive().ifPresent(list::addTables);
        }
        return Frame.of(ok.setTables(list).build());
      }
      case TABLE_STATS -> {
        return Frame.of(ok.setTable(readTable(req.getTableStats().getTable()).info()).build());
      }
      case PUT_BATCH -> {
        Ack written;
        try {
          written = putBatch(req, body);
        } catch (StoreException e) {
          throw e.code() == ErrorCode.NO_SUCH_TABLE ? whileCatchingUp(req.getPutBatch().getTable(), e) : e;
        }
        return Frame.of(ok.setAck(written).build());
      }
      case SEAL_BULK -> {
        sealBulk(req.getSealBulk());
        return Frame.of(ok.setAck(Ack.getDefaultInstance()).build());
      }
      case GET -> {
        StoreTable t = readTable(req.getGet().getTable());
        Runnable held = admitRead(t);
        try {
          byte[] key = checkKey(t, req.getGet().getKey().toByteArray());
          GetResult.Builder g = GetResult.newBuilder();
          if (t.options().getMultiValued()) {
            List<byte[]> values = MultiValued.values(t, key, answerBudget);
            values.forEach(v -> g.addValues(ByteString.copyFrom(v)));
            if (!values.isEmpty()) {
              g.setFound(true).setValue(g.getValues(0));
            }
          } else {
            byte[] v = t.get(key);
            g.setFound(v != null);
            if (v != null) {
              g.setValue(ByteString.copyFrom(v));
            }
          }
          return Frame.of(ok.setGet(g).build());
        } finally {
          held.run();
        }
      }
      case MULTI_GET -> {
        return multiGet(req, body, ok, alloc);
      }
      case DELETE -> {
        StoreTable t = writeTable(req.getDelete().getTable(), w -> checkReplication(w, req.getDelete().getReplication()));
        List<byte[]> keys = readKeys(body, req.getDelete().getKeyCount());
        keys.forEach(k -> checkKey(t, k));
        t.sealRuns(); // not under the membership's view below (see putBatch)
        try (var admitted = admitWrite(t, req.getDelete().getViewEpoch())) {
          Runnable delete = () -> t.delete(t.options().getMultiValued() ? MultiValued.storedKeys(t, keys) : keys);
          if (admitted == null) {
            delete.run();
          } else {
            admitted.apply(t.name(), () -> keys, delete);
          }
        } catch (StoreException e) {
          throw e.code() == ErrorCode.NO_SUCH_TABLE ? whileCatchingUp(t.name(), e) : e;
        }
        return Frame.of(ok.setAck(Ack.newBuilder().setPairs(keys.size())).build());
      }
      case SCAN_OPEN -> {
        return scans.open(openCursor(req.getScanOpen()), req.getScanOpen(), ok, alloc);
      }
      case SCAN_NEXT -> {
        return scans.next(req.getScanNext().getCursor(), ok, alloc);
      }
      case SCAN_CLOSE -> {
        scans.close(req.getScanClose().getCursor());
        return Frame.of(ok.setAck(Ack.getDefaultInstance()).build());
      }
      case COUNT -> {
        StoreTable t = readTable(req.getCount().getTable());
        Runnable held = admitRead(t);
        try {
          long n = 0;
          CountResult.Builder result = CountResult.newBuilder();
          List<Integer> counted = req.getCount().getPartitionsCount() == 0
              ? partitionMap.partitionsOf(nodeId) : req.getCount().getPartitionsList();
          for (int partition : counted) {
            if (partition < 0 || partition >= partitionMap.partitions()) { // a uint32 past 2^31 reads negative
              throw new StoreException(ErrorCode.BAD_REQUEST, "no partition " + Integer.toUnsignedString(partition) + " in a cluster of "
                  + partitionMap.partitions());
            }
            checkHeld(t, partition);
            if (req.getCount().getDigest()) {
              PartitionDigest d = CopyDigest.of(t, partition);
              result.addDigests(d);
              n += d.getPairs();
            } else {
              byte[][] range = KeyRanges.partition(partition, new byte[0]);
              n += t.count(range[0], range[1]);
            }
          }
          return Frame.of(ok.setCount(result.setPairs(n)).build());
        } finally {
          held.run();
        }
      }
      default -> throw new StoreException(ErrorCode.BAD_REQUEST, "unknown operation " + req.getOpCase());
    }
  }

  /**
   * The engine's namespace ({@link JobTables}) is the engine's: a name in it is created only by
   * the job it names, and a job creates only names in it. So a user's table is never taken for
   * a job's leftover and dropped, and a job's cleanup never drops a user's table.
   */
  private static void checkNamespace(CreateTable c) {
    String job = c.getJobId();
    if (!job.isEmpty() && !JOB_ID.matcher(job).matches()) {
      throw new StoreException(ErrorCode.BAD_REQUEST, "illegal job id '" + job + "'");
    }
    if (JobTables.isJobTable(c.getTable()) && !JobTables.belongsTo(c.getTable(), job)) {
      throw new StoreException(ErrorCode.BAD_REQUEST, "table names starting with '" + JobTables.PREFIX
          + "' are reserved for the engine's own tables: choose another name for '" + c.getTable() + "'");
    }
    if (!job.isEmpty() && !JobTables.belongsTo(c.getTable(), job)) {
      throw new StoreException(ErrorCode.BAD_REQUEST, "job " + job + " may create only tables named "
          + JobTables.PREFIX + job + "-..., not '" + c.getTable() + "'");
    }
  }

  private static final Pattern JOB_ID = Pattern.compile("[A-Za-z0-9]{1,64}");

  /**
   * Validates the whole batch before writing any of it, so that a refused batch leaves nothing
   * behind; then applies it as one atomic RocksDB write.
   *
   * <p>Both passes work on the request body in place: validation reads only lengths and
   * partition numbers, and when the body is one direct buffer (as Netty delivers it) the pairs
   * go from it straight into the native write batch, without a Java array per key or value.
   */
  private Ack putBatch(Request req, ByteBuf body) {
    StoreTable t = writeTable(req.getPutBatch().getTable(), w -> {
      w.checkWritable(req.getPutBatch().getKeyTypeValue(), req.getPutBatch().getValueTypeValue());
      checkReplication(w, req.getPutBatch().getReplication());
    });
    int expected = req.getPutBatch().getPairCount();
    int pairs = 0;
    ByteBuf in = body.duplicate();
    while (in.isReadable()) {
      int keyLength = PairBlock.readLength(in);
      int keyAt = in.readerIndex();
      in.skipBytes(keyLength);
      int valueLength = PairBlock.readLength(in);
      in.skipBytes(valueLength);
      checkKey(t, in, keyAt, keyLength);
      if (valueLength > maxValueBytes) {
        throw new StoreException(ErrorCode.VALUE_TOO_LARGE, "value of " + valueLength
            + " bytes exceeds the limit of " + maxValueBytes + " bytes (table '" + t.name() + "')");
      }
      pairs++;
    }
    if (pairs != expected) {
      throw new StoreException(ErrorCode.BAD_REQUEST, "put batch announced " + expected
          + " pairs but carried " + pairs);
    }
    long session = req.getPutBatch().getBulkSession();
    boolean bulk = session != 0 && !t.options().getMultiValued();
    if (!bulk) {
      // what bulk writers gathered is stored first here, not under the membership's view below
      // (a write through the memtable stores it first): a view change must not wait for it
      t.sealRuns();
    }
    long gathered; // the table's store failures when the batch was gathered; NOT_GATHERED else
    // a bulk batch marks its table as holding unsealed pairs first: that touches the disk, not under the view
    try (var entered = bulk ? t.enterBulk() : null;
         var admitted = admitWrite(t, req.getPutBatch().getViewEpoch())) {
      if (admitted == null || !admitted.catchingUp()) {
        gathered = writeBatch(t, body, pairs, session);
      } else {
        // a node catching up records each live write's keys as it applies it (through the memtable)
        admitted.apply(t.name(), () -> readKeys(body, expected), () -> writeBatch(t, body, expected, 0));
        gathered = NOT_GATHERED;
      }
    }
    if (gathered != NOT_GATHERED) {
      try {
        t.drainBulk(gathered); // into the runs, and a run that filled stored: no longer under the view
      } catch (StoreException e) {
        throw e.code() == ErrorCode.NO_SUCH_TABLE ? e : lost(t, e);
      }
    }
    return Ack.newBuilder().setPairs(pairs).setGathered(gathered != NOT_GATHERED).build();
  }

  /**
   * Stores what bulk writers sent a table ({@link StoreTable#storeBulk}), once the node has
   * checked that it holds every pair the writer's session had acknowledged: one that restarted
   * since lost what it had gathered, and says so rather than seal less.
   */
  private void sealBulk(SealBulk seal) {
    StoreTable t = writeTable(seal.getTable(), w -> { });
    boolean sealed;
    try {
      sealed = t.sealBulk(seal.getSession(), seal.getPairs(), seal.getLast());
    } catch (StoreException e) {
      throw e.code() == ErrorCode.NO_SUCH_TABLE ? e : lost(t, e);
    }
    if (!sealed) {
      throw new StoreException(ErrorCode.WRITES_LOST, "node " + nodeId + " holds " + t.bulkPairs(seal.getSession())
          + " of the " + seal.getPairs() + " pairs a bulk writer sent table '" + t.name() + "' since its last"
          + " flush (it restarted, failed to store them, or the table was made again): they must be sent again");
    }
  }

  /**
   * A failure to store what bulk writers sent, which may have thrown some of it away, as the
   * answer that has a replicated writer send it again ({@code WRITES_LOST}), naming the cause.
   */
  private StoreException lost(StoreTable t, StoreException e) {
    return new StoreException(ErrorCode.WRITES_LOST, "node " + nodeId + " could not store what bulk writers sent table '"
        + t.name() + "' since their last flush (" + e.getMessage() + "): they must be sent again", e);
  }

  /**
   * Applies a validated put batch as one atomic write; a bulk writer's (session not 0) is
   * gathered with the session's earlier pairs instead, to be stored as SST files
   * ({@link StoreTable#writeBulk}), except in a multi-valued table, whose pairs each get a
   * uniquifier here. Returns {@link #NOT_GATHERED}, or, for gathered pairs (they count in the
   * session), the table's store failures so far ({@link StoreTable#drainBulk}).
   */
  private long writeBatch(StoreTable t, ByteBuf body, int pairs, long session) {
    if (session != 0 && !t.options().getMultiValued()) {
      byte[] block = new byte[body.readableBytes()];
      body.getBytes(body.readerIndex(), block);
      return t.writeBulk(block, block.length, pairs, session);
    }
    ByteBuf in;
    try (TableBatch b = t.newBatch()) {
      if (t.options().getMultiValued()) {
        // each value is a value of its own: the key gets a uniquifier, as shuffled pairs do
        PairBlock.forEach(body.duplicate(), (k, v) -> b.put(multiValued.withUniquifier(k), v));
      } else if (body.isDirect() && body.nioBufferCount() == 1) {
        ByteBuffer nio = body.nioBuffer(body.readerIndex(), body.readableBytes());
        ByteBuffer key = nio.duplicate();
        ByteBuffer value = nio.duplicate();
        int origin = body.readerIndex() - nio.position();
        in = body.duplicate();
        while (in.isReadable()) {
          int keyLength = PairBlock.readVarint(in);
          window(key, in.readerIndex() - origin, keyLength);
          in.skipBytes(keyLength);
          int valueLength = PairBlock.readVarint(in);
          window(value, in.readerIndex() - origin, valueLength);
          in.skipBytes(valueLength);
          b.put(key, value);
        }
      } else {
        PairBlock.forEach(body.duplicate(), b::put);
      }
      b.commit();
    }
    return NOT_GATHERED;
  }

  /** {@link #writeBatch}'s answer for pairs written through the memtable. */
  private static final long NOT_GATHERED = -1;

  private static void window(ByteBuffer b, int position, int length) {
    b.limit(position + length);
    b.position(position);
  }

  /** {@link #checkKey(StoreTable, byte[])} for a stored key at {@code in[at, at + length)}. */
  private void checkKey(StoreTable t, ByteBuf in, int at, int length) {
    int partition = StoredKeys.partitionAt(in, at, length);
    checkKey(t, length, partition);
    checkHash(partitionMap.partitionOf(in.nioBuffer(at + StoredKeys.PREFIX_BYTES, length - StoredKeys.PREFIX_BYTES)),
        partition);
  }

  private byte[] checkKey(StoreTable t, byte[] storedKey) {
    int partition = StoredKeys.partitionOrMinusOne(storedKey);
    checkKey(t, storedKey.length, partition);
    checkHash(partitionMap.partitionOf(storedKey, StoredKeys.PREFIX_BYTES,
        storedKey.length - StoredKeys.PREFIX_BYTES), partition);
    return storedKey;
  }

  /**
   * A client's key must name the partition it hashes to: one stored under another partition
   * is found by no get and shows twice in scans (a client whose cluster file has another
   * partition count).
   */
  private static void checkHash(int hashed, int named) {
    if (hashed != named) {
      throw new StoreException(ErrorCode.BAD_REQUEST, "a key hashing to partition " + hashed + " was sent as partition "
          + named + " (does the client use this cluster's file?)");
    }
  }

  /**
   * A stored key must carry a partition of which this node holds one of the table's copies: a
   * pair routed here by a client with another partition map would be stored where no task and
   * no scan of its partition looks, and a read of a copy this node does not keep would answer
   * "absent" for a pair that exists.
   */
  private void checkKey(StoreTable t, int length, int partition) {
    if (partition < 0) {
      throw new StoreException(ErrorCode.BAD_REQUEST, "stored key of " + length
          + " bytes lacks the 2-byte partition prefix");
    }
    if (length > maxValueBytes) {
      throw new StoreException(ErrorCode.VALUE_TOO_LARGE, "key of " + length
          + " bytes exceeds the limit of " + maxValueBytes + " bytes");
    }
    if (partition >= partitionMap.partitions()) {
      throw new StoreException(ErrorCode.BAD_REQUEST, "partition " + partition + " does not exist (P="
          + partitionMap.partitions() + ")");
    }
    checkHeld(t, partition);
  }

  private void checkHeld(StoreTable t, int partition) {
    int copies = copies(t.options().getReplication());
    if (!placement.holds(nodeId, partition, copies)) {
      throw new StoreException(ErrorCode.BAD_REQUEST, "node " + nodeId + " holds no copy of partition " + partition
          + " of table '" + t.name() + "' (" + copies + (copies == 1 ? " copy" : " copies") + ", on node(s) "
          + placement.replicasOf(partition).subList(0, copies) + "; does the client use this cluster's file?)");
    }
  }

  /**
   * A writer must send a table as many copies as it keeps: a table of one copy written as two
   * would store the second where no read looks; one of two written as one would leave its copies
   * different.
   */
  /**
   * The table a write names, checked as the write declares it. A node catching up may not yet
   * have made a table created, dropped or replaced while it was out (its catch-up first makes
   * its tables those of the nodes in sync): it refuses such a write as not serving, which writers
   * retry until it has, rather than as a wrong table, which would fail the write. A write it
   * refuses is not lost to it: the copy it makes afterwards reads the table from the others.
   */
  private StoreTable writeTable(String name, Consumer<StoreTable> check) {
    try {
      StoreTable t = store.require(name);
      check.accept(t);
      return t;
    } catch (StoreException e) {
      boolean tableAsOthersHoldIt = e.code() == ErrorCode.NO_SUCH_TABLE || e.code() == ErrorCode.TYPE_MISMATCH
          || e.code() == ErrorCode.BAD_REQUEST;
      throw tableAsOthersHoldIt ? whileCatchingUp(name, e) : e;
    }
  }

  /**
   * {@code e} as this node's refusal when it is catching up (see {@link #writeTable}): also for a
   * table its catch-up drops or replaces while the write is on its way; else {@code e} itself.
   */
  private StoreException whileCatchingUp(String name, StoreException e) {
    Membership m = membership.get();
    if (m != null && m.catchingUp()) {
      return new StoreException(ErrorCode.NOT_SERVING, "node " + m.self() + " is catching up and has not yet made"
          + " table '" + name + "' as the nodes in sync hold it (" + e.getMessage() + ")");
    }
    return m == null ? e : m.unlessServing(e);
  }

  /** The table to read, or a refusal as not serving when this node does not serve and lacks it. */
  private StoreTable readTable(String name) {
    try {
      return store.require(name);
    } catch (StoreException e) {
      throw e.code() == ErrorCode.NO_SUCH_TABLE ? whileCatchingUp(name, e) : e;
    }
  }

  private static void checkReplication(StoreTable t, int sent) {
    int keeps = copies(t.options().getReplication());
    if (copies(sent) != keeps) {
      throw new StoreException(ErrorCode.BAD_REQUEST, "table '" + t.name() + "' keeps " + keeps
          + (keeps == 1 ? " copy" : " copies") + " of each pair, but this write sends " + copies(sent)
          + " (the writer's cluster file says replication=" + copies(sent) + ")");
    }
  }

  /** This node's membership when {@code t} is replicated (its copies must agree), else null. */
  private Membership replicated(StoreTable t) {
    return t.options().getReplication() > 1 ? membership.get() : null;
  }

  /**
   * Admits a read of {@code t}; the returned action ends it (the node's copies are held until
   * then, see {@code Membership.holdCopies}).
   */
  private Runnable admitRead(StoreTable t) {
    Membership m = replicated(t);
    return m == null ? NOTHING_HELD : m.admitRead();
  }

  private static final Runnable NOTHING_HELD = () -> { };

  /** Creates a table as the request asks: for a job, or anew. */
  private NodeStore.Created create(CreateTable c) {
    if (!c.getJobId().isEmpty()) {
      return new NodeStore.Created(
          store.createForJob(c.getJobId(), c.getTable(), c.getOptions(), c.getCommitAs(), c.getCommitReplaces()), true);
    }
    return store.createReporting(c.getTable(), c.getOptions(), c.getIfAbsent());
  }

  /**
   * Admits a create or drop sent on membership epoch {@code epoch} (one that leaves nodes out of
   * the in-sync copies out of it), held until it is done, so that the view cannot move on in
   * between: a node catching up lists this node's tables only past that epoch. Nothing to admit
   * for an unfenced change (epoch 0, sent to every node) or on a node without members.
   */
  private Membership.Admission admitTableChange(long epoch, String table) {
    Membership m = membership.get();
    return epoch == 0 || m == null ? null : m.admitWrite(epoch, false, "table '" + table + "'");
  }

  /** Admits a write to a replicated table (held until it is applied); null for a table of one copy. */
  private Membership.Admission admitWrite(StoreTable t, long epoch) {
    Membership m = replicated(t);
    return m == null ? null : m.admitWrite(epoch, t.options().getMultiValued(), t.name());
  }

  /** Copies a replication field means: 0 (unset) is one. */
  static int copies(int replication) {
    return Math.max(1, replication);
  }

  private static List<byte[]> readKeys(ByteBuf body, int expected) {
    List<byte[]> keys = new ArrayList<>(expected);
    PairBlock.forEach(body.duplicate(), (k, v) -> keys.add(k));
    if (keys.size() != expected) {
      throw new StoreException(ErrorCode.BAD_REQUEST, "request announced " + expected
          + " keys but carried " + keys.size());
    }
    return keys;
  }

  private Frame<Response> multiGet(Request req, ByteBuf body, Response.Builder ok, ByteBufAllocator alloc) {
    StoreTable t = readTable(req.getMultiGet().getTable());
    Runnable held = admitRead(t);
    try {
      return multiGet(t, body, ok, alloc, req.getMultiGet().getKeyCount());
    } finally {
      held.run();
    }
  }

  private Frame<Response> multiGet(StoreTable t, ByteBuf body, Response.Builder ok, ByteBufAllocator alloc,
                                   int keyCount) {
    List<byte[]> keys = readKeys(body, keyCount);
    keys.forEach(k -> checkKey(t, k));
    List<byte[]> values;
    if (t.options().getMultiValued()) {
      values = new ArrayList<>(keys.size());
      for (byte[] k : keys) {
        List<byte[]> all = MultiValued.values(t, k, answerBudget);
        values.add(all.isEmpty() ? null : all.get(0)); // as get: the key's first value
      }
    } else {
      values = t.multiGet(keys);
    }
    long bytes = 0;
    for (int i = 0; i < keys.size(); i++) {
      bytes += values.get(i) == null ? 0 : keys.get(i).length + values.get(i).length + 10;
    }
    if (bytes > answerBudget) {
      throw new StoreException(ErrorCode.VALUE_TOO_LARGE, "the " + keys.size() + " values asked for hold " + bytes
          + " bytes, more than one answer may carry (" + answerBudget + "): ask for fewer keys at once");
    }
    ByteBuf out = alloc.buffer();
    int found = 0;
    for (int i = 0; i < keys.size(); i++) {
      if (values.get(i) != null) {
        PairBlock.write(out, keys.get(i), values.get(i));
        found++;
      }
    }
    return new Frame<>(ok.setAck(Ack.newBuilder().setPairs(found)).build(), out);
  }

  private StoreCursor openCursor(ScanOpen scan) {
    StoreTable t = readTable(scan.getTable());
    if (scan.getMinViewEpoch() > 0 && replicated(t) != null) {
      membership.get().awaitEpoch(scan.getMinViewEpoch()); // before the snapshot: see ScanOpen.min_view_epoch
    }
    Runnable held = admitRead(t); // until the snapshot is taken: what it reads is then fixed
    try {
      return openCursor(t, scan);
    } finally {
      held.run();
    }
  }

  private StoreCursor openCursor(StoreTable t, ScanOpen scan) {
    List<Integer> partitions = scan.getPartitionsCount() > 0
        ? scan.getPartitionsList() : partitionMap.partitionsOf(nodeId);
    byte[] prefix = scan.getKeyPrefix().toByteArray();
    List<byte[][]> ranges = new ArrayList<>(partitions.size());
    for (int p : partitions) {
      if (p < 0 || p >= partitionMap.partitions()) {
        throw new StoreException(ErrorCode.BAD_REQUEST, "partition " + Integer.toUnsignedString(p) + " does not exist");
      }
      if (scan.getStandIn()) {
        checkHeld(t, p);
      }
      ranges.add(KeyRanges.partition(p, prefix));
    }
    return t.scanRanges(ranges, scan.getOrdered());
  }
}
