import java.nio.file.Path;
import java.util.*;
import org.sss.client.SssClient;
import org.sss.core.api.Serdes;
import org.sss.core.cluster.ClusterSpec;

/** Random gets and one multiGet of a loaded text table (keys: line offsets), for block-size.sh. */
public class RandomGets {
  public static void main(String[] a) throws Exception {
    ClusterSpec spec = ClusterSpec.load(Path.of(a[0]));
    String table = a[1];
    long fileSize = Long.parseLong(a[2]);
    // keys are line offsets: collect real ones by scanning offsets from the file
    List<Long> offsets = new ArrayList<>();
    try (var in = new java.io.BufferedInputStream(new java.io.FileInputStream(a[3]), 1 << 20)) {
      long pos = 0; int b; offsets.add(0L);
      while ((b = in.read()) >= 0) { pos++; if (b == '\n' && pos < fileSize) offsets.add(pos); }
    }
    Random rnd = new Random(1);
    try (SssClient c = SssClient.connect(spec)) {
      for (int round = 0; round < 3; round++) {
        int n = 5000; long t0 = System.nanoTime(); int found = 0;
        for (int i = 0; i < n; i++) {
          long k = offsets.get(rnd.nextInt(offsets.size()));
          if (c.get(table, Serdes.LONG.encodeKey(k)).isPresent()) found++;
        }
        long t1 = System.nanoTime();
        List<byte[]> keys = new ArrayList<>();
        for (int i = 0; i < 20000; i++) keys.add(Serdes.LONG.encodeKey(offsets.get(rnd.nextInt(offsets.size()))));
        long t2 = System.nanoTime();
        List<byte[]> got = c.multiGet(table, keys);
        long t3 = System.nanoTime();
        System.out.printf("round %d: get %.1f us each (%d/%d found); multiGet of 20000: %.1f us a key%n", round, (t1 - t0) / 1e3 / n, found, n, (t3 - t2) / 1e3 / 20000);
      }
    }
  }
}
