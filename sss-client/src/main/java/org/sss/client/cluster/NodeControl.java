package org.sss.client.cluster;

import java.io.IOException;
import java.io.Reader;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.time.Instant;
import java.util.Optional;
import java.util.OptionalLong;
import java.util.Properties;
import org.sss.client.MembershipView;
import org.sss.client.SssClient;
import org.sss.core.cluster.ClusterSpec;

/**
 * One node as an operator sees it, identified by itself: it runs while a process holds its data
 * directory's lock ({@link NodeLockProbe}), and is up when it also answers an authenticated
 * connection as the node the cluster file names. Stopping asks the node over the wire to flush
 * and exit; only a node that does not answer is signalled, and only the process the kernel
 * names as its lock's holder. Nothing here trusts a pid file or a clock.
 */
public final class NodeControl {
  /** How long a held lock may go unanswered before the node counts as hung. */
  static final Duration SETTLE_TIMEOUT = Duration.ofSeconds(30);
  static final Duration STOP_TIMEOUT = Duration.ofSeconds(60);
  static final Duration TERM_GRACE = Duration.ofSeconds(15);

  /** What a node is doing. */
  public enum State {
    /** No process holds its lock. */
    STOPPED,
    /** Its lock is held and it answers. */
    RUNNING,
    /** Its lock is held but it does not answer (hung, or cut off). */
    UNRESPONSIVE
  }

  private final ClusterSpec spec;
  private final int node;
  private final Path dataDir;
  private final NodeLockProbe lock;

  public NodeControl(ClusterSpec spec, int node, Path dataDir) {
    this.spec = spec;
    this.node = node;
    this.dataDir = dataDir;
    this.lock = new NodeLockProbe(dataDir);
  }

  /** The node described by a node file ({@code cluster=}, {@code node.id=}, {@code data.dir=}). */
  public static NodeControl ofNodeFile(Path nodeFile) throws IOException {
    Properties p = new Properties();
    try (Reader r = Files.newBufferedReader(nodeFile, StandardCharsets.UTF_8)) {
      p.load(r);
    }
    Path base = nodeFile.toAbsolutePath().getParent();
    String cluster = p.getProperty("cluster");
    String id = p.getProperty("node.id");
    String data = p.getProperty("data.dir");
    if (cluster == null || id == null || data == null) {
      throw new IllegalArgumentException(nodeFile + ": needs cluster=, node.id= and data.dir=");
    }
    try {
      return new NodeControl(ClusterSpec.load(base.resolve(cluster.trim())), Integer.parseInt(id.trim()),
          base.resolve(data.trim()));
    } catch (NumberFormatException e) {
      throw new IllegalArgumentException(nodeFile + ": node.id is not a number: '" + id + "'");
    }
  }

  public int node() {
    return node;
  }

  /** True while some process holds the node's lock (it runs, starts, or is being torn down). */
  public boolean lockHeld() {
    return lock.held();
  }

  /** The node's process, as the kernel names its lock's holder. */
  public Optional<Long> pid() {
    OptionalLong pid = lock.holder();
    return pid.isPresent() ? Optional.of(pid.getAsLong()) : Optional.empty();
  }

  /** True when the node answers an authenticated connection as itself. */
  public boolean answers() {
    try (SssClient c = SssClient.connect(spec)) {
      c.ping(node);
      return true;
    } catch (RuntimeException e) {
      return false;
    }
  }

  /**
   * True when the node serves reads and writes, or catches up (which may take long, and ends on
   * its own): in a cluster keeping copies, once the members have confirmed its view and recorded
   * its store (a load committed before that is refused by it); in a cluster of one copy, when
   * it answers.
   */
  public boolean serves() {
    try (SssClient c = SssClient.connect(spec)) {
      if (spec.replication() < 2) {
        c.ping(node);
        return true;
      }
      return servesOrCatchesUp(c.view(node), node);
    } catch (RuntimeException e) {
      return false;
    }
  }

  /** Whether {@code v}, node {@code node}'s own view, is confirmed and has it serving or catching up. */
  static boolean servesOrCatchesUp(MembershipView v, int node) {
    return v.confirmedMillisAgo() < 2_000 && (v.serving() || v.out().contains(node) || v.joining().contains(node));
  }

  /** The node's state now. */
  public State state() {
    if (!lockHeld()) {
      return State.STOPPED;
    }
    return answers() ? State.RUNNING : State.UNRESPONSIVE;
  }

  /**
   * Waits while the node's lock is held without an answer (a node starting, or a process being
   * torn down after {@code kill -9}) and returns STOPPED or RUNNING, or UNRESPONSIVE when that
   * lasts {@code timeout}.
   */
  public State awaitSettled(Duration timeout) {
    Instant deadline = Instant.now().plus(timeout);
    while (true) {
      State s = state();
      if (s != State.UNRESPONSIVE || Instant.now().isAfter(deadline)) {
        return s;
      }
      sleep(100);
    }
  }

  /** Describes who holds the lock, for messages. */
  String holderText() {
    return pid().map(p -> " (pid " + p + ")").orElse("");
  }

  /**
   * Stops the node and says how, in one line: asked over the wire (it flushes every table and
   * exits), or, when it does not answer, SIGTERM to its lock's holder (its shutdown flushes too)
   * and SIGKILL after {@link #TERM_GRACE}, saying what may be lost.
   */
  public String stop() {
    try (LaunchLock turn = LaunchLock.acquire(dataDir, LocalProcessCluster.LAUNCH_TURN_TIMEOUT)) {
      return stopInTurn(); // a start under way ends first: its node is then seen, and stopped
    } catch (IOException e) {
      return "node " + node + ": NOT STOPPED: " + e.getMessage();
    }
  }

  private String stopInTurn() {
    if (!lockHeld()) {
      return "node " + node + ": not running";
    }
    Optional<ProcessHandle> holder = pid().flatMap(ProcessHandle::of);
    long flushed;
    try (SssClient c = SssClient.connect(spec)) {
      flushed = c.stopNode(node);
    } catch (RuntimeException e) {
      return forceStop(e.getMessage());
    }
    if (!awaitLockFree(STOP_TIMEOUT)) {
      return forceStop("it flushed but did not exit within " + STOP_TIMEOUT.toSeconds() + " s");
    }
    if (!awaitExit(holder, TERM_GRACE)) {
      // its store closed before it released the lock: killing what is left loses nothing
      holder.ifPresent(ProcessHandle::destroyForcibly);
      boolean gone = awaitExit(holder, TERM_GRACE);
      return "node " + node + ": stopped, " + flushed + " table(s) flushed; its process (pid "
          + holder.map(h -> Long.toString(h.pid())).orElse("?") + ") closed its store but did not exit within "
          + TERM_GRACE.toSeconds() + " s: " + (gone ? "KILLED" : "NOT ENDED even by SIGKILL (not ours to signal?)");
    }
    return "node " + node + ": stopped, " + flushed + " table(s) flushed";
  }

  private String forceStop(String why) {
    Optional<ProcessHandle> h = pid().flatMap(ProcessHandle::of);
    if (h.isEmpty()) {
      return awaitLockFree(TERM_GRACE) ? "node " + node + ": stopped (it exited meanwhile)"
          : "node " + node + ": NOT STOPPED: it does not answer (" + why + ") and no server process holds its lock";
    }
    long pid = h.get().pid();
    h.get().destroy();
    if (awaitLockFree(TERM_GRACE) && awaitExit(h, TERM_GRACE)) {
      return "node " + node + ": did not answer (" + why + "); stopped with SIGTERM (pid " + pid
          + "), tables flushed on exit";
    }
    h.get().destroyForcibly();
    awaitLockFree(STOP_TIMEOUT);
    awaitExit(h, TERM_GRACE);
    return "node " + node + ": did not answer (" + why + ") nor stop within " + TERM_GRACE.toSeconds()
        + " s of SIGTERM; KILLED (pid " + pid + "): writes to tables without a WAL since their last flush are lost";
  }

  /** Sends {@code kill -9} to the node's process and returns at once (it may still be dying). */
  public void killNow() {
    pid().flatMap(ProcessHandle::of).ifPresent(ProcessHandle::destroyForcibly);
  }

  /**
   * Kills the node's process ({@code kill -9}) and waits until it is gone: its lock free and
   * the process itself ended, so that a start right after meets no process of the node.
   */
  public void kill() {
    Optional<ProcessHandle> holder = pid().flatMap(ProcessHandle::of);
    holder.ifPresent(ProcessHandle::destroyForcibly);
    awaitLockFree(STOP_TIMEOUT);
    awaitExit(holder, TERM_GRACE);
  }

  /**
   * Waits until the process that held the lock has ended. A server releases its lock as it
   * closes and only then exits: for a moment after the lock is free the old process is still
   * there (its ports, its memory), and a node started in that moment would run beside it.
   */
  static boolean awaitExit(Optional<ProcessHandle> holder, Duration timeout) {
    if (holder.isEmpty()) {
      return true;
    }
    Instant deadline = Instant.now().plus(timeout);
    while (!ended(holder.get())) {
      if (Instant.now().isAfter(deadline)) {
        return false;
      }
      sleep(20);
    }
    return true;
  }

  /**
   * Whether the process has ended: gone, or a zombie (in a container whose first process does
   * not reap orphans, a server started by an earlier command stays one after it exits).
   */
  static boolean ended(ProcessHandle h) {
    if (!h.isAlive()) {
      return true;
    }
    try {
      String stat = Files.readString(Path.of("/proc", Long.toString(h.pid()), "stat"), StandardCharsets.ISO_8859_1);
      int name = stat.lastIndexOf(')'); // the state follows the command's name, which may hold spaces
      return name > 0 && name + 2 < stat.length() && stat.charAt(name + 2) == 'Z';
    } catch (IOException | RuntimeException e) {
      return !h.isAlive(); // no /proc here, or it just went
    }
  }

  /** Waits until no process holds the node's lock; false after {@code timeout}. */
  public boolean awaitLockFree(Duration timeout) {
    Instant deadline = Instant.now().plus(timeout);
    while (lockHeld()) {
      if (Instant.now().isAfter(deadline)) {
        return false;
      }
      sleep(20);
    }
    return true;
  }

  Path dataDir() {
    return dataDir;
  }

  static void sleep(long ms) {
    try {
      Thread.sleep(ms);
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
      throw new IllegalStateException("interrupted", e);
    }
  }
}
