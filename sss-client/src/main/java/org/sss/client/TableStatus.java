package org.sss.client;

import java.util.List;
import java.util.Objects;

/**
 * A table as the nodes report it ({@link SssClient#listTables}, {@link SssClient#tableStats}):
 * its spec and its size summed over the nodes.
 *
 * @param name           the table's name
 * @param spec           what it was created with
 * @param pairs          its pairs, RocksDB's estimate ({@link SssClient#count} gives the exact figure)
 * @param bytes          bytes on disk and in memtables, every copy counted
 * @param backgroundWork a flush or compaction is pending or running on some node: reads then
 *                       share the disks and cores with it (benchmarks wait for it to clear)
 * @param missingOn      the nodes that answered without this table (a create or drop that failed
 *                       part way): it cannot be read whole; drop it. Empty for a whole table
 * @param created        in a create's answer only: that create made the table
 */
public record TableStatus(String name, TableSpec spec, long pairs, long bytes, boolean backgroundWork,
                          List<Integer> missingOn, boolean created) {
  public TableStatus {
    Objects.requireNonNull(name, "name");
    Objects.requireNonNull(spec, "spec");
    missingOn = List.copyOf(missingOn);
  }

  /** Whether every node that answered holds the table. */
  public boolean whole() {
    return missingOn.isEmpty();
  }
}
