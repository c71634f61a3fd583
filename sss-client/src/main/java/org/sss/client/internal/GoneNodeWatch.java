package org.sss.client.internal;

import io.netty.util.concurrent.DefaultThreadFactory;
import java.util.Set;
import java.util.TreeSet;
import java.util.concurrent.Executors;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.TimeUnit;
import java.util.function.Supplier;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;
import org.sss.core.proto.ClusterView;

/**
 * Fails at once what a client of a replicated cluster waits for from a node the members have
 * decided down or out.
 *
 * <h2>Why</h2>
 * A killed node's connection breaks by itself, and every reader and writer then goes to another
 * copy (or sends a write again once the node is out). A node whose disk hangs keeps its
 * connection open and answers on its event loop, and the members decide it down by what it
 * reports; but a read or a write already sent to it would wait out the client's timeout
 * (120 s by default) first. So while requests wait, the view is read every
 * {@link #CHECK_EVERY_MILLIS}, and the connection to each node it has down or out is abandoned
 * if requests wait on it: they fail as on a lost connection, naming the decision. Reading the
 * view costs one small request per node, answered on the nodes' event loops, and only while
 * some request waits.
 */
public final class GoneNodeWatch implements AutoCloseable {
  private static final Logger LOG = LoggerFactory.getLogger(GoneNodeWatch.class);
  static final long CHECK_EVERY_MILLIS = 2_000;

  private final NodeChannels channels;
  private final Supplier<ClusterView> freshView;
  private final ScheduledExecutorService timer;

  public GoneNodeWatch(NodeChannels channels, Supplier<ClusterView> freshView) {
    this.channels = channels;
    this.freshView = freshView;
    this.timer = Executors.newSingleThreadScheduledExecutor(new DefaultThreadFactory("sss-client-gone-nodes", true));
    timer.scheduleWithFixedDelay(this::check, CHECK_EVERY_MILLIS, CHECK_EVERY_MILLIS, TimeUnit.MILLISECONDS);
  }

  private void check() {
    try {
      if (!channels.anyWaiting()) {
        return;
      }
      ClusterView view = freshView.get();
      Set<Integer> gone = new TreeSet<>(view.getDownList());
      gone.addAll(view.getOutList());
      for (int node : gone) {
        String why = (view.getDownList().contains(node) ? "decided down" : "decided out")
            + " by the members (membership epoch " + view.getEpoch() + ")";
        if (channels.abandonIfWaiting(node, why)) {
          LOG.info("node {}: {}; what waited on it goes to the other copies", node, why);
        }
      }
    } catch (RuntimeException e) {
      // no view now (no node answers): the requests' own timeouts still end them
    }
  }

  @Override
  public void close() {
    timer.shutdownNow();
  }
}
