package org.sss.server.execution;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertInstanceOf;
import static org.junit.jupiter.api.Assertions.assertNotSame;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.io.ByteArrayOutputStream;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.Random;
import java.util.concurrent.ThreadPoolExecutor;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.io.TempDir;
import org.sss.core.api.Emitter;
import org.sss.core.api.Mapper;
import org.sss.core.api.Serde;
import org.sss.core.api.Serdes;
import org.sss.core.cluster.ClusterSpec;
import org.sss.core.keys.PairTypes;
import org.sss.core.proto.DataType;
import org.sss.core.proto.FileSplit;
import org.sss.core.proto.StageSpec;
import org.sss.kvs.StoreTable;
import org.sss.server.NodeConfig;

/**
 * Map tasks over splits of a text file: every line once, in order, keyed by its offset, each as
 * the lines' serde decodes the line's bytes (the reader decodes them itself for the built-in serdes).
 */
@Timeout(value = 120, unit = TimeUnit.SECONDS, threadMode = Timeout.ThreadMode.SEPARATE_THREAD)
class MapTaskTextSplitTest {
  @TempDir
  Path dir;

  private final ClusterSpec spec = StageFixture.cluster(1, 4);
  private StageFixture node;

  /** What each task's mapper saw, by task (one task runs at a time here). */
  static final List<Object[]> seen = new ArrayList<>();
  static volatile boolean block;

  @BeforeEach
  void open() {
    node = new StageFixture(dir.resolve("store"), spec, 0);
    synchronized (seen) {
      seen.clear();
    }
    block = false;
  }

  @AfterEach
  void close() {
    node.close();
  }

  /** Records (key, value) as given, emits nothing. */
  static final class Record implements Mapper<Object, Object, Long, String> {
    @Override
    public void map(Object key, Object value, Emitter<Long, String> out) {
      synchronized (seen) {
        seen.add(new Object[] {key, value});
      }
      while (block) {
        Thread.onSpinWait();
      }
    }
  }

  /** A user's line serde (a STRING type, so Job.Builder.inputText takes it) that rejects a line. */
  public static final class PickyLines implements Serde<String> {
    @Override
    public byte[] encodeKey(String key) {
      return Serdes.STRING.encodeKey(key);
    }

    @Override
    public String decodeKey(byte[] bytes) {
      return Serdes.STRING.decodeKey(bytes);
    }

    @Override
    public byte[] encodeValue(String value) {
      return Serdes.STRING.encodeValue(value);
    }

    @Override
    public String decodeValue(byte[] bytes) {
      if (bytes.length == 0) {
        throw new IllegalArgumentException("an empty line is not a record");
      }
      return Serdes.STRING.decodeValue(bytes);
    }

    @Override
    public DataType dataType() {
      return DataType.STRING;
    }
  }

  private static void line(ByteArrayOutputStream b, byte[] text, String end) {
    b.writeBytes(text);
    b.writeBytes(end.getBytes(StandardCharsets.ISO_8859_1));
  }

  /** A file of every kind of line; returns its (offset, bytes) lines as Hadoop's LineReader gives them. */
  private static byte[] file(List<long[]> offsets, List<byte[]> lines) {
    ByteArrayOutputStream b = new ByteArrayOutputStream();
    Random r = new Random(3);
    String[] ends = {"\n", "\r\n", "\r"};
    for (int i = 0; i < 9000; i++) {
      byte[] text;
      switch (i % 500) {
        case 7 -> text = new byte[0];
        case 11 -> text = new byte[] {'a', (byte) 0xC3, 'b', (byte) 0xFF, (byte) 0xE4, (byte) 0xB8};
        case 13 -> text = "gr\u00fc\u00dfe \u4e16\u754c \ud83d\ude00".getBytes(StandardCharsets.UTF_8);
        case 17 -> {
          text = new byte[100_000 + r.nextInt(200_000)];
          Arrays.fill(text, (byte) ('a' + r.nextInt(26)));
        }
        default -> text = ("line " + i + " " + "x".repeat(r.nextInt(40))).getBytes(StandardCharsets.UTF_8);
      }
      if (i == 4321) {
        text = new byte[(3 << 20) / 2]; // longer than the reader's 1 MiB buffer
        Arrays.fill(text, (byte) 'L');
      }
      lines.add(text);
    }
    for (int i = 0; i < lines.size(); i++) {
      offsets.add(new long[] {b.size()});
      String end = i == lines.size() - 1 ? "" : ends[r.nextInt(3)]; // the last line without an end
      if (end.equals("\r") && lines.get(i + 1).length == 0) {
        end = "\n"; // a lone \r before an empty line's \n would be one \r\n
      }
      line(b, lines.get(i), end);
    }
    return b.toByteArray();
  }

  private StageContext context(Path file, long size, long[] cuts, Class<?> mapper, Serde<?> lineSerde) {
    StoreTable out = node.jobTable(0, StageFixture.options(true, DataType.LONG, DataType.STRING));
    StageSpec.Builder s = StageSpec.newBuilder().setIndex(0).setKind(StageSpec.Kind.MAP).setInputTable("")
        .setOutputTable(out.name()).setOutputMultiValued(true).setFunctionClass(mapper.getName())
        .setInputKeySerde(Serdes.LongSerde.class.getName()).setInputValueSerde(lineSerde.getClass().getName())
        .setOutputKeySerde(Serdes.LongSerde.class.getName()).setOutputValueSerde(Serdes.StringSerde.class.getName());
    for (int i = 0; i + 1 < cuts.length; i++) {
      s.addInputSplits(FileSplit.newBuilder().setPath(file.toString()).setStart(cuts[i]).setLength(cuts[i + 1] - cuts[i])
          .setFileSize(size).setNode(0));
    }
    return node.context(s.build(), null, node.shuffle(out, PairTypes.of(DataType.LONG, DataType.STRING),
        NodeConfig.DEFAULT_MAX_VALUE));
  }

  private void checkEveryLine(Serde<?> lineSerde) throws Exception {
    List<long[]> offsets = new ArrayList<>();
    List<byte[]> lines = new ArrayList<>();
    byte[] bytes = file(offsets, lines);
    Path f = dir.resolve("in.txt");
    Files.write(f, bytes);
    long[] cuts = {0, 1, bytes.length / 3, bytes.length / 3 + 1, 2L * bytes.length / 3, bytes.length};
    StageContext stage = context(f, bytes.length, cuts, Record.class, lineSerde);
    MapOutput<Object, Object> output = new MapOutput<>(stage, 0);
    for (int p = 0; p + 1 < cuts.length; p++) {
      new MapTask<Object, Object, Object, Object>(stage, p, node.readers, output).run();
    }
    output.finish();
    assertEquals(lines.size(), seen.size(), "every line once");
    assertEquals(lines.size(), stage.recordsIn.sum());
    for (int i = 0; i < lines.size(); i++) {
      Object[] kv = seen.get(i);
      assertInstanceOf(Long.class, kv[0]);
      // the model: the offset as the LONG serde round-trips it, a copy of the line's bytes decoded by the lines' serde
      Long expectedKey = Serdes.LONG.decodeKey(Serdes.LONG.encodeKey(offsets.get(i)[0]));
      assertEquals(expectedKey, kv[0], "offset of line " + i);
      Object expectedValue = lineSerde.decodeValue(Arrays.copyOf(lines.get(i), lines.get(i).length));
      if (expectedValue instanceof byte[] expected) {
        assertArrayEquals(expected, (byte[]) kv[1], "line " + i);
        if (i > 0) {
          assertNotSame(seen.get(i - 1)[1], kv[1], "a line's array is its own");
        }
      } else {
        assertEquals(expectedValue, kv[1], "line " + i);
      }
    }
  }

  @Test
  void stringLines_everyLineOnceInOrderWithItsOffset() throws Exception {
    checkEveryLine(Serdes.STRING);
  }

  @Test
  void bytesLines_everyLineOnceInOrder_arraysNotShared() throws Exception {
    checkEveryLine(Serdes.BYTES);
  }

  @Test
  void stringBytesLines_everyLineOnceInOrder() throws Exception {
    checkEveryLine(Serdes.STRING_BYTES);
  }

  /** A job's own line serde runs on the task's thread: its failure is the user's code's, as any of its code's. */
  @Test
  void aUserLineSerdeThatThrows_isAUserCodeFailure() throws Exception {
    Path f = dir.resolve("empty-line.txt");
    Files.writeString(f, "a\n\nb\n");
    StageContext stage = context(f, 5, new long[] {0, 5}, Record.class, new PickyLines());
    MapOutput<Object, Object> output = new MapOutput<>(stage, 0);
    RuntimeException e = assertThrows(RuntimeException.class,
        () -> new MapTask<Object, Object, Object, Object>(stage, 0, node.readers, output).run());
    assertInstanceOf(UserCodeException.class, e, "got " + e);
  }

  /** An abort while the reader waits on a full queue and the mapper is stuck: the task and its reader both end. */
  @Test
  void abortWhileTheReaderWaits_endsTaskAndReader() throws Exception {
    List<long[]> offsets = new ArrayList<>();
    List<byte[]> lines = new ArrayList<>();
    byte[] bytes = file(offsets, lines);
    Path f = dir.resolve("in.txt");
    Files.write(f, bytes);
    StageContext stage = context(f, bytes.length, new long[] {0, bytes.length}, Record.class, Serdes.STRING);
    MapOutput<Object, Object> output = new MapOutput<>(stage, 0);
    block = true;
    Thread t = new Thread(() -> {
      try {
        Thread.sleep(1000); // the reader has filled the queue by now
      } catch (InterruptedException e) {
        return;
      }
      node.aborted.set(true);
      block = false;
    });
    t.start();
    assertThrows(StageAborted.class, () -> new MapTask<Object, Object, Object, Object>(stage, 0, node.readers, output).run());
    t.join();
    ThreadPoolExecutor readers = (ThreadPoolExecutor) node.readers;
    long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(5);
    while (readers.getActiveCount() > 0 && System.nanoTime() < deadline) {
      Thread.sleep(10);
    }
    assertEquals(0, readers.getActiveCount(), "the reader ended");
    assertTrue(seen.size() < lines.size());
  }
}
