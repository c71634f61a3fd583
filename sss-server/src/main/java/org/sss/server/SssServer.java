package org.sss.server;

import io.netty.bootstrap.ServerBootstrap;
import io.netty.channel.Channel;
import io.netty.channel.ChannelInitializer;
import io.netty.channel.ChannelOption;
import io.netty.channel.EventLoopGroup;
import io.netty.channel.nio.NioEventLoopGroup;
import io.netty.channel.socket.SocketChannel;
import io.netty.channel.socket.nio.NioServerSocketChannel;
import io.netty.handler.ssl.SslContext;
import io.netty.handler.ssl.SslContextBuilder;
import io.netty.util.concurrent.DefaultThreadFactory;
import java.io.IOException;
import java.net.InetAddress;
import java.net.InetSocketAddress;
import java.net.UnknownHostException;
import java.nio.channels.ServerSocketChannel;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.LinkedBlockingQueue;
import java.util.concurrent.ThreadPoolExecutor;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicReference;
import javax.net.ssl.SSLException;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;
import org.sss.core.proto.Request;
import org.sss.core.proto.ViewAnswer;
import org.sss.core.transport.Buffers;
import org.sss.core.transport.FrameLimit;
import org.sss.core.transport.Pipelines;
import org.sss.core.transport.Tls;
import org.sss.kvs.NodeStore;
import org.sss.server.execution.EngineService;
import org.sss.server.membership.Membership;
import org.sss.server.store.KvsService;
import org.sss.server.store.Relayout;
import org.sss.server.transport.ConnectionHandler;
import org.sss.server.transport.QueuedRequests;
import org.sss.server.transport.Unauthenticated;
import org.sss.server.transport.WorkerProgress;

/**
 * One SSS node: the node's store behind a Netty server.
 *
 * <p>Threads: one acceptor, a few event loops that only move bytes, and a worker pool that
 * runs store operations (RocksDB calls block, so they never run on an event loop).
 */
public final class SssServer implements AutoCloseable {
  private static final Logger LOG = LoggerFactory.getLogger(SssServer.class);

  private final NodeConfig config;
  private final NodeStore store;
  private final EventLoopGroup boss;
  private final EventLoopGroup io;
  private final ExecutorService workers;
  private final Channel listener;
  private final EngineService engine;
  private final NodeLock lock;
  private final QueuedRequests queued;
  /** This node's part in the membership of a replicated cluster; null with one copy. */
  private final Membership membership;
  private final AtomicBoolean closed = new AtomicBoolean();
  private final CountDownLatch closedFully = new CountDownLatch(1);

  private SssServer(NodeConfig config, NodeLock lock, NodeStore store, EngineService engine, EventLoopGroup boss,
                    EventLoopGroup io, ExecutorService workers, Channel listener,
                    Membership membership, QueuedRequests queued) {
    this.membership = membership;
    this.queued = queued;
    this.config = config;
    this.lock = lock;
    this.store = store;
    this.engine = engine;
    this.boss = boss;
    this.io = io;
    this.workers = workers;
    this.listener = listener;
  }

  /**
   * Opens the store and starts listening on the port the cluster file names. Refuses to listen
   * beyond loopback without a secret: the secret is all that stands between a stranger and the
   * node's data.
   */
  public static SssServer start(NodeConfig config) throws InterruptedException {
    return start(config, null);
  }

  /**
   * Like {@link #start(NodeConfig)}, on a socket bound beforehand (its port must be the one the
   * cluster file names for this node, its address the one the node listens on). The server owns
   * the listener from this call on, whether it starts or not.
   */
  public static SssServer start(NodeConfig config, NodeListener bound) throws InterruptedException {
    try {
      return open(config, bound);
    } catch (RuntimeException | InterruptedException | Error e) {
      if (bound != null) {
        bound.close(); // released unless the server had taken it (then the server closed it)
      }
      throw e;
    }
  }

  private static SssServer open(NodeConfig config, NodeListener bound) throws InterruptedException {
    String host = config.listenHost();
    if (config.cluster().secret().isEmpty() && !isLoopback(host)) {
      throw new IllegalArgumentException("refusing to listen on " + host
          + " without a cluster secret; set secret= in the cluster file");
    }
    if (bound != null) {
      if (bound.port() != config.port()) {
        throw new IllegalArgumentException("node " + config.nodeId() + ": the socket given is bound to port "
            + bound.port() + " but the cluster file says " + config.port());
      }
      if (!bound.listensOn(resolve(host))) {
        throw new IllegalArgumentException("node " + config.nodeId() + ": the socket given is bound to "
            + bound + " but the node listens on " + host);
      }
    }
    SslContext ssl = tls(config);
    // the context this node reaches its peers with: a missing or unreadable tls.trust is refused
    // here, before the store is touched, rather than by the engine once the store is open
    Tls.clientContext(config.cluster());
    NodeLock lock;
    try {
      lock = NodeLock.acquire(config.dataDir(), config.nodeId());
    } catch (IOException e) {
      throw new IllegalStateException("node " + config.nodeId() + ": cannot lock " + config.dataDir() + ": "
          + e.getMessage(), e);
    }
    NodeStore store;
    try {
      store = NodeStore.open(config.dataDir(), config.groupReadable());
    } catch (RuntimeException | Error e) { // an Error too (RocksDB's library not loading): the lock must go
      CleanupSteps.after(e).run(lock::close);
      throw e;
    }
    try {
      // a rebalance's instruction, if cluster resize left one: the one way to another layout
      int emptied = Relayout.applyIfAsked(store, config.dataDir(), config.cluster(), config.nodeId());
      if (emptied >= 0) {
        LOG.info("node {}: took the rebalanced partition layout {} ({} partition ranges emptied)", config.nodeId(),
            config.cluster().partitionMap().layout(), emptied);
      }
      store.checkLayout(config.cluster().partitionMap().layout());
    } catch (RuntimeException | Error e) {
      CleanupSteps.after(e).run(store::close).run(lock::close);
      if (e instanceof Error error) {
        throw error;
      }
      throw new IllegalStateException("node " + config.nodeId() + ": " + e.getMessage(), e);
    }
    AtomicReference<Membership> membership =
        new AtomicReference<>();
    KvsService kvs;
    EngineService made = null;
    try {
      kvs = new KvsService(store, config.cluster(), config.nodeId(), config.maxValueBytes(), membership::get);
      made = new EngineService(store, config.cluster(), config.nodeId(), config.workerThreads(),
          config.maxValueBytes());
      made.admitReadsThrough(membership::get);
    } catch (RuntimeException | Error e) {
      EngineService half = made; // it counts among the nodes open in this JVM until closed
      CleanupSteps.after(e).run(() -> {
        if (half != null) {
          half.close();
        }
      }).run(store::close).run(lock::close);
      throw e;
    }
    EngineService engine = made;
    ThreadPoolExecutor workers = null;
    EventLoopGroup boss = null;
    EventLoopGroup io = null;
    try {
      workers = new ThreadPoolExecutor(config.workerThreads(), config.workerThreads(),
          60, TimeUnit.SECONDS, new LinkedBlockingQueue<>(),
          new DefaultThreadFactory("sss-node" + config.nodeId() + "-worker", true));
      boss = new NioEventLoopGroup(1, new DefaultThreadFactory("sss-node" + config.nodeId() + "-accept", true));
      io = new NioEventLoopGroup(2, new DefaultThreadFactory("sss-node" + config.nodeId() + "-io", true));
    } catch (RuntimeException | Error e) {
      // an event loop's selector needs file descriptors: a start that runs out of them must not
      // keep the store and its lock open in this JVM (an embedded cluster's, which goes on)
      EventLoopGroup madeBoss = boss;
      ThreadPoolExecutor madeWorkers = workers;
      CleanupSteps.after(e).run(() -> {
        if (madeBoss != null) {
          madeBoss.shutdownGracefully(0, 0, TimeUnit.SECONDS);
        }
      }).run(() -> {
        if (madeWorkers != null) {
          madeWorkers.shutdownNow();
        }
      }).run(engine::close).run(store::close).run(lock::close);
      throw e;
    }
    WorkerProgress progress = new WorkerProgress(workers); // one per node: its connections share the workers
    String secret = config.cluster().secret();
    String layout = config.cluster().partitionMap().layout();
    // a StopNode can arrive between the listener's start and the server's construction: it waits
    CompletableFuture<SssServer> self = new CompletableFuture<>();
    ConnectionHandler.NodeStopper stopRequested = new ConnectionHandler.NodeStopper() {
      @Override
      public int stopAcceptingAndFlush() {
        return self.join().stopAcceptingAndFlush();
      }

      @Override
      public void closeSoon() {
        Thread closer = new Thread(self.join()::close, "sss-stop");
        closer.start(); // not a daemon: the process ends once it is done
      }
    };
    ServerSocketChannel[] socket = {null};
    Unauthenticated unauthenticated = new Unauthenticated(Unauthenticated.DEFAULT_MAX);
    QueuedRequests queued = new QueuedRequests(config.maxQueuedRequests());
    try {
      // before the node accepts a connection: a request must never find the node half made
      membership.set(Membership.start(config.cluster(), config.nodeId(), host,
          config.dataDir().resolve("membership"), store, config.tlsCert(), config.tlsKey()));
      if (membership.get() != null) {
        membership.get().onViewTaken(engine::viewTaken);
      }
      socket[0] = (bound != null ? bound : bind(config)).take();
      Channel ch = new ServerBootstrap()
          .group(boss, io)
          .channelFactory(() -> new NioServerSocketChannel(socket[0]))
          .childOption(ChannelOption.TCP_NODELAY, true)
          .childOption(ChannelOption.ALLOCATOR, Buffers.allocator())
          .childOption(ChannelOption.RCVBUF_ALLOCATOR, Pipelines.receiveBuffers())
          .childHandler(new ChannelInitializer<SocketChannel>() {
            @Override
            protected void initChannel(SocketChannel c) {
              if (ssl != null) {
                c.pipeline().addLast("tls", ssl.newHandler(c.alloc()));
              }
              FrameLimit frames = FrameLimit.untilAuthenticated(config.maxFrameBytes());
              Pipelines.addFraming(c.pipeline(), Request.parser(), frames);
              c.pipeline().addLast("node", new ConnectionHandler(secret, config.nodeId(), layout, kvs, engine,
                  progress, stopRequested, frames, unauthenticated, queued));
            }
          })
          .register().sync().channel(); // the socket is bound already: registering starts accepting
      LOG.info("node {} listening on {}:{}, data in {}", config.nodeId(), host, config.port(), config.dataDir());
      SssServer server = new SssServer(config, lock, store, engine, boss, io, workers, ch, membership.get(), queued);
      self.complete(server);
      return server;
    } catch (RuntimeException | Error | InterruptedException e) {
      self.completeExceptionally(e); // a StopNode that waited gets its failure
      EventLoopGroup madeBoss = boss;
      EventLoopGroup madeIo = io;
      ThreadPoolExecutor madeWorkers = workers;
      CleanupSteps.after(e).run(() -> {
        if (membership.get() != null) {
          membership.get().close();
        }
      }).run(() -> madeBoss.shutdownGracefully(0, 0, TimeUnit.SECONDS))
          .run(() -> madeIo.shutdownGracefully(0, 0, TimeUnit.SECONDS))
          .run(madeWorkers::shutdownNow).run(engine::close).run(store::close).run(lock::close)
          .run(() -> {
            if (socket[0] != null) {
              socket[0].close();
            }
          });
      throw e;
    }
  }

  /** Binds the port the cluster file names for this node. */
  private static NodeListener bind(NodeConfig config) {
    try {
      return NodeListener.bind(config.listenHost(), config.port());
    } catch (IOException e) {
      throw new IllegalStateException("node " + config.nodeId() + ": cannot listen on " + config.listenHost() + ":"
          + config.port() + ": " + e.getMessage(), e);
    }
  }

  private static InetAddress resolve(String host) {
    try {
      return InetAddress.getByName(host);
    } catch (UnknownHostException e) {
      throw new IllegalArgumentException("unknown host " + host, e);
    }
  }

  private static boolean isLoopback(String host) {
    try {
      return InetAddress.getByName(host).isLoopbackAddress();
    } catch (UnknownHostException e) {
      return false;
    }
  }

  private static SslContext tls(NodeConfig config) {
    if (config.tlsCert() == null) {
      if (config.cluster().tls()) {
        throw new IllegalArgumentException("the cluster file says tls=true but the node file has no tls.cert/tls.key");
      }
      return null;
    }
    if (!config.cluster().tls()) {
      throw new IllegalArgumentException("the node file has tls.cert but the cluster file does not say tls=true");
    }
    try {
      return SslContextBuilder.forServer(config.tlsCert().toFile(), config.tlsKey().toFile()).build();
    } catch (SSLException | IllegalArgumentException e) {
      throw new IllegalArgumentException("cannot load TLS certificate/key: " + e.getMessage(), e);
    }
  }

  public NodeConfig config() {
    return config;
  }

  /** This node's member of the cluster's membership; null in a cluster of one copy. */
  public Membership membership() {
    return membership;
  }

  /** This node's view of the membership (of a cluster of one copy: {@code replicated} false). */
  public ViewAnswer membershipView() {
    return membership == null ? ViewAnswer.getDefaultInstance() : membership.answer();
  }

  public NodeStore store() {
    return store;
  }

  /** The requests this node holds over all its connections (its bound, and the most it held). */
  public QueuedRequests queuedRequests() {
    return queued;
  }

  /** The port actually bound. */
  public int port() {
    return ((InetSocketAddress) listener.localAddress()).getPort();
  }

  /**
   * Blocks until the server is closed: every step of its release run (its store closed and its
   * lock released, unless that step itself failed, which its {@link #close} throws).
   */
  public void awaitClose() throws InterruptedException {
    closedFully.await();
  }

  /**
   * The first half of a {@code StopNode} request: no new connections, every table flushed. The
   * request is answered after this, so its sender knows the data is on disk; then the node closes.
   *
   * @return the tables flushed
   */
  int stopAcceptingAndFlush() {
    listener.close().awaitUninterruptibly();
    int flushed = store.flushAll();
    LOG.info("node {}: stop requested; {} table(s) flushed", config.nodeId(), flushed);
    return flushed;
  }

  /** Closes the node: connections, running jobs, then the store (flushed) and the node's lock. Idempotent. */
  @Override
  public void close() {
    if (!closed.compareAndSet(false, true)) {
      // another thread closes (a StopNode's, while SIGTERM's hook calls here): wait for it, or
      // the JVM would end in the middle of its flush
      try {
        closedFully.await();
      } catch (InterruptedException e) {
        Thread.currentThread().interrupt();
      }
      return;
    }
    // every step runs whatever the ones before it threw: the store must close and the lock go
    CleanupSteps steps = CleanupSteps.release();
    int[] flushed = {0};
    try {
      steps.run(() -> listener.close().awaitUninterruptibly())
          .run(() -> {
            if (membership != null) {
              membership.close();
            }
          })
          .run(engine::close)
          .run(() -> {
            var ioStopped = io.shutdownGracefully(0, 2, TimeUnit.SECONDS);
            boss.shutdownGracefully(0, 2, TimeUnit.SECONDS).awaitUninterruptibly();
            ioStopped.awaitUninterruptibly();
          })
          .run(() -> {
            workers.shutdown();
            try {
              workers.awaitTermination(10, TimeUnit.SECONDS);
            } catch (InterruptedException e) {
              Thread.currentThread().interrupt(); // the store still closes
            }
          })
          .run(() -> flushed[0] = store.closeFlushed())
          .run(lock::close);
      if (steps.failed()) {
        LOG.warn("node {} stopped, but a step of its release failed (every later step ran)", config.nodeId());
      } else {
        LOG.info("node {} stopped ({} table(s) flushed)", config.nodeId(), flushed[0]);
      }
    } finally {
      closedFully.countDown(); // a close waiting for this one ends either way
    }
    steps.done();
  }
}
