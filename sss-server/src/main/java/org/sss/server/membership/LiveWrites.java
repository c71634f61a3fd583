package org.sss.server.membership;

import io.netty.buffer.ByteBuf;
import java.nio.ByteBuffer;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.locks.ReentrantLock;
import org.sss.core.cluster.PartitionMap;
import org.sss.core.transport.PairBlock;
import org.sss.kvs.PointInTime;
import org.sss.kvs.RunFile;
import org.sss.kvs.StoreTable;
import org.sss.kvs.TableBatch;
import org.sss.core.keys.StoredKeys;

/**
 * The keys a node catching up has written live since it joined, and the one rule about them: a
 * value copied from a copy in sync never replaces one written live. The copy's snapshot was
 * taken at the joining epoch, so a live write is as new as the snapshot's value or newer.
 *
 * <p>Copied pairs travel in run files that are ingested whole, and an ingested file is newer
 * than everything in the table. So the rule is kept twice: a key already written live is left
 * out of the run ({@link #addCopied}), and a key written live after its copied value went into
 * the run gets back, once the run is in, what it held just before the ingest
 * ({@link #ingestKeepingLive}). Each live write gets a generation number, so that a key written
 * live again after the ingest is left alone. Live writes wait while a chunk is added, while a
 * run is ingested and while a slice of keys is written back.
 */
final class LiveWrites {
  /** Keys written back per turn of the lock, so that memory stays bounded and live writes wait briefly. */
  private static final int WRITE_BACK_KEYS = 1_024;

  /** Held while a live write applies and records its keys, and while copied pairs are added or ingested. */
  private final ReentrantLock lock = new ReentrantLock();
  /** Stored keys written live, per table, with the generation of their last live write. */
  private final Map<String, Map<ByteBuffer, Long>> written = new HashMap<>();
  private long generation;

  /** Applies a live write and records its keys; a write that fails is not recorded (the copy brings its key). */
  void apply(String table, List<byte[]> storedKeys, Runnable write) {
    lock.lock();
    try {
      write.run();
      long g = ++generation;
      Map<ByteBuffer, Long> keys = written.computeIfAbsent(table, t -> new HashMap<>());
      for (byte[] k : storedKeys) {
        keys.put(ByteBuffer.wrap(k), g);
      }
    } finally {
      lock.unlock();
    }
  }

  /** Forgets every table's keys: the node emptied its copies, or is in sync again. */
  void forgetAll() {
    lock.lock();
    try {
      written.clear();
    } finally {
      lock.unlock();
    }
  }

  /** Forgets a table's keys: the table they went to was dropped. */
  void forget(String table) {
    lock.lock();
    try {
      written.remove(table);
    } finally {
      lock.unlock();
    }
  }

  /**
   * Adds a chunk of copied pairs to the run, leaving out keys written live; returns the chunk's
   * bytes. A value of {@link StoreTable#LARGE_VALUE_BYTES} or more is written to the table at
   * once instead, through the memtable whose flush moves it into a blob file (an SST file
   * cannot hold blobs): the run never holds its key, so the ingest cannot hide it.
   */
  int addCopied(StoreTable t, ByteBuf chunk, RunFile run) {
    if (chunk == null || !chunk.isReadable()) {
      return 0;
    }
    lock.lock();
    try (TableBatch large = t.newBatch()) {
      Map<ByteBuffer, Long> live = written.getOrDefault(t.name(), Map.of());
      PairBlock.forEach(chunk.duplicate(), (k, v) -> {
        if (!live.containsKey(ByteBuffer.wrap(k))) {
          if (v.length >= StoreTable.LARGE_VALUE_BYTES) {
            large.put(k, v);
          } else {
            run.put(k, v);
          }
        }
      });
      if (large.count() > 0) {
        large.commit();
      }
    } finally {
      lock.unlock();
    }
    return chunk.readableBytes();
  }

  /**
   * Ingests a run of copied pairs of {@code partitions}, then gives each key written live in
   * those partitions (and not again since) what it held just before the ingest. A failure after
   * the ingest leaves such keys with the copied value: the caller must start over.
   */
  void ingestKeepingLive(StoreTable t, RunFile run, Set<Integer> partitions) {
    PointInTime before;
    long ingestedAt;
    List<byte[]> keys = new ArrayList<>();
    lock.lock();
    try {
      before = t.pointInTime();
      try {
        run.ingest();
      } catch (RuntimeException e) {
        before.close();
        throw e;
      }
      ingestedAt = generation;
      for (ByteBuffer k : written.getOrDefault(t.name(), Map.of()).keySet()) {
        if (partitions.contains(StoredKeys.partitionOf(k.array()))) {
          keys.add(k.array());
        }
      }
    } finally {
      lock.unlock();
    }
    try (before) {
      for (int from = 0; from < keys.size(); from += WRITE_BACK_KEYS) {
        writeBack(t, before, keys.subList(from, Math.min(keys.size(), from + WRITE_BACK_KEYS)), ingestedAt);
      }
    }
  }

  /** Writes back what {@code keys} held before the ingest, except keys written live since. */
  private void writeBack(StoreTable t, PointInTime before, List<byte[]> keys, long ingestedAt) {
    List<byte[]> values = before.multiGet(keys);
    lock.lock();
    try (TableBatch b = t.newBatch()) {
      Map<ByteBuffer, Long> live = written.getOrDefault(t.name(), Map.of());
      for (int i = 0; i < keys.size(); i++) {
        Long g = live.get(ByteBuffer.wrap(keys.get(i)));
        if (g != null && g > ingestedAt) {
          continue; // written live again after the ingest: newer than what it held before
        }
        if (values.get(i) == null) {
          b.delete(keys.get(i));
        } else {
          b.put(keys.get(i), values.get(i));
        }
      }
      if (b.count() > 0) {
        b.commit();
      }
    } finally {
      lock.unlock();
    }
  }
}
