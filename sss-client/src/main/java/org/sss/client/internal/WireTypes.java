package org.sss.client.internal;

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
 * The one place where the client's own types ({@link TableSpec}, {@link TableStatus},
 * {@link MembershipView}) meet the generated wire messages: users see ours, the nodes read
 * theirs, and a change of the protocol is absorbed here. Every field maps both ways, so a spec
 * sent and read back is the spec that was sent.
 *
 * <p>Internal: public only for the client's other packages; no compatibility promise.
 */
public final class WireTypes {
  private WireTypes() {}

  /** The options a create request carries for {@code spec}. */
  public static TableOptions toProto(TableSpec spec) {
    return TableOptions.newBuilder()
        .setKeyType(spec.types().key())
        .setValueType(spec.types().value())
        .setMultiValued(spec.multiValued())
        .setCompression(toProto(spec.compression()))
        .setDisableWal(!spec.writeAheadLog())
        .setDisableAutoCompaction(!spec.autoCompaction())
        .setReplication(spec.replication())
        .build();
  }

  /**
   * The spec of options a node reports.
   *
   * @throws IllegalArgumentException for a type or compression this client does not know (a
   *                                  node never holds one: it refuses to create such a table)
   */
  public static TableSpec fromProto(TableOptions options) {
    if (options.getKeyType() == DataType.UNRECOGNIZED || options.getValueType() == DataType.UNRECOGNIZED
        || options.getCompression() == Compression.UNRECOGNIZED) {
      throw new IllegalArgumentException("table options this client does not know: key type "
          + options.getKeyTypeValue() + ", value type " + options.getValueTypeValue() + ", compression "
          + options.getCompressionValue() + " (a client older than the cluster?)");
    }
    return TableSpec.of(new PairTypes(options.getKeyType(), options.getValueType()))
        .multiValued(options.getMultiValued())
        .compression(fromProto(options.getCompression()))
        .writeAheadLog(!options.getDisableWal())
        .autoCompaction(!options.getDisableAutoCompaction())
        .replication(options.getReplication());
  }

  public static Compression toProto(TableSpec.Compression compression) {
    return switch (compression) {
      case LZ4 -> Compression.LZ4;
      case NONE -> Compression.NONE;
      case ZSTD -> Compression.ZSTD;
    };
  }

  public static TableSpec.Compression fromProto(Compression compression) {
    return switch (compression) {
      case LZ4 -> TableSpec.Compression.LZ4;
      case NONE -> TableSpec.Compression.NONE;
      case ZSTD -> TableSpec.Compression.ZSTD;
      case UNRECOGNIZED -> throw new IllegalArgumentException("a compression this client does not know");
    };
  }

  public static TableStatus fromProto(TableInfo t) {
    return new TableStatus(t.getName(), fromProto(t.getOptions()), t.getPairs(), t.getBytes(), t.getBackgroundWork(),
        t.getMissingOnList(), t.getCreated());
  }

  public static MembershipView fromProto(ViewAnswer a) {
    ClusterView v = a.getView();
    return new MembershipView(a.getReplicated(), v.getEpoch(), v.getDownList(), v.getOutList(), v.getJoiningList(),
        a.getLeader(), a.getVotersList(), a.getConfirmedMillisAgo(), !a.getReplicated() || a.getServing());
  }
}
