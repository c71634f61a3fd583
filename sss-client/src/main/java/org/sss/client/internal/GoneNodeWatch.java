package org.sss.client.internal;

import io.netty.util.concurrent.DefaultThreadFactory;
import java.util.concurrent.Executors;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.ScheduledFuture;
import java.util.concurrent.TimeUnit;
import java.util.function.Supplier;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;
import org.sss.core.cluster.InSyncCopies;
import org.sss.core.proto.ClusterView;

/**
 * Fails at once what a client of a replicated cluster waits for from a node the members have
 * decided out of the in-sync copies.
 *
 * <h2>Why</h2>
 * A killed node's connection breaks by itself, and every reader and writer then goes to another
 * copy (or sends a write again once the node is out). A node whose disk hangs keeps its
 * connection open and answers on its event loop, and the members decide it down by what it
 * reports; but a read or a write already sent to it would wait out the client's timeout
 * (120 s by default) first. So while requests wait, the view is read every
 * {@link #CHECK_EVERY_MILLIS} (later when other clients' checks on the shared thread wait for a
 * view), and the connection to each node it has out is abandoned if
 * requests wait on it: they fail as on a lost connection, naming the decision. Out, not merely
 * down: a node out serves nothing until it has caught up, and writes complete without it, so
 * nothing waited for from it can still matter; a node down may be decided up again. Reading the
 * view costs one small request per node, answered on the nodes' event loops, and only while
 * some request waits. One thread serves every client's watch.
 */
public final class GoneNodeWatch implements AutoCloseable {
  private static final Logger LOG = LoggerFactory.getLogger(GoneNodeWatch.class);
  static final long CHECK_EVERY_MILLIS = 2_000;

  private static final ScheduledExecutorService TIMER =
      Executors.newSingleThreadScheduledExecutor(new DefaultThreadFactory("sss-client-gone-nodes", true));

  private final NodeChannels channels;
  private final Supplier<ClusterView> freshView;
  private final ScheduledFuture<?> task;

  public GoneNodeWatch(NodeChannels channels, Supplier<ClusterView> freshView) {
    this.channels = channels;
    this.freshView = freshView;
    this.task = TIMER.scheduleWithFixedDelay(this::check, CHECK_EVERY_MILLIS, CHECK_EVERY_MILLIS, TimeUnit.MILLISECONDS);
  }

  private void check() {
    try {
      if (!channels.anyWaiting()) {
        return;
      }
      ClusterView view = freshView.get();
      for (int node : view.getOutList()) {
        String why = InSyncCopies.decision(view, node);
        if (channels.abandonIfWaiting(node, why)) {
          LOG.info("node {}: {}; what waited on it goes to the other copies", node, why);
        }
      }
    } catch (RuntimeException e) {
      // no view now (no node answers): the requests' own timeouts still end them
      LOG.debug("no view to check the nodes decided out against: {}", e.toString());
    } catch (Throwable e) {
      LOG.error("the watch for nodes decided out failed; requests to them wait for their timeouts", e);
      throw e;
    }
  }

  @Override
  public void close() {
    task.cancel(false);
  }
}
