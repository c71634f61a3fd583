package org.sss.core.transport;

import com.google.protobuf.ByteString;
import io.netty.bootstrap.Bootstrap;
import io.netty.buffer.ByteBuf;
import io.netty.buffer.Unpooled;
import io.netty.channel.Channel;
import io.netty.channel.ChannelFuture;
import io.netty.channel.ChannelHandlerContext;
import io.netty.channel.ChannelInitializer;
import io.netty.channel.ChannelOption;
import io.netty.channel.ConnectTimeoutException;
import io.netty.channel.EventLoopGroup;
import io.netty.channel.SimpleChannelInboundHandler;
import io.netty.channel.socket.SocketChannel;
import io.netty.channel.socket.nio.NioSocketChannel;
import io.netty.handler.ssl.SslContext;
import java.io.IOException;
import java.time.Duration;
import java.util.Map;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicLong;
import javax.net.ssl.SSLException;
import org.sss.core.cluster.NodeAddress;
import org.sss.core.proto.ErrorCode;
import org.sss.core.proto.Hello;
import org.sss.core.proto.Request;
import org.sss.core.proto.Response;

/**
 * One authenticated connection to a node. Requests are pipelined: {@link #call} returns at
 * once with a future that completes, on a Netty event loop, when the response with the same
 * id arrives. Callbacks must not block.
 *
 * <p>When the connection breaks, every pending call fails with a
 * {@link NodeUnavailableException} naming the node; a call that gets no answer within the
 * request timeout fails the same way. The connection is closed then only when the node sent
 * nothing at all while the call waited (it hung or was cut off): a node that answers other
 * calls is alive and merely slow at this one, and closing a connection it shares with other
 * work (a job's coordinator, whose connection's end aborts the job) would fail that work too.
 * A late answer to a timed-out call is dropped.
 */
public final class Connection implements AutoCloseable {
  private final NodeAddress node;
  private final Channel channel;
  private final Duration requestTimeout;
  private final Map<Long, CompletableFuture<Frame<Response>>> pending = new ConcurrentHashMap<>();
  private final AtomicLong nextId = new AtomicLong(1);
  private final CompletableFuture<Connection> ready = new CompletableFuture<>();
  private volatile Throwable closedBecause;
  /** When the last frame arrived (System.nanoTime). */
  private volatile long lastFrameNanos = System.nanoTime();

  private Connection(NodeAddress node, Channel channel, Duration requestTimeout) {
    this.node = node;
    this.channel = channel;
    this.requestTimeout = requestTimeout;
  }

  /**
   * Connects and authenticates. The future fails with {@link NodeUnavailableException} if the
   * node cannot be reached or with {@link SssException} ({@link ErrorCode#UNAUTHENTICATED}) if
   * it rejects the secret.
   */
  public static CompletableFuture<Connection> open(NodeAddress node, String secret, String peerName,
                                                   SslContext ssl, int maxFrame, Duration requestTimeout) {
    return open(node, secret, peerName, "", ssl, maxFrame, requestTimeout);
  }

  /**
   * Like {@link #open(NodeAddress, String, String, SslContext, int, Duration)}, and the node
   * refuses the connection unless its partition layout is {@code layout} (empty: not checked).
   */
  public static CompletableFuture<Connection> open(NodeAddress node, String secret, String peerName, String layout,
                                                   SslContext ssl, int maxFrame, Duration requestTimeout) {
    EventLoopGroup group = ClientTransport.group();
    Connection[] holder = new Connection[1];
    CompletableFuture<Connection> result = new CompletableFuture<>();
    Bootstrap b = new Bootstrap()
        .group(group)
        .channel(NioSocketChannel.class)
        .option(ChannelOption.TCP_NODELAY, true)
        .option(ChannelOption.ALLOCATOR, Buffers.allocator())
        .option(ChannelOption.RCVBUF_ALLOCATOR, Pipelines.receiveBuffers())
        .option(ChannelOption.CONNECT_TIMEOUT_MILLIS, 10_000)
        .handler(new ChannelInitializer<SocketChannel>() {
          @Override
          protected void initChannel(SocketChannel ch) {
            if (ssl != null) {
              ch.pipeline().addLast("tls", ssl.newHandler(ch.alloc(), node.host(), node.port()));
            }
            Pipelines.addFraming(ch.pipeline(), Response.parser(), maxFrame);
            Connection c = new Connection(node, ch, requestTimeout);
            holder[0] = c;
            ch.pipeline().addLast("client", c.new Handler(secret, peerName, layout));
          }
        });
    ChannelFuture cf = b.connect(node.host(), node.port());
    cf.addListener(f -> {
      if (!f.isSuccess()) {
        String why = "cannot connect to " + node + ": " + f.cause().getMessage();
        result.completeExceptionally(f.cause() instanceof ConnectTimeoutException
            ? NodeUnavailableException.silent(why, f.cause()) : new NodeUnavailableException(why, f.cause()));
        return;
      }
      holder[0].ready.whenComplete((c, e) -> {
        if (e != null) {
          result.completeExceptionally(e);
        } else {
          result.complete(c);
        }
      });
      cf.channel().eventLoop().schedule(() -> {
        if (!holder[0].ready.isDone()) {
          holder[0].fail(NodeUnavailableException.silent(node + " did not complete the handshake", null));
        }
      }, 10, TimeUnit.SECONDS);
    });
    return result;
  }

  /** The node at the other end. */
  public NodeAddress node() {
    return node;
  }

  public boolean isActive() {
    return channel.isActive() && closedBecause == null;
  }

  /**
   * Sends a request with an optional body (ownership of the body passes to the connection).
   * The future fails with {@link SssException} when the server answers with an error code; the
   * caller owns the response's body and must release it.
   */
  public CompletableFuture<Frame<Response>> call(Request.Builder request, ByteBuf body) {
    return call(request, body, requestTimeout);
  }

  /**
   * Like {@link #call(Request.Builder, ByteBuf)} with its own timeout; {@link Duration#ZERO}
   * waits forever (for long-running requests such as a stage, watched by other means).
   */
  public CompletableFuture<Frame<Response>> call(Request.Builder request, ByteBuf body, Duration timeout) {
    CompletableFuture<Frame<Response>> future = new CompletableFuture<>();
    Throwable closed = closedBecause;
    if (closed != null || !channel.isActive()) {
      if (body != null) {
        body.release();
      }
      future.completeExceptionally(unavailable(closed));
      return future;
    }
    long id = nextId.getAndIncrement();
    pending.put(id, future);
    Frame<Request> frame = new Frame<>(request.setId(id).build(), body);
    channel.writeAndFlush(frame).addListener(f -> {
      if (!f.isSuccess()) {
        CompletableFuture<Frame<Response>> p = pending.remove(id);
        if (p != null) {
          p.completeExceptionally(unavailable(f.cause()));
        }
      }
    });
    if (!timeout.isZero()) {
      long sentNanos = System.nanoTime();
      channel.eventLoop().schedule(() -> {
        CompletableFuture<Frame<Response>> p = pending.remove(id);
        if (p != null) {
          boolean silent = lastFrameNanos - sentNanos <= 0;
          p.completeExceptionally(new NodeUnavailableException(
              node + " did not answer within " + timeout.toMillis() + " ms", null));
          if (silent) {
            channel.close();
          }
        }
      }, timeout.toMillis(), TimeUnit.MILLISECONDS);
    }
    return future;
  }

  /** Sends a request without a body. */
  public CompletableFuture<Frame<Response>> call(Request.Builder request) {
    return call(request, null);
  }

  private NodeUnavailableException unavailable(Throwable cause) {
    String why = cause == null ? "connection closed" : cause.getMessage();
    return new NodeUnavailableException("lost connection to " + node + ": " + why, cause);
  }

  /**
   * Why a connection could not be set up, naming the node: a refused secret or a wrong node stays
   * what the node said; anything else (a TLS handshake that failed, a connection closed before
   * the hello was answered) makes the node unavailable.
   */
  private SssException notConnected(Throwable cause) {
    if (cause instanceof SssException e) {
      return e;
    }
    Throwable c = cause;
    while (c instanceof io.netty.handler.codec.DecoderException && c.getCause() != null) {
      c = c.getCause();
    }
    String why = c instanceof SSLException
        ? "TLS handshake failed: " + c.getMessage()
        : c.getMessage() == null ? c.toString() : c.getMessage();
    return new NodeUnavailableException("cannot connect to " + node + ": " + why, cause);
  }

  private void fail(Throwable cause) {
    if (closedBecause == null) {
      closedBecause = cause;
    }
    if (!ready.isDone()) {
      ready.completeExceptionally(notConnected(cause));
    }
    for (Long id : pending.keySet()) {
      CompletableFuture<Frame<Response>> p = pending.remove(id);
      if (p != null) {
        p.completeExceptionally(cause instanceof SssException ? cause : unavailable(cause));
      }
    }
    channel.close();
  }

  @Override
  public void close() {
    fail(new IOException("closed by client"));
  }

  /** Whether some request sent on this connection still waits for its answer. */
  public boolean waiting() {
    return !pending.isEmpty();
  }

  /**
   * Closes the connection, failing every request still waiting on it as a lost connection,
   * saying {@code why}: for a peer known to be gone while its connection stays open (a node
   * whose disk hangs keeps answering on its event loop), whose requests would otherwise wait out
   * their timeout.
   */
  public void abandon(String why) {
    fail(new IOException(why));
  }

  private final class Handler extends SimpleChannelInboundHandler<Frame<Response>> {
    private final String secret;
    private final String peerName;
    private final String layout;

    Handler(String secret, String peerName, String layout) {
      super(false);
      this.secret = secret;
      this.peerName = peerName;
      this.layout = layout;
    }

    @Override
    protected void channelRead0(ChannelHandlerContext ctx, Frame<Response> frame) {
      lastFrameNanos = System.nanoTime();
      Response r = frame.header();
      if (r.hasChallenge()) {
        if (r.getChallenge().getNodeId() != node.id()) {
          // another node answers at this address (a stale or copied cluster file): talking to
          // it would route keys to a node that does not own them
          frame.release();
          fail(new SssException(ErrorCode.BAD_REQUEST, node.hostPort() + " is node " + r.getChallenge().getNodeId()
              + " of its cluster, not node " + node.id() + " as the cluster file says"));
          return;
        }
        if (r.getChallenge().getProtocolVersion() != Pipelines.PROTOCOL_VERSION) {
          frame.release();
          fail(new SssException(ErrorCode.BAD_REQUEST, node.hostPort() + " speaks protocol version "
              + r.getChallenge().getProtocolVersion() + ", this client " + Pipelines.PROTOCOL_VERSION
              + ": run the same SSS version on every node and client"));
          return;
        }
        byte[] clientNonce = Auth.nonce();
        byte[] serverNonce = r.getChallenge().getNonce().toByteArray();
        byte[] mac = Auth.mac(secret, serverNonce, clientNonce);
        Request.Builder hello = Request.newBuilder().setHello(Hello.newBuilder()
            .setMac(ByteString.copyFrom(mac))
            .setClientNonce(ByteString.copyFrom(clientNonce))
            .setProtocolVersion(Pipelines.PROTOCOL_VERSION)
            .setPeerName(peerName)
            .setLayout(layout));
        // The hello's answer completes the ready future rather than a caller's.
        long id = nextId.getAndIncrement();
        CompletableFuture<Frame<Response>> helloAnswer = new CompletableFuture<>();
        pending.put(id, helloAnswer);
        helloAnswer.whenComplete((ok, e) -> {
          if (e != null) {
            fail(e);
            return;
          }
          byte[] proof = ok.header().getWelcome().getProof().toByteArray();
          ok.release();
          if (!Auth.verifyServer(secret, serverNonce, clientNonce, proof)) {
            // whatever listens there does not know the secret: not the node, whatever it says
            fail(new SssException(ErrorCode.UNAUTHENTICATED, node + " did not prove that it knows the cluster"
                + " secret: it is not the cluster's node (another process on its port?)"));
            return;
          }
          ready.complete(Connection.this);
        });
        ctx.writeAndFlush(Frame.of(hello.setId(id).build()));
        frame.release();
        return;
      }
      if (r.getId() == 0 && r.getCode() != ErrorCode.OK) {
        frame.release();
        fail(new SssException(r.getCode(), node + ": " + r.getMessage()));
        return;
      }
      CompletableFuture<Frame<Response>> p = pending.remove(r.getId());
      if (p == null) {
        frame.release();
        return;
      }
      if (r.getCode() != ErrorCode.OK) {
        frame.release();
        p.completeExceptionally(r.getCode() == ErrorCode.NOT_SERVING
            ? new NodeUnavailableException(r.getCode(), node + ": " + r.getMessage())
            : new SssException(r.getCode(), node + ": " + r.getMessage()));
      } else if (!p.complete(frame)) {
        frame.release(); // the caller gave up on it (a node decided out while the request hung)
      }
    }

    @Override
    public void channelInactive(ChannelHandlerContext ctx) {
      fail(new IOException("connection closed"));
    }

    @Override
    public void exceptionCaught(ChannelHandlerContext ctx, Throwable cause) {
      fail(cause);
    }
  }

  /** Returns an empty body buffer for callers that build one. */
  public ByteBuf newBody(int capacity) {
    return channel.alloc().buffer(capacity);
  }

  static ByteBuf empty() {
    return Unpooled.EMPTY_BUFFER;
  }
}
