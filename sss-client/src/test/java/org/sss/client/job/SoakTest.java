package org.sss.client.job;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.Map;
import java.util.TreeMap;
import java.util.concurrent.CompletableFuture;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import java.util.stream.Stream;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;
import org.sss.client.BulkWriter;
import org.sss.client.ScanOptions;
import org.sss.client.SssClient;
import org.sss.client.TableScan;
import org.sss.client.TableStatus;
import org.sss.client.cluster.LocalProcessCluster;
import org.sss.client.io.BulkIO;
import org.sss.core.api.Pair;
import org.sss.core.api.Serdes;

/**
 * 200 small jobs from two concurrent clients on a 3-process cluster: every result correct, and
 * the servers' threads, open files and live heap end within a small bound of where they began.
 */
class SoakTest {
  static final int JOBS = Integer.getInteger("sss.test.soakJobs", 200);

  @TempDir
  Path dir;

  record Usage(long threads, long fds, long heapKb) {}

  static Usage usage(long pid) throws Exception {
    long threads = Files.readAllLines(Path.of("/proc/" + pid + "/status")).stream()
        .filter(l -> l.startsWith("Threads:")).mapToLong(l -> Long.parseLong(l.substring(8).trim())).sum();
    long fds;
    try (Stream<Path> s = Files.list(Path.of("/proc/" + pid + "/fd"))) {
      fds = s.count();
    }
    jcmd(pid, "GC.run");
    String info = jcmd(pid, "GC.heap_info");
    long heap = 0;
    Matcher m = Pattern.compile("used (\\d+)K").matcher(info);
    while (m.find()) {
      heap += Long.parseLong(m.group(1));
    }
    return new Usage(threads, fds, heap);
  }

  static String jcmd(long pid, String command) throws IOException, InterruptedException {
    Path jcmd = Path.of(System.getProperty("java.home"), "bin", "jcmd");
    Process p = new ProcessBuilder(jcmd.toString(), Long.toString(pid), command).redirectErrorStream(true).start();
    String out = new String(p.getInputStream().readAllBytes());
    p.waitFor();
    return out;
  }

  static Job job(int i) {
    return Job.named("soak").input("rows", Serdes.LONG, Serdes.STRING)
        .map(TestJobs.ModTen.class, Serdes.LONG, Serdes.LONG)
        .combine(TestJobs.SumLongs.class)
        .reduce(TestJobs.SumLongs.class, Serdes.LONG, Serdes.LONG)
        .output("soak-" + (i % 4)).overwrite().build();
  }

  static void check(SssClient client, String table) {
    Map<Long, Long> actual = new TreeMap<>();
    try (TableScan s = client.scan(table, ScanOptions.inKeyOrder())) {
      while (s.hasNext()) {
        Pair p = s.next();
        actual.put(Serdes.LONG.decodeKey(p.key()), Serdes.LONG.decodeValue(p.value()));
      }
    }
    Map<Long, Long> expected = new TreeMap<>();
    for (long k = 0; k < 10; k++) {
      expected.put(k, 100L);
    }
    assertEquals(expected, actual, table);
  }

  @Test
  void twoHundredJobsFromTwoClients_leaveNoThreadsFilesOrHeapBehind() throws Exception {
    LocalProcessCluster cluster = LocalProcessCluster.start(dir, 3, 0, "512m");
    try (SssClient a = SssClient.connect(cluster.spec()); SssClient b = SssClient.connect(cluster.spec())) {
      a.createTable("rows", BulkIO.textTable(), false);
      try (BulkWriter w = a.writer("rows", BulkIO.textTable().types())) {
        for (long i = 1; i <= 1000; i++) {
          w.put(Serdes.LONG.encodeKey(i), Serdes.STRING.encodeValue("r" + i));
        }
      }
      for (int i = 0; i < 20; i++) {
        a.submit(job(i)).await();
      }
      Usage[] before = new Usage[3];
      for (int n = 0; n < 3; n++) {
        before[n] = usage(cluster.pid(n).orElseThrow());
      }
      CompletableFuture<Void> first = CompletableFuture.runAsync(() -> {
        for (int i = 0; i < JOBS / 2; i++) {
          a.submit(job(2 * i)).await();
          check(a, "soak-" + (2 * i % 4));
        }
      });
      CompletableFuture<Void> second = CompletableFuture.runAsync(() -> {
        for (int i = 0; i < JOBS / 2; i++) {
          b.submit(job(2 * i + 1)).await();
          check(b, "soak-" + ((2 * i + 1) % 4));
        }
      });
      first.get();
      second.get();
      for (TableStatus t : a.listTables()) {
        assertTrue(!t.name().startsWith("sss-tmp-"), "left behind: " + t.name());
      }
      for (int n = 0; n < 3; n++) {
        Usage after = usage(cluster.pid(n).orElseThrow());
        String where = "node " + n + ": before " + before[n] + ", after " + after;
        assertTrue(after.threads() <= before[n].threads() + 8, where);
        assertTrue(after.fds() <= before[n].fds() + 16, where);
        assertTrue(after.heapKb() <= before[n].heapKb() + 32 * 1024, where);
        System.err.println(where);
      }
    } finally {
      cluster.stopAll();
    }
  }
}
