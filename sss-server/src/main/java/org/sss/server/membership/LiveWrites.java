package org.sss.server.membership;

import io.netty.buffer.ByteBuf;
import java.nio.ByteBuffer;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.locks.ReentrantLock;
import org.sss.core.cluster.PartitionMap;
import org.sss.core.transport.PairBlock;
import org.sss.kvs.StoreTable;

/**
 * The keys a node catching up has written live since it joined, and the one rule about them: a
 * value copied from a copy in sync never replaces one written live. The copy's snapshot was
 * taken at the joining epoch, so a live write is as new as the snapshot's value or newer.
 *
 * <p>Copied pairs travel in run files that are ingested whole, and an ingested file is newer
 * than everything in the table. So the rule is kept twice: a key already written live is left
 * out of the run ({@link #addCopied}), and a key written live after its copied value went into
 * the run gets its live value back once the run is in ({@link #ingestKeepingLive}). Live writes
 * wait while a chunk is added and while a run is ingested.
 */
final class LiveWrites {
  /** Held while a live write applies and records its keys, and while copied pairs are added or ingested. */
  private final ReentrantLock lock = new ReentrantLock();
  /** Stored keys written live, per table. */
  private final Map<String, Set<ByteBuffer>> written = new HashMap<>();

  /** Applies a live write and records its keys; a write that fails is not recorded (the copy brings its key). */
  void apply(String table, List<byte[]> storedKeys, Runnable write) {
    lock.lock();
    try {
      write.run();
      Set<ByteBuffer> keys = written.computeIfAbsent(table, t -> new HashSet<>());
      for (byte[] k : storedKeys) {
        keys.add(ByteBuffer.wrap(k));
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

  /** Adds a chunk of copied pairs to the run, leaving out keys written live; returns the chunk's bytes. */
  int addCopied(StoreTable t, ByteBuf chunk, StoreTable.RunFile run) {
    if (chunk == null || !chunk.isReadable()) {
      return 0;
    }
    lock.lock();
    try {
      Set<ByteBuffer> live = written.getOrDefault(t.name(), Set.of());
      PairBlock.forEach(chunk.duplicate(), (k, v) -> {
        if (!live.contains(ByteBuffer.wrap(k))) {
          run.put(k, v);
        }
      });
    } finally {
      lock.unlock();
    }
    return chunk.readableBytes();
  }

  /**
   * Ingests a run of copied pairs of {@code partitions}, then writes again the values (or
   * absence) that keys written live in those partitions had just before.
   */
  void ingestKeepingLive(StoreTable t, StoreTable.RunFile run, Set<Integer> partitions) {
    lock.lock();
    try {
      List<byte[]> keys = new ArrayList<>();
      for (ByteBuffer k : written.getOrDefault(t.name(), Set.of())) {
        if (partitions.contains(PartitionMap.partitionOfStored(k.array()))) {
          keys.add(k.array());
        }
      }
      List<byte[]> values = t.multiGet(keys);
      run.ingest();
      if (!keys.isEmpty()) {
        try (StoreTable.Batch b = t.newBatch()) {
          for (int i = 0; i < keys.size(); i++) {
            if (values.get(i) == null) {
              b.delete(keys.get(i));
            } else {
              b.put(keys.get(i), values.get(i));
            }
          }
          b.commit();
        }
      }
    } finally {
      lock.unlock();
    }
  }
}
