package org.sss.client.it;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import com.google.protobuf.ByteString;
import java.io.DataInputStream;
import java.io.EOFException;
import java.io.IOException;
import java.io.OutputStream;
import java.net.Socket;
import java.net.SocketException;
import java.net.SocketTimeoutException;
import java.nio.ByteBuffer;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import org.sss.core.transport.Pipelines;
import org.sss.core.cluster.NodeAddress;
import org.sss.core.proto.ErrorCode;
import org.sss.core.proto.Hello;
import org.sss.core.proto.Request;
import org.sss.core.proto.Response;
import org.sss.core.transport.Auth;

/**
 * A plain blocking socket that speaks the wire format by hand, to send what a well-behaved
 * client never would:
 * {@code | u32 BE frame length | u32 BE header length | protobuf header | body |}.
 */
public final class RawWire implements AutoCloseable {
  /** A frame as read off the wire. */
  public record RawFrame(Response header, byte[] body) {}

  private final Socket socket;
  private final DataInputStream in;
  private final OutputStream out;

  private RawWire(Socket socket) throws IOException {
    this.socket = socket;
    this.in = new DataInputStream(socket.getInputStream());
    this.out = socket.getOutputStream();
  }

  public static RawWire connect(NodeAddress node) throws IOException {
    Socket s = new Socket(node.host(), node.port());
    s.setSoTimeout(15_000);
    s.setTcpNoDelay(true);
    return new RawWire(s);
  }

  /** Reads one frame; null when the server closed the connection before a frame began. */
  public RawFrame read() throws IOException {
    int frameLength;
    try {
      frameLength = in.readInt();
    } catch (EOFException e) {
      return null;
    }
    int headerLength = in.readInt();
    byte[] header = new byte[headerLength];
    in.readFully(header);
    byte[] body = new byte[frameLength - 4 - headerLength];
    in.readFully(body);
    return new RawFrame(Response.parseFrom(header), body);
  }

  /** Reads the challenge every connection starts with and returns its nonce. */
  public byte[] challenge() throws IOException {
    RawFrame f = read();
    assertTrue(f != null && f.header().hasChallenge(), "the server opens with a challenge");
    return f.header().getChallenge().getNonce().toByteArray();
  }

  /** A hello that proves {@code secret} for the server nonce. */
  public static Request hello(long id, String secret, byte[] serverNonce) {
    byte[] clientNonce = Auth.nonce();
    return Request.newBuilder().setId(id).setHello(Hello.newBuilder()
        .setMac(ByteString.copyFrom(Auth.mac(secret, serverNonce, clientNonce)))
        .setClientNonce(ByteString.copyFrom(clientNonce))
        .setProtocolVersion(Pipelines.PROTOCOL_VERSION)
        .setPeerName("raw-test")).build();
  }

  /** Challenge, hello, OK. */
  public RawWire authenticate(String secret) throws IOException {
    byte[] nonce = challenge();
    write(hello(1, secret, nonce), new byte[0]);
    RawFrame ok = read();
    assertTrue(ok != null, "an answer to the hello");
    assertEquals(ErrorCode.OK, ok.header().getCode(), ok.header().getMessage());
    return this;
  }

  public void write(Request header, byte[] body) throws IOException {
    byte[] h = header.toByteArray();
    ByteBuffer b = ByteBuffer.allocate(8 + h.length + body.length);
    b.putInt(4 + h.length + body.length).putInt(h.length).put(h).put(body);
    writeRaw(b.array());
  }

  public void writeRaw(byte[] bytes) throws IOException {
    out.write(bytes);
    out.flush();
  }

  /**
   * Reads until the server closes the connection and returns the frames it sent first; fails
   * when the connection is still open after {@code within}.
   */
  public List<RawFrame> framesUntilClosed(Duration within) throws IOException {
    List<RawFrame> frames = new ArrayList<>();
    long deadline = System.nanoTime() + within.toNanos();
    while (true) {
      int left = (int) Math.max(1, (deadline - System.nanoTime()) / 1_000_000);
      socket.setSoTimeout(left);
      try {
        RawFrame f = read();
        if (f == null) {
          return frames;
        }
        frames.add(f);
      } catch (SocketTimeoutException e) {
        throw new AssertionError("the server kept the connection open for " + within.toMillis()
            + " ms (frames so far: " + frames + ")");
      } catch (SocketException | EOFException e) {
        return frames; // reset by the server, or closed inside a frame
      }
    }
  }

  /** True when the server has not closed the connection within {@code wait}. */
  public boolean stillOpenAfter(Duration wait) throws IOException {
    socket.setSoTimeout((int) wait.toMillis());
    try {
      int b = in.read();
      if (b < 0) {
        return false;
      }
      throw new AssertionError("unexpected byte from the server: " + b);
    } catch (SocketTimeoutException e) {
      return true;
    } catch (SocketException e) {
      return false;
    } finally {
      socket.setSoTimeout(15_000);
    }
  }

  @Override
  public void close() throws IOException {
    socket.close();
  }
}
