package org.sss.client.internal;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.util.Arrays;
import java.util.List;
import org.junit.jupiter.api.Test;
import org.sss.client.MembershipView;
import org.sss.client.TableSpec;
import org.sss.client.TableStatus;
import org.sss.core.keys.PairTypes;
import org.sss.core.proto.ClusterView;
import org.sss.core.proto.Compression;
import org.sss.core.proto.DataType;
import org.sss.core.proto.TableInfo;
import org.sss.core.proto.TableOptions;
import org.sss.core.proto.ViewAnswer;

/**
 * The client's types and the wire's map both ways without losing a field: a create sends what
 * the spec says, and a listed table reads back as the spec it was created with.
 */
class WireTypesTest {
  private static final List<DataType> TYPES = Arrays.stream(DataType.values())
      .filter(t -> t != DataType.UNRECOGNIZED).toList();

  @Test
  void defaults_areTheWiresDefaultOptions() {
    assertEquals(TableOptions.getDefaultInstance(), WireTypes.toProto(TableSpec.defaults()));
    assertEquals(TableSpec.defaults(), WireTypes.fromProto(TableOptions.getDefaultInstance()));
  }

  @Test
  void everyField_mapsToItsProtoField() {
    TableSpec spec = TableSpec.of(PairTypes.of(DataType.LONG, DataType.DOUBLE)).multiValued(true)
        .compression(TableSpec.Compression.ZSTD).writeAheadLog(false).autoCompaction(false).replication(3);
    TableOptions expected = TableOptions.newBuilder().setKeyType(DataType.LONG).setValueType(DataType.DOUBLE)
        .setMultiValued(true).setCompression(Compression.ZSTD).setDisableWal(true).setDisableAutoCompaction(true)
        .setReplication(3).build();
    assertEquals(expected, WireTypes.toProto(spec));
    assertEquals(spec, WireTypes.fromProto(expected));
  }

  @Test
  void everyCombination_roundTrips() {
    int n = 0;
    for (DataType key : TYPES) {
      for (DataType value : TYPES) {
        for (TableSpec.Compression c : TableSpec.Compression.values()) {
          for (int flags = 0; flags < 8; flags++) {
            for (int copies = 0; copies < 4; copies++) {
              TableSpec spec = TableSpec.of(PairTypes.of(key, value)).compression(c).multiValued((flags & 1) != 0)
                  .writeAheadLog((flags & 2) != 0).autoCompaction((flags & 4) != 0).replication(copies);
              TableOptions wire = WireTypes.toProto(spec);
              assertEquals(spec, WireTypes.fromProto(wire));
              assertEquals(wire, WireTypes.toProto(WireTypes.fromProto(wire)));
              n++;
            }
          }
        }
      }
    }
    assertEquals(TYPES.size() * TYPES.size() * 3 * 8 * 4, n);
  }

  @Test
  void compression_mirrorsTheProtosValuesByName() {
    List<Compression> wire = Arrays.stream(Compression.values()).filter(c -> c != Compression.UNRECOGNIZED).toList();
    assertEquals(wire.size(), TableSpec.Compression.values().length, "a compression added to sss.proto needs one here");
    for (Compression c : wire) {
      assertEquals(c.name(), WireTypes.fromProto(c).name());
      assertEquals(c, WireTypes.toProto(WireTypes.fromProto(c)));
    }
  }

  @Test
  void unknownNumbers_areRefusedByName() {
    IllegalArgumentException e = assertThrows(IllegalArgumentException.class,
        () -> WireTypes.fromProto(TableOptions.newBuilder().setValueTypeValue(42).build()));
    assertTrue(e.getMessage().contains("42"), e.getMessage());
    assertThrows(IllegalArgumentException.class,
        () -> WireTypes.fromProto(TableOptions.newBuilder().setCompressionValue(9).build()));
  }

  @Test
  void tableInfo_becomesAStatusWithEveryField() {
    TableOptions options = TableOptions.newBuilder().setKeyType(DataType.STRING).setMultiValued(true).build();
    TableInfo info = TableInfo.newBuilder().setName("t").setOptions(options).setPairs(5).setBytes(600)
        .setBackgroundWork(true).addMissingOn(1).addMissingOn(3).setCreated(true).build();
    assertEquals(new TableStatus("t", WireTypes.fromProto(options), 5, 600, true, List.of(1, 3), true),
        WireTypes.fromProto(info));
  }

  @Test
  void viewAnswer_becomesAMembershipViewWithEveryField() {
    ViewAnswer a = ViewAnswer.newBuilder().setReplicated(true).setLeader(2).addVoters(0).addVoters(2)
        .setConfirmedMillisAgo(250).setView(ClusterView.newBuilder().setEpoch(9).addDown(1).addOut(3).addJoining(4))
        .build();
    assertEquals(new MembershipView(true, 9, List.of(1), List.of(3), List.of(4), 2, List.of(0, 2), 250, false),
        WireTypes.fromProto(a));
    assertEquals(new MembershipView(true, 9, List.of(1), List.of(3), List.of(4), 2, List.of(0, 2), 250, true),
        WireTypes.fromProto(a.toBuilder().setServing(true).build()));
    MembershipView single = WireTypes.fromProto(ViewAnswer.getDefaultInstance());
    assertEquals(new MembershipView(false, 0, List.of(), List.of(), List.of(), 0, List.of(), 0, true), single,
        "one copy: no membership, every node serves");
  }
}
