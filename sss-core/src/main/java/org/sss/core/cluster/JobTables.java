package org.sss.core.cluster;

import org.sss.core.proto.Compression;
import org.sss.core.proto.DataType;
import org.sss.core.proto.TableOptions;

/**
 * The names of the tables a job writes: every table a job creates lives in a namespace of its
 * own, {@code sss-tmp-<job id>-<what>}, until the job commits and its output takes the name the
 * user chose.
 *
 * <h2>Why</h2>
 * A name that embeds the job id fences the job in: a straggling task of a failed job can only
 * name its own job's tables, which are dropped, never the output of a later job that reuses the
 * user's name. A job that fails leaves the user's table as it was (Hadoop's output committer:
 * output appears whole at commit, or not at all). Servers refuse to create a name in this
 * namespace for anyone but the job it names, so nothing the engine drops was created by a user.
 */
public final class JobTables {
  /** Prefix of every table a job creates. */
  public static final String PREFIX = "sss-tmp-";

  private JobTables() {}

  /** The table a job writes stage {@code stage} into. */
  public static String stageOutput(String jobId, int stage) {
    return PREFIX + jobId + "-" + stage;
  }

  /**
   * The options of a table between two stages: every value kept (the next stage groups them),
   * no write-ahead log (a job that loses a node runs again rather than recover it), and neither
   * compression nor compaction of its own (it is read once, then dropped). Nodes keep spare
   * column families made for these options, from the store's creation on.
   */
  public static TableOptions betweenStages(DataType key, DataType value) {
    return TableOptions.newBuilder()
        .setMultiValued(true)
        .setDisableWal(true)
        .setDisableAutoCompaction(true)
        .setCompression(Compression.NONE)
        .setKeyType(key)
        .setValueType(value)
        .build();
  }

  /** True for names in the engine's namespace. */
  public static boolean isJobTable(String table) {
    return table.startsWith(PREFIX);
  }

  /** True when {@code table} belongs to job {@code jobId}. */
  public static boolean belongsTo(String table, String jobId) {
    return !jobId.isEmpty() && table.startsWith(PREFIX + jobId + "-");
  }
}
