package org.sss.server.transport;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.util.ArrayList;
import java.util.Collections;
import java.util.List;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;

class OrderedLaneTest {
  @Test
  void tasksRunOneAtATimeInTheOrderGiven_onAManyThreadPool() throws Exception {
    ExecutorService pool = Executors.newFixedThreadPool(4);
    try {
      OrderedLane lane = new OrderedLane(pool);
      List<Integer> ran = Collections.synchronizedList(new ArrayList<>());
      int[] running = new int[1];
      boolean[] overlapped = new boolean[1];
      CountDownLatch done = new CountDownLatch(1000);
      for (int i = 0; i < 1000; i++) {
        int n = i;
        lane.execute(() -> {
          synchronized (running) {
            overlapped[0] |= ++running[0] > 1;
          }
          ran.add(n);
          synchronized (running) {
            running[0]--;
          }
          done.countDown();
        });
      }
      assertTrue(done.await(10, TimeUnit.SECONDS));
      List<Integer> expected = new ArrayList<>();
      for (int i = 0; i < 1000; i++) {
        expected.add(i);
      }
      assertEquals(expected, ran);
      assertTrue(!overlapped[0], "two tasks of one lane ran at once");
    } finally {
      pool.shutdownNow();
    }
  }

  @Test
  void aBusyLane_givesItsThreadBackBetweenTasks() throws Exception {
    ExecutorService pool = Executors.newSingleThreadExecutor();
    try {
      OrderedLane lane = new OrderedLane(pool);
      List<String> order = Collections.synchronizedList(new ArrayList<>());
      CountDownLatch firstRunning = new CountDownLatch(1);
      CountDownLatch release = new CountDownLatch(1);
      lane.execute(() -> {
        order.add("lane 1");
        firstRunning.countDown();
        await(release);
      });
      lane.execute(() -> order.add("lane 2"));
      assertTrue(firstRunning.await(5, TimeUnit.SECONDS));
      pool.execute(() -> order.add("other")); // queued while the lane's first task runs
      release.countDown();
      CountDownLatch drained = new CountDownLatch(1);
      lane.execute(drained::countDown);
      assertTrue(drained.await(5, TimeUnit.SECONDS));
      assertEquals(List.of("lane 1", "other", "lane 2"), order);
    } finally {
      pool.shutdownNow();
    }
  }

  private static void await(CountDownLatch latch) {
    try {
      latch.await(5, TimeUnit.SECONDS);
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
    }
  }
}
