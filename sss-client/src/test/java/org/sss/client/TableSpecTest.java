package org.sss.client;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNotEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.util.List;
import org.junit.jupiter.api.Test;
import org.sss.core.api.Serdes;
import org.sss.core.keys.PairTypes;
import org.sss.core.proto.DataType;

/** A table's spec as users write it: defaults, withers that leave the original alone, value equality. */
class TableSpecTest {
  private static final PairTypes LONG_STRING = PairTypes.of(DataType.LONG, DataType.STRING);

  @Test
  void defaults_areBytesSingleValuedLz4WithWalAndCompactionOnTheClustersCopies() {
    TableSpec d = TableSpec.defaults();
    assertEquals(PairTypes.BYTES, d.types());
    assertFalse(d.multiValued());
    assertEquals(TableSpec.Compression.LZ4, d.compression());
    assertTrue(d.writeAheadLog());
    assertTrue(d.autoCompaction());
    assertEquals(0, d.replication());
    assertEquals(d.types(LONG_STRING), TableSpec.of(LONG_STRING));
  }

  @Test
  void withers_returnNewSpecs_andLeaveTheOriginalAsItWas() {
    TableSpec d = TableSpec.defaults();
    TableSpec all = d.types(LONG_STRING).multiValued(true).compression(TableSpec.Compression.ZSTD)
        .writeAheadLog(false).autoCompaction(false).replication(3);
    assertEquals(LONG_STRING, all.types());
    assertTrue(all.multiValued());
    assertEquals(TableSpec.Compression.ZSTD, all.compression());
    assertFalse(all.writeAheadLog());
    assertFalse(all.autoCompaction());
    assertEquals(3, all.replication());
    assertEquals(TableSpec.defaults(), d, "the defaults are shared: a wither must not change them");
    assertEquals(PairTypes.BYTES, TableSpec.defaults().types());
  }

  @Test
  void equality_isByEveryField() {
    TableSpec base = TableSpec.of(PairTypes.of(Serdes.LONG, Serdes.STRING));
    assertEquals(TableSpec.of(LONG_STRING), base);
    assertEquals(TableSpec.of(LONG_STRING).hashCode(), base.hashCode());
    List<TableSpec> others = List.of(base.types(PairTypes.BYTES), base.multiValued(true),
        base.compression(TableSpec.Compression.NONE), base.writeAheadLog(false), base.autoCompaction(false),
        base.replication(2));
    for (TableSpec other : others) {
      assertNotEquals(base, other, other.toString());
    }
    assertNotEquals(base, null);
    assertNotEquals(base, "key=long value=string");
  }

  @Test
  void invalidValues_areRefused() {
    assertThrows(IllegalArgumentException.class, () -> TableSpec.defaults().replication(-1));
    assertThrows(NullPointerException.class, () -> TableSpec.defaults().types(null));
    assertThrows(NullPointerException.class, () -> TableSpec.defaults().compression(null));
  }

  @Test
  void toString_namesWhatDiffersFromPlainBytes() {
    String s = TableSpec.of(LONG_STRING).multiValued(true).compression(TableSpec.Compression.ZSTD)
        .writeAheadLog(false).toString();
    assertTrue(s.contains("key=long value=string") && s.contains("multi-valued") && s.contains("compression=zstd")
        && s.contains("no wal"), s);
  }
}
