package org.sss.client.internal;

import io.netty.buffer.ByteBuf;
import io.netty.buffer.Unpooled;
import java.time.Duration;
import java.util.ArrayList;
import java.util.BitSet;
import java.util.Collections;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.function.Supplier;
import org.sss.core.cluster.InSyncCopies;
import org.sss.core.keys.StoredKeys;
import org.sss.core.proto.ClusterView;
import org.sss.core.proto.ErrorCode;
import org.sss.core.proto.Request;
import org.sss.core.proto.Response;
import org.sss.core.transport.Frame;
import org.sss.core.transport.NodeUnavailableException;
import org.sss.core.transport.PairBlock;
import org.sss.core.transport.SssException;

/**
 * Writes pairs (or deletes keys) of a replicated table to the copies the membership names, until
 * every copy that counts has applied each one.
 *
 * <p>Each round sends every pair to the copies of its partition under the writer's view
 * ({@link InSyncCopies#writeTargets}) that have not applied it yet, stamped with the view's
 * epoch. A copy refuses a write sent on another epoch ({@code STALE_VIEW}) or while it does not
 * serve ({@code NOT_SERVING}); a node that cannot be reached may be on its way out. After such a
 * round the writer reads the view again and sends what is missing, so a write goes on through a
 * node's death once the members have decided it out (about 9 s), and never reaches a copy
 * twice. A node whose connection broke while it held the write may or may not have applied it:
 * it is not sent the write again, and if it is still a copy that counts once it answers, the
 * write fails as any write whose outcome is unknown. Other refusals fail the write at once.
 */
public final class CopyWriter {
  /** Makes the request carrying {@code count} pairs on membership epoch {@code epoch}. */
  public interface Requests {
    Request.Builder make(int count, long epoch);
  }

  private final NodeChannels channels;
  private final InSyncCopies copies;
  private final Supplier<ClusterView> freshView;
  private final Duration timeout;
  private volatile ClusterView view;

  public CopyWriter(NodeChannels channels, Supplier<ClusterView> freshView, Duration timeout) {
    this.channels = channels;
    this.copies = new InSyncCopies(channels.spec().placement());
    this.freshView = freshView;
    this.timeout = timeout;
  }

  /** The view writes go by: the last one read, read first if none was. */
  public ClusterView view() {
    ClusterView v = view;
    if (v == null) {
      v = view = freshView.get();
    }
    return v;
  }

  /** Reads the view again (a write was refused as sent on an old one). */
  public ClusterView refresh() {
    ClusterView v = freshView.get();
    ClusterView old = view;
    if (old == null || v.getEpoch() >= old.getEpoch()) {
      view = v;
    }
    return view;
  }

  /**
   * Writes {@code keys} (stored keys) with {@code values} (null: deletes), each node's share in
   * one request of at most {@code maxShareBytes}.
   */
  public void write(List<byte[]> keys, List<byte[]> values, Requests requests, long maxShareBytes) {
    int n = channels.spec().nodeCount();
    BitSet[] applied = new BitSet[n];
    BitSet[] uncertain = new BitSet[n];
    for (int i = 0; i < n; i++) {
      applied[i] = new BitSet();
      uncertain[i] = new BitSet();
    }
    boolean[] wasAway = new boolean[n];
    ClusterView start = view();
    for (int node = 0; node < n; node++) {
      wasAway[node] = start.getOutList().contains(node) || start.getJoiningList().contains(node);
    }
    long deadline = System.nanoTime() + timeout.toNanos();
    long pause = 100;
    boolean first = true;
    while (true) {
      ClusterView v = view();
      for (int node = 0; node < n; node++) {
        // a node out empties its copies before it rejoins: what it applied before no longer
        // counts there, even when this writer sees it only once it is joining again
        boolean away = v.getOutList().contains(node) || v.getJoiningList().contains(node);
        if (v.getOutList().contains(node) || away && !wasAway[node]) {
          applied[node].clear();
          uncertain[node].clear();
        }
        wasAway[node] = away;
      }
      ByteBuf[] bodies = new ByteBuf[n];
      List<List<Integer>> items = new ArrayList<>();
      for (int i = 0; i < n; i++) {
        items.add(new ArrayList<>());
      }
      RuntimeException unknown = null;
      for (int i = 0; i < keys.size(); i++) {
        int partition = StoredKeys.partitionOf(keys.get(i));
        for (int node : copies.writeTargets(v, partition)) {
          if (applied[node].get(i)) {
            continue;
          }
          if (uncertain[node].get(i)) {
            if (InSyncCopies.serves(v, node)) {
              unknown = new NodeUnavailableException("node " + node + " lost its connection while it held the "
                  + "write, and is a copy that counts again: the write's outcome there is unknown; write it again", null);
            }
            continue; // down: it answers again (then the write fails, as above) or is decided out
          }
          if (bodies[node] == null) {
            bodies[node] = Unpooled.buffer();
          }
          PairBlock.write(bodies[node], keys.get(i), values == null ? new byte[0] : values.get(i));
          items.get(node).add(i);
        }
      }
      if (unknown != null) {
        release(bodies);
        throw unknown;
      }
      if (first) {
        first = false;
        for (int node = 0; node < n; node++) {
          if (bodies[node] != null && bodies[node].readableBytes() > maxShareBytes) {
            release(bodies);
            throw new IllegalArgumentException("the share for node " + node + " is more than " + maxShareBytes
                + " bytes, over what one request may carry; nothing was written (use writer())");
          }
        }
      }
      boolean sending = false;
      boolean waiting = false; // for a node down that may hold the write: it answers or is decided out
      for (int node = 0; node < n; node++) {
        sending |= bodies[node] != null;
        waiting |= !uncertain[node].isEmpty() && stillCounts(v, node, uncertain[node], keys);
      }
      if (!sending && !waiting) {
        return;
      }
      List<CompletableFuture<Frame<Response>>> answers = new ArrayList<>(Collections.nCopies(n, null));
      RuntimeException retryable = null;
      for (int node = 0; node < n; node++) {
        if (bodies[node] == null) {
          continue;
        }
        try {
          answers.set(node, channels.get(node).call(requests.make(items.get(node).size(), v.getEpoch()), bodies[node]));
        } catch (RuntimeException e) {
          bodies[node].release(); // never sent: safe to send again
          retryable = retryable != null ? retryable : e;
          if (!(e instanceof NodeUnavailableException)) {
            awaitAll(answers);
            throw e;
          }
        }
      }
      RuntimeException fatal = null;
      for (int node = 0; node < n; node++) {
        CompletableFuture<Frame<Response>> f = answers.get(node);
        if (f == null) {
          continue;
        }
        try {
          NodeChannels.await(f, timeout).release();
          items.get(node).forEach(applied[node]::set);
        } catch (NodeUnavailableException e) {
          if (!e.refused()) {
            items.get(node).forEach(uncertain[node]::set); // it may have applied it
          }
          retryable = retryable != null ? retryable : e;
        } catch (SssException e) {
          if (e.code() == ErrorCode.STALE_VIEW) {
            retryable = retryable != null ? retryable : e;
          } else {
            fatal = fatal != null ? fatal : e;
          }
        } catch (RuntimeException e) {
          fatal = fatal != null ? fatal : e;
        }
      }
      if (fatal != null) {
        throw fatal;
      }
      if (retryable != null || waiting) {
        if (System.nanoTime() > deadline) {
          throw retryable != null ? retryable : new NodeUnavailableException("a copy that may hold the write stayed "
              + "down for " + timeout.toSeconds() + " s without being decided out", null);
        }
        sleep(pause);
        pause = Math.min(1_000, pause * 2);
        try {
          refresh();
        } catch (RuntimeException e) {
          // no node answers now: the next round finds out, or the deadline ends the write
        }
      }
    }
  }

  /** True when some of {@code items} still need {@code node}, which lost them, under {@code v}. */
  private boolean stillCounts(ClusterView v, int node, BitSet items, List<byte[]> keys) {
    for (int i = items.nextSetBit(0); i >= 0; i = items.nextSetBit(i + 1)) {
      if (copies.writeTargets(v, StoredKeys.partitionOf(keys.get(i))).contains(node)) {
        return true;
      }
    }
    return false;
  }

  private static void awaitAll(List<CompletableFuture<Frame<Response>>> answers) {
    for (CompletableFuture<Frame<Response>> f : answers) {
      if (f != null) {
        try {
          f.join().release();
        } catch (RuntimeException ignored) {
          // the write fails with the first error already
        }
      }
    }
  }

  private static void release(ByteBuf[] bodies) {
    for (ByteBuf b : bodies) {
      if (b != null) {
        b.release();
      }
    }
  }

  private static void sleep(long millis) {
    try {
      Thread.sleep(millis);
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
      throw new SssException(ErrorCode.INTERNAL, "interrupted while writing", e);
    }
  }
}
