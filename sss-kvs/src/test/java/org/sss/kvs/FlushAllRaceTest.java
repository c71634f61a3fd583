package org.sss.kvs;

import static org.junit.jupiter.api.Assertions.assertEquals;

import java.nio.file.Path;
import java.util.ArrayList;
import java.util.Collections;
import java.util.List;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.io.TempDir;
import org.sss.core.proto.ErrorCode;
import org.sss.core.proto.TableOptions;

/**
 * NodeStore.flushAll (what StopNode runs) racing table drops, creates, job tables
 * and their commits: it must neither fail nor crash, and a table it raced must stay usable.
 */
@Timeout(value = 120, unit = TimeUnit.SECONDS)
class FlushAllRaceTest {
  @TempDir
  Path dir;

  @Test
  void flushAll_racingDropsCreatesAndCommits_neverFails() throws Exception {
    List<Throwable> failures = Collections.synchronizedList(new ArrayList<>());
    AtomicBoolean go = new AtomicBoolean(true);
    try (NodeStore store = NodeStore.open(dir)) {
      TableOptions noWal = TableOptions.newBuilder().setDisableWal(true).build();
      TableOptions bulk = TableOptions.newBuilder().setDisableWal(true).setDisableAutoCompaction(true).build();
      List<Thread> threads = new ArrayList<>();
      for (int w = 0; w < 2; w++) {
        int id = w;
        threads.add(new Thread(() -> {
          for (int round = 0; go.get(); round++) {
            try {
              String name = "t" + id;
              store.drop(name, true);
              StoreTable t = store.create(name, round % 2 == 0 ? noWal : bulk, false);
              PackedBatch b = t.newPackedBatch(1 << 16);
              for (int i = 0; i < 500; i++) {
                b.put(("k" + i).getBytes(), ("v" + round).getBytes());
              }
              b.commit();
              String job = "j" + id + "x" + round;
              StoreTable jt = store.createForJob(job, "sss-tmp-" + job + "-0", bulk, "out" + id, true);
              PackedBatch jb = jt.newPackedBatch(1 << 16);
              for (int i = 0; i < 500; i++) {
                jb.put(("k" + i).getBytes(), ("v" + round).getBytes());
              }
              jb.commit();
              if (round % 3 == 0) {
                store.abandon(job);
              } else {
                store.commit(job);
              }
              store.drop(name, true);
            } catch (StoreException e) {
              if (e.code() != ErrorCode.NO_SUCH_TABLE) {
                failures.add(e);
              }
            } catch (Throwable e) {
              failures.add(e);
            }
          }
        }, "ddl-" + w));
      }
      threads.add(new Thread(() -> {
        while (go.get()) {
          try {
            store.flushAll();
          } catch (Throwable e) {
            failures.add(e);
          }
        }
      }, "flusher"));
      threads.forEach(Thread::start);
      Thread.sleep(8000);
      go.set(false);
      for (Thread t : threads) {
        t.join();
      }
      assertEquals(List.of(), failures.stream().map(Throwable::toString).distinct().toList());
    }
  }
}
