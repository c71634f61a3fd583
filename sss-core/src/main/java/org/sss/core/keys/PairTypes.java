package org.sss.core.keys;

import java.util.Locale;
import org.sss.core.api.Serde;
import org.sss.core.proto.DataType;
import org.sss.core.proto.TableOptions;

/**
 * The key and value types a batch of pairs was encoded with. Every write carries them once per
 * batch and the node holding the table refuses a batch whose types are not the table's own: a
 * table's declared types are a contract that each reader (scan, dump, a job's serdes) relies on,
 * so it is kept where every writer meets, not by each writer separately. {@link DataType#BYTES}
 * is a type like the others, not a wildcard: raw bytes written into a string table would make
 * the table unreadable as strings.
 */
public record PairTypes(DataType key, DataType value) {
  /** Raw bytes for both, the types of a table created with default options. */
  public static final PairTypes BYTES = new PairTypes(DataType.BYTES, DataType.BYTES);

  public PairTypes {
    if (key == null || value == null || key == DataType.UNRECOGNIZED || value == DataType.UNRECOGNIZED) {
      throw new IllegalArgumentException("pair types must be known data types, got key=" + key + " value=" + value);
    }
  }

  public static PairTypes of(DataType key, DataType value) {
    return new PairTypes(key, value);
  }

  /** The types a serde pair encodes (custom serdes: {@link DataType#OPAQUE}). */
  public static PairTypes of(Serde<?> key, Serde<?> value) {
    return new PairTypes(key.dataType(), value.dataType());
  }

  /** A table's declared types. */
  public static PairTypes of(TableOptions table) {
    return new PairTypes(table.getKeyType(), table.getValueType());
  }

  /** Whether pairs of these types may be written into a table created with {@code table}. */
  public boolean writableTo(TableOptions table) {
    // by number: a table's types may be a number this JVM does not know (never these types)
    return key.getNumber() == table.getKeyTypeValue() && value.getNumber() == table.getValueTypeValue();
  }

  /** A data type as users write it: long, string, bytes, double, opaque. */
  public static String name(DataType t) {
    return t.name().toLowerCase(Locale.ROOT);
  }

  /** {@code key=string value=long}, as table listings print a table's types. */
  @Override
  public String toString() {
    return "key=" + name(key) + " value=" + name(value);
  }
}
