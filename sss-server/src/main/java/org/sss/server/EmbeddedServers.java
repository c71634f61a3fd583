package org.sss.server;

import java.io.IOException;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.Collections;
import java.util.List;
import java.util.function.Function;
import java.util.function.IntFunction;
import org.sss.core.cluster.ClusterSpec;
import org.sss.core.cluster.EmbeddedNodes;
import org.sss.core.cluster.NodeAddress;
import org.sss.core.proto.ViewAnswer;
import org.sss.kvs.RocksLibrary;

/** Starts a cluster's nodes in this JVM, for tests, demos and the command line. */
public final class EmbeddedServers implements EmbeddedNodes {
  @Override
  public void prepare() {
    RocksLibrary.load();
  }

  @Override
  public AutoCloseable start(ClusterSpec spec, Path baseDir) throws Exception {
    List<SssServer> servers = new ArrayList<>();
    try {
      for (int i = 0; i < spec.nodeCount(); i++) {
        servers.add(SssServer.start(NodeConfig.of(spec, i, baseDir.resolve("node-" + i))));
      }
      awaitMembers(servers);
    } catch (Exception e) {
      CleanupSteps cleanup = CleanupSteps.after(e);
      servers.forEach(s -> cleanup.run(s::close)); // every node, whichever fails to close
      throw e;
    }
    return () -> closeAll(servers);
  }

  @Override
  public Started startOnFreePorts(int n, String host, Function<List<NodeAddress>, ClusterSpec> specOf,
                                  Path baseDir) throws Exception {
    List<NodeListener> listeners = bindAll(n, host);
    ClusterSpec spec;
    try {
      spec = specOf.apply(addresses(listeners, host));
    } catch (RuntimeException e) {
      listeners.forEach(NodeListener::close);
      throw e;
    }
    List<SssServer> servers = startAll(listeners, i -> NodeConfig.of(spec, i, baseDir.resolve("node-" + i)));
    try {
      awaitMembers(servers);
    } catch (RuntimeException | InterruptedException e) {
      CleanupSteps cleanup = CleanupSteps.after(e);
      servers.forEach(s -> cleanup.run(s::close)); // every node, whichever fails to close
      throw e;
    }
    return new Started(spec, () -> closeAll(servers));
  }

  /**
   * Stops every node, side by side (each waits for its own threads and files); returns when all
   * have stopped, throwing the first node's failure to stop (the others' suppressed in it).
   */
  static void closeAll(List<SssServer> servers) {
    List<Thread> stops = new ArrayList<>();
    List<Throwable> failures = Collections.synchronizedList(new ArrayList<>());
    for (SssServer s : servers) {
      Thread t = new Thread(() -> {
        try {
          s.close();
        } catch (RuntimeException | Error e) {
          failures.add(e);
        }
      }, "sss-node" + s.config().nodeId() + "-stop");
      t.start();
      stops.add(t);
    }
    boolean interrupted = joinAll(stops);
    if (interrupted) {
      Thread.currentThread().interrupt(); // every node is stopped all the same
    }
    if (!failures.isEmpty()) {
      Throwable first = failures.get(0);
      failures.subList(1, failures.size()).forEach(first::addSuppressed);
      if (first instanceof Error e) {
        throw e;
      }
      throw (RuntimeException) first;
    }
  }

  /** Waits for every thread to end, also when interrupted; returns whether it was. */
  private static boolean joinAll(List<Thread> threads) {
    boolean interrupted = false;
    for (Thread t : threads) {
      while (true) {
        try {
          t.join();
          break;
        } catch (InterruptedException e) {
          interrupted = true;
        }
      }
    }
    return interrupted;
  }

  /** How long a replicated embedded cluster's members may take to elect a leader and confirm every node's view. */
  private static final Duration MEMBERS_READY = Duration.ofSeconds(30);

  /**
   * Returns once every node of a replicated cluster has its view of the members confirmed by a
   * majority, so that it serves: the cluster's first request then finds it ready instead of
   * waiting for the first election. Nothing to wait for with one copy.
   */
  private static void awaitMembers(List<SssServer> servers) throws InterruptedException {
    long deadline = System.nanoTime() + MEMBERS_READY.toNanos();
    for (SssServer s : servers) {
      while (true) {
        ViewAnswer a = s.membershipView();
        int id = s.config().nodeId();
        boolean catchingUp = a.getView().getOutList().contains(id) || a.getView().getJoiningList().contains(id);
        if (!a.getReplicated() || a.getLeader() >= 0 && a.getConfirmedMillisAgo() < 1_000
            && (a.getServing() || catchingUp)) {
          break;
        }
        if (System.nanoTime() > deadline) {
          throw new IllegalStateException("node " + s.config().nodeId() + " of the embedded cluster has no view of the "
              + "members confirmed after " + MEMBERS_READY.toSeconds() + " s (leader " + a.getLeader() + ")");
        }
        Thread.sleep(20);
      }
    }
  }

  /** Binds {@code n} sockets on {@code host}, each on a port the kernel picks; all or none. */
  public static List<NodeListener> bindAll(int n, String host) throws IOException {
    List<NodeListener> listeners = new ArrayList<>();
    try {
      for (int i = 0; i < n; i++) {
        listeners.add(NodeListener.bind(host, 0));
      }
    } catch (IOException | RuntimeException e) {
      listeners.forEach(NodeListener::close);
      throw e;
    }
    return listeners;
  }

  /** The addresses of bound sockets, as node 0, 1, ... of a cluster spec. */
  public static List<NodeAddress> addresses(List<NodeListener> listeners, String host) {
    List<NodeAddress> nodes = new ArrayList<>();
    for (int i = 0; i < listeners.size(); i++) {
      nodes.add(new NodeAddress(i, host, listeners.get(i).port()));
    }
    return nodes;
  }

  /**
   * Starts node {@code i} with {@code configOf(i)} on {@code listeners.get(i)}, for every i, all
   * at once: a node's start is mostly waits for its disk (a new store's files synced) and, in a
   * fresh JVM, class initialization, which the nodes share. When one fails, the ones started are
   * closed and every listener is released.
   */
  public static List<SssServer> startAll(List<NodeListener> listeners,
                                         IntFunction<NodeConfig> configOf)
      throws InterruptedException {
    int n = listeners.size();
    SssServer[] started = new SssServer[n];
    Throwable[] failed = new Throwable[n];
    Thread[] threads = new Thread[n];
    for (int i = 0; i < n; i++) {
      int node = i;
      threads[i] = new Thread(() -> {
        try {
          started[node] = SssServer.start(configOf.apply(node), listeners.get(node));
        } catch (Throwable e) { // the listener is released by start (or, if configOf threw, below)
          failed[node] = e;
        }
      }, "sss-node" + i + "-start");
      threads[i].start();
    }
    // every start ends, so that none is left running if this one is interrupted
    boolean interrupted = joinAll(Arrays.asList(threads));
    Throwable first = interrupted ? new InterruptedException("interrupted while the nodes started") : null;
    for (int i = 0; i < n; i++) {
      if (failed[i] == null) {
        continue;
      }
      if (first == null) {
        first = failed[i];
      } else {
        first.addSuppressed(failed[i]);
      }
    }
    List<SssServer> servers = new ArrayList<>();
    for (SssServer s : started) {
      if (s != null) {
        servers.add(s);
      }
    }
    if (first != null) {
      CleanupSteps cleanup = CleanupSteps.after(first);
      servers.forEach(s -> cleanup.run(s::close)); // every node, whichever fails to close
      listeners.forEach(l -> cleanup.run(l::close)); // closing one a server took over does nothing
      if (first instanceof RuntimeException r) {
        throw r;
      }
      if (first instanceof InterruptedException ie) {
        throw ie;
      }
      if (first instanceof Error err) {
        throw err;
      }
      throw new IllegalStateException(first);
    }
    return servers;
  }
}
