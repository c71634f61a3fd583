package org.sss.client.job;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.nio.file.Files;
import java.nio.file.Path;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;
import org.sss.client.SssClient;
import org.sss.client.cluster.SssCluster;
import org.sss.core.api.Mapper;
import org.sss.core.api.Serde;
import org.sss.core.api.Serdes;
import org.sss.core.proto.DataType;
import org.sss.core.proto.ErrorCode;

/** A user's line serde (accepted by inputText: its type is STRING) that rejects a line fails the job as user code. */
class UserLineSerdeTest {
  @TempDir
  Path dir;

  public static final class PickyLines implements Serde<String> {
    @Override public byte[] encodeKey(String key) { return Serdes.STRING.encodeKey(key); }
    @Override public String decodeKey(byte[] bytes) { return Serdes.STRING.decodeKey(bytes); }
    @Override public byte[] encodeValue(String value) { return Serdes.STRING.encodeValue(value); }
    @Override public String decodeValue(byte[] bytes) {
      if (bytes.length == 0) {
        throw new IllegalArgumentException("an empty line is not a record");
      }
      return Serdes.STRING.decodeValue(bytes);
    }
    @Override public DataType dataType() { return DataType.STRING; }
  }

  @Test
  void aLineSerdeThatThrows_failsTheJobAsUserCode() throws Exception {
    Path f = dir.resolve("in.txt");
    Files.writeString(f, "a\n\nb\n");
    try (SssCluster cluster = SssCluster.embedded(1); SssClient client = cluster.client()) {
      JobFailedException e = assertThrows(JobFailedException.class, () -> client.submit(Job.named("picky")
          .inputText(f, new PickyLines()).map(Mapper.Identity.class, Serdes.LONG, Serdes.STRING).output("never")
          .build()).await());
      assertEquals(ErrorCode.USER_CODE_FAILED, e.code(), e.getMessage());
      assertTrue(e.getMessage().contains("an empty line is not a record"), e.getMessage());
    }
  }
}
