package org.sss.client.it;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.io.ByteArrayOutputStream;
import java.io.PrintStream;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;
import org.sss.client.SssClient;
import org.sss.client.cluster.SssCluster;
import org.sss.client.io.BulkIO;
import org.sss.client.job.Job;
import org.sss.client.job.JobFailedException;
import org.sss.client.job.TestJobs;
import org.sss.core.api.Serdes;
import org.sss.core.keys.KeyCodec;
import org.sss.core.proto.DataType;
import org.sss.core.proto.ErrorCode;
import org.sss.core.proto.TableOptions;

/**
 * A table's declared types are kept by the writers that know what they write (load, jobs), and
 * a table that holds pairs of other types all the same (written through the raw byte API) can
 * still be read out whole.
 */
class TypeContractTest {
  static SssCluster cluster;
  static SssClient client;

  @TempDir
  Path dir;

  @BeforeAll
  static void start() throws Exception {
    cluster = SssCluster.embedded(3);
    client = cluster.client();
  }

  @AfterAll
  static void stop() {
    client.close();
    cluster.close();
  }

  private static TableOptions strings() {
    return TableOptions.newBuilder().setKeyType(DataType.STRING).setValueType(DataType.STRING).build();
  }

  @Test
  void loadOfATextFileIntoAStringKeyedTable_isRefusedWithNothingWritten() throws Exception {
    client.createTable("names", strings(), false);
    client.put("names", KeyCodec.encodeString("ada"), "lovelace".getBytes(StandardCharsets.UTF_8));
    Path text = dir.resolve("some.txt");
    Files.writeString(text, "one\ntwo\n");
    IllegalArgumentException e = assertThrows(IllegalArgumentException.class,
        () -> BulkIO.load(client, "names", text, n -> { }));
    assertTrue(e.getMessage().contains("holds key=string value=string")
        && e.getMessage().contains("key=long value=string") && e.getMessage().contains("nothing was written"),
        e.getMessage());
    assertEquals(1, client.count("names"));
  }

  @Test
  void jobDeclaringOtherTypesThanItsInput_isRefusedBeforeAnyTask() {
    client.createTable("typed", strings(), false);
    client.put("typed", KeyCodec.encodeString("k"), "v".getBytes(StandardCharsets.UTF_8));
    Job job = Job.named("mistyped").input("typed", Serdes.LONG, Serdes.STRING)
        .map(TestJobs.ModTen.class, Serdes.LONG, Serdes.LONG)
        .output("mistyped-out").build();
    JobFailedException e = assertThrows(JobFailedException.class, () -> client.submit(job).await());
    assertEquals(ErrorCode.BAD_REQUEST, e.code());
    assertTrue(e.getMessage().contains("stage 0 reads table 'typed', which holds key=string value=string, as key=long"),
        e.getMessage());
    assertTrue(client.listTables().stream().noneMatch(t -> t.getName().equals("mistyped-out")));
  }

  @Test
  void tableWithPairsOfOtherTypes_stillDumpsWhole_withAWarning() throws Exception {
    client.createTable("mixed", strings(), false);
    client.put("mixed", KeyCodec.encodeString("fine"), "text".getBytes(StandardCharsets.UTF_8));
    client.put("mixed", KeyCodec.encodeLong(7), "long-keyed".getBytes(StandardCharsets.UTF_8)); // the old way
    Path out = dir.resolve("mixed.txt");
    PrintStream err = System.err;
    ByteArrayOutputStream captured = new ByteArrayOutputStream();
    System.setErr(new PrintStream(captured, true, StandardCharsets.UTF_8));
    long n;
    try {
      n = BulkIO.dump(client, "mixed", out, x -> { });
    } finally {
      System.setErr(err);
    }
    assertEquals(2, n);
    List<String> lines = Files.readAllLines(out);
    assertEquals(2, lines.size(), lines.toString());
    assertTrue(lines.contains("fine\ttext"), lines.toString());
    assertTrue(lines.contains("0x8000000000000007\tlong-keyed"), lines.toString());
    String warning = captured.toString(StandardCharsets.UTF_8);
    assertTrue(warning.contains("1 key(s) or value(s) of table 'mixed' do not decode as key=string value=string"),
        warning);
  }
}
