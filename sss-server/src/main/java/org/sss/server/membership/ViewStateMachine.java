package org.sss.server.membership;

import java.io.File;
import java.io.IOException;
import java.nio.file.Files;
import java.util.TreeSet;
import java.util.concurrent.CompletableFuture;
import org.apache.ratis.proto.RaftProtos.LogEntryProto;
import org.apache.ratis.protocol.Message;
import org.apache.ratis.protocol.RaftGroupId;
import org.apache.ratis.server.RaftServer;
import org.apache.ratis.server.protocol.TermIndex;
import org.apache.ratis.server.storage.FileInfo;
import org.apache.ratis.server.storage.RaftStorage;
import org.apache.ratis.statemachine.TransactionContext;
import org.apache.ratis.statemachine.impl.BaseStateMachine;
import org.apache.ratis.statemachine.impl.SimpleStateMachineStorage;
import org.apache.ratis.statemachine.impl.SingleFileSnapshotInfo;
import org.apache.ratis.thirdparty.com.google.protobuf.ByteString;
import org.apache.ratis.util.LifeCycle;
import org.apache.ratis.util.MD5FileUtil;
import org.sss.core.cluster.InSyncCopies;
import org.sss.core.proto.ClusterView;
import org.sss.core.proto.StoreSeen;
import org.sss.core.proto.ViewChange;

/**
 * The replicated view of a cluster's membership: what Raft's log decides, applied in log order
 * on every voter. Its entries are {@link ViewChange}s, each signed with the cluster secret
 * ({@link SignedChanges}) and applied only when its signature holds and the view is still at
 * the epoch it was proposed on; any other entry changes nothing. Applying is deterministic, so
 * every voter holds the same view after the same entries.
 *
 * <p>Lifecycle: Ratis pauses the machine and reinitializes it when a follower installs a
 * snapshot from the leader; {@link #pause} and {@link #reinitialize} make those transitions,
 * which {@link BaseStateMachine} leaves as no-ops (a follower would then fail on reload).
 */
final class ViewStateMachine extends BaseStateMachine {
  private final SignedChanges signatures;
  private final InSyncCopies copies;
  private final SimpleStateMachineStorage storage = new SimpleStateMachineStorage();
  private volatile ClusterView view = ClusterView.getDefaultInstance();

  ViewStateMachine(SignedChanges signatures, InSyncCopies copies) {
    this.signatures = signatures;
    this.copies = copies;
  }

  ClusterView view() {
    return view;
  }

  @Override
  public void initialize(RaftServer server, RaftGroupId groupId, RaftStorage raftStorage) throws IOException {
    getLifeCycle().startAndTransition(() -> {
      super.initialize(server, groupId, raftStorage);
      storage.init(raftStorage);
      load(storage.loadLatestSnapshot());
    });
  }

  @Override
  public synchronized void pause() {
    if (getLifeCycle().getCurrentState() == LifeCycle.State.RUNNING) {
      getLifeCycle().transition(LifeCycle.State.PAUSING);
      getLifeCycle().transition(LifeCycle.State.PAUSED);
    }
  }

  @Override
  public synchronized void reinitialize() throws IOException {
    load(storage.loadLatestSnapshot());
    if (getLifeCycle().getCurrentState() == LifeCycle.State.PAUSED) {
      getLifeCycle().transition(LifeCycle.State.STARTING);
      getLifeCycle().transition(LifeCycle.State.RUNNING);
    }
  }

  @Override
  public SimpleStateMachineStorage getStateMachineStorage() {
    return storage;
  }

  @Override
  public CompletableFuture<Message> applyTransaction(TransactionContext trx) {
    LogEntryProto entry = trx.getLogEntry();
    byte[] data = entry.getStateMachineLogEntry().getLogData().toByteArray();
    ClusterView next;
    synchronized (this) {
      next = apply(view, signatures.open(data), copies);
      view = next;
      updateLastAppliedTermIndex(entry.getTerm(), entry.getIndex());
    }
    return CompletableFuture.completedFuture(Message.valueOf(ByteString.copyFrom(next.toByteArray())));
  }

  /**
   * The view after {@code change}: moved on by one epoch when the change was proposed on this
   * view and is allowed in it; else the same view. A null change (a bad signature) changes nothing.
   *
   * <p>A node's life: up, down (silent, still in sync), out (left the in-sync copies), joining
   * (catching up), up. Down goes back up when the node answers before it is out; out (from down,
   * or from up for a node that crashed and may lack writes) is allowed only while every
   * partition of the node keeps another copy in sync and up
   * ({@link org.sss.core.cluster.InSyncCopies#onlyCopies}); a node joining that stops goes out
   * again, and starts over.
   */
  static ClusterView apply(ClusterView view, ViewChange change, InSyncCopies copies) {
    if (change == null || change.getExpectEpoch() != view.getEpoch()) {
      return view;
    }
    if (change.hasStoreSeen()) {
      return storeSeen(view, change.getStoreSeen(), copies);
    }
    TreeSet<Integer> down = new TreeSet<>(view.getDownList());
    TreeSet<Integer> out = new TreeSet<>(view.getOutList());
    TreeSet<Integer> joining = new TreeSet<>(view.getJoiningList());
    boolean changed = switch (change.getChangeCase()) {
      case MARK_DOWN -> !out.contains(change.getMarkDown()) && !joining.contains(change.getMarkDown())
          && down.add(change.getMarkDown());
      case MARK_UP -> down.remove(change.getMarkUp()) || joining.remove(change.getMarkUp());
      case MARK_OUT -> {
        int node = change.getMarkOut();
        if (joining.remove(node)) {
          yield out.add(node);
        }
        // down, or up but asking to leave (it crashed and may lack writes): never the last copy in sync
        if (!out.contains(node) && copies.onlyCopies(view, node).isEmpty()) {
          down.remove(node);
          yield out.add(node);
        }
        yield false;
      }
      case MARK_JOINING -> out.remove(change.getMarkJoining()) && joining.add(change.getMarkJoining());
      default -> false;
    };
    if (!changed) {
      return view;
    }
    return ClusterView.newBuilder().setEpoch(view.getEpoch() + 1).addAllDown(down).addAllOut(out)
        .addAllJoining(joining).putAllStores(view.getStoresMap()).build();
  }

  /**
   * A node answered with its store: the first store seen of a node is recorded (the copies that
   * count do not change; the epoch moves on, as for every decision); another store than the one
   * recorded (the node's data directory was lost or replaced) holds none of the writes the node
   * took, so the node leaves the in-sync copies and its new store is recorded. As for mark_out,
   * never the last copy in sync of a partition: the node is then decided down (or stays down),
   * serving nothing (its store is not the one recorded) rather than answer from an empty store,
   * and counting as no copy up (no other copy of its partitions is decided out on its account),
   * until another copy of its partitions is up again and it can leave.
   */
  private static ClusterView storeSeen(ClusterView view, StoreSeen seen, InSyncCopies copies) {
    int node = seen.getNode();
    String recorded = view.getStoresMap().get(node);
    if (seen.getStore().isEmpty() || seen.getStore().equals(recorded)) {
      return view;
    }
    if (recorded == null || view.getOutList().contains(node) || view.getJoiningList().contains(node)) {
      // a first store, or one of a node that catches up anyway (a node joining starts over)
      return view.toBuilder().setEpoch(view.getEpoch() + 1).putStores(node, seen.getStore()).build();
    }
    if (!copies.onlyCopies(view, node).isEmpty()) {
      // it cannot leave: down, it serves nothing and counts as no copy up (no other copy of its
      // partitions is decided out on its account), and it is not decided up on this store
      if (view.getDownList().contains(node)) {
        return view;
      }
      TreeSet<Integer> down = new TreeSet<>(view.getDownList());
      down.add(node);
      return view.toBuilder().setEpoch(view.getEpoch() + 1).clearDown().addAllDown(down).build();
    }
    TreeSet<Integer> down = new TreeSet<>(view.getDownList());
    TreeSet<Integer> out = new TreeSet<>(view.getOutList());
    down.remove(node);
    out.add(node);
    return ClusterView.newBuilder().setEpoch(view.getEpoch() + 1).addAllDown(down).addAllOut(out)
        .addAllJoining(view.getJoiningList()).putAllStores(view.getStoresMap()).putStores(node, seen.getStore())
        .build();
  }

  @Override
  public CompletableFuture<Message> query(Message request) {
    return CompletableFuture.completedFuture(Message.valueOf(ByteString.copyFrom(view.toByteArray())));
  }

  @Override
  public synchronized long takeSnapshot() throws IOException {
    TermIndex last = getLastAppliedTermIndex();
    File f = storage.getSnapshotFile(last.getTerm(), last.getIndex());
    Files.write(f.toPath(), view.toByteArray());
    storage.updateLatestSnapshot(new SingleFileSnapshotInfo(
        new FileInfo(f.toPath(), MD5FileUtil.computeAndSaveMd5ForFile(f)), last));
    return last.getIndex();
  }

  private synchronized void load(SingleFileSnapshotInfo snapshot) throws IOException {
    if (snapshot == null || !Files.exists(snapshot.getFile().getPath())) {
      return;
    }
    view = ClusterView.parseFrom(Files.readAllBytes(snapshot.getFile().getPath()));
    updateLastAppliedTermIndex(snapshot.getTermIndex());
  }
}
