package org.sss.server;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertSame;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.netty.channel.Channel;
import java.lang.reflect.Field;
import java.lang.reflect.InvocationTargetException;
import java.lang.reflect.Proxy;
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.util.List;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.io.TempDir;
import org.sss.core.cluster.ClusterSpec;
import org.sss.core.cluster.NodeAddress;
import org.sss.core.proto.TableOptions;
import org.sss.kvs.StoreTable;
import org.sss.kvs.TableBatch;

/**
 * A real node whose release step really throws: the later steps still run, so the store is
 * closed flushed and the lock released (the node starts again on the same directory in this
 * JVM), and a close or awaitClose waiting on it ends.
 */
/**
 * A node whose release fails at one step still runs the others: its store closes flushed, its
 * lock goes (the node starts again on the same directory in this JVM), and a close or an
 * {@code awaitClose} that waits for it returns. The failing step is a real one (the server's own
 * listener or worker pool) wrapped to throw after doing its work.
 */
@Timeout(value = 60, unit = TimeUnit.SECONDS)
class SssServerCloseFailureTest {
  @TempDir
  Path dir;

  private static NodeConfig config(int port, Path data) {
    ClusterSpec spec = ClusterSpec.of(List.of(new NodeAddress(0, "127.0.0.1", port)), 8, "");
    NodeConfig d = NodeConfig.of(spec, 0, data);
    return new NodeConfig(spec, 0, data, null, d.maxFrameBytes(), d.maxValueBytes(), d.workerThreads(), null, null);
  }

  /** A proxy of {@code real} whose {@code method} does the real thing, then throws {@code thrown}. */
  @SuppressWarnings("unchecked")
  private static <T> T throwingAfter(Class<T> type, T real, String method, RuntimeException thrown) {
    return (T) Proxy.newProxyInstance(type.getClassLoader(), new Class<?>[] {type}, (p, m, args) -> {
      Object r;
      try {
        r = m.invoke(real, args);
      } catch (InvocationTargetException e) {
        throw e.getCause();
      }
      if (m.getName().equals(method)) {
        throw thrown;
      }
      return r;
    });
  }

  private static void replace(SssServer server, String field, Object value) throws Exception {
    Field f = SssServer.class.getDeclaredField(field);
    f.setAccessible(true);
    f.set(server, value);
  }

  private SssServer startWithData(Path data) throws Exception {
    NodeListener socket = NodeListener.bind("127.0.0.1", 0);
    SssServer server = SssServer.start(config(socket.port(), data), socket);
    StoreTable t = server.store().create("t", TableOptions.newBuilder().setDisableWal(true).build(), false);
    try (TableBatch b = t.newBatch()) {
      b.put("k".getBytes(StandardCharsets.UTF_8), "v".getBytes(StandardCharsets.UTF_8));
      b.commit();
    }
    return server;
  }

  private void assertReleased(Path data) throws Exception {
    NodeListener socket = NodeListener.bind("127.0.0.1", 0);
    try (SssServer again = SssServer.start(config(socket.port(), data), socket)) { // the lock went
      assertTrue(again.store().openedAfterFlushedClose(), "the store was closed flushed");
      assertArrayEquals("v".getBytes(StandardCharsets.UTF_8), again.store().require("t").get(
          "k".getBytes(StandardCharsets.UTF_8)), "a pair of a table without WAL survived: it was flushed");
    }
  }

  private void closeFailsAndReleases(String field, Class<?> type, String method) throws Exception {
    Path data = dir.resolve(field);
    SssServer server = startWithData(data);
    Field f = SssServer.class.getDeclaredField(field);
    f.setAccessible(true);
    RuntimeException boom = new IllegalStateException("boom in " + field + "." + method);
    @SuppressWarnings({"unchecked", "rawtypes"})
    Object proxy = throwingAfter((Class) type, f.get(server), method, boom);
    replace(server, field, proxy);

    assertSame(boom, assertThrows(IllegalStateException.class, server::close), "close throws the step's failure");
    assertReleased(data);
    Thread waiter = new Thread(() -> {
      try {
        server.awaitClose();
      } catch (InterruptedException e) {
        Thread.currentThread().interrupt();
      }
    });
    Thread second = new Thread(server::close);
    waiter.setDaemon(true);
    second.setDaemon(true);
    waiter.start();
    second.start();
    waiter.join(10_000);
    second.join(10_000);
    assertTrue(!waiter.isAlive(), "awaitClose returns once the close ended, failed or not");
    assertTrue(!second.isAlive(), "a second close returns once the first ended, failed or not");
  }

  @Test
  void theFirstStepThrows_theStoreClosesFlushed_andTheNodeStartsAgainInThisJvm() throws Exception {
    closeFailsAndReleases("listener", Channel.class, "close");
  }

  @Test
  void theWorkersStepThrows_theStoreClosesFlushed_andTheNodeStartsAgainInThisJvm() throws Exception {
    closeFailsAndReleases("workers", ExecutorService.class, "shutdown");
  }

  @Test
  void anInterruptedClose_closesTheStore_andKeepsTheFlag() throws Exception {
    Path data = dir.resolve("interrupted");
    SssServer server = startWithData(data);
    Thread.currentThread().interrupt();
    try {
      server.close();
      assertTrue(Thread.currentThread().isInterrupted(), "the flag is kept");
    } finally {
      Thread.interrupted();
    }
    assertReleased(data);
  }
}
