package org.sss.client.job;

import java.io.IOException;
import java.net.URISyntaxException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import org.sss.client.TableSpec;
import org.sss.core.api.Mapper;
import org.sss.core.api.Partitioner;
import org.sss.core.api.Reducer;
import org.sss.core.api.Serde;
import org.sss.core.api.Serdes;
import org.sss.core.keys.PairTypes;
import org.sss.core.proto.DataType;

/**
 * A job: a chain of map and reduce stages with named tables between them.
 *
 * <pre>{@code
 * Job job = Job.named("wordcount")
 *     .input("lines", Serdes.LONG, Serdes.STRING)
 *     .map(Tokenize.class, Serdes.STRING, Serdes.LONG)
 *     .combine(Sum.class)
 *     .reduce(Sum.class, Serdes.STRING, Serdes.LONG)
 *     .output("counts")
 *     .build();
 * }</pre>
 *
 * Tables between stages are created for the run (multi-valued: every emitted value reaches the
 * next stage; WAL off, no compaction) and dropped when it ends, unless
 * {@link Builder#keepIntermediate()} asks otherwise. The job's output keeps one value per key
 * (the last written) unless {@link Builder#multiValuedOutput()}; it appears when the job
 * commits, after its last stage, whole, and not at all when the job fails. A job may start
 * with a reduce stage over an existing multi-valued table (a reduce-only job), or consist of
 * map stages only.
 */
public final class Job {
  final String name;
  final String inputTable;
  /** Text files the first stage reads instead of a table; null for a table. */
  final Path inputFiles;
  final List<StagePlan> stages;
  final String outputTable;
  /** Where the last stage writes text part files instead of a table; null for a table. */
  final Path outputDir;
  final boolean multiValuedOutput;
  final boolean overwrite;
  final TableSpec.Compression outputCompression;
  final boolean keepIntermediate;
  final Map<String, String> config;
  final int threads;
  final Path jar;

  private Job(Builder b) {
    this.name = b.name;
    this.inputTable = b.inputTable;
    this.inputFiles = b.inputFiles;
    this.stages = List.copyOf(b.stages);
    this.outputTable = b.outputTable;
    this.outputDir = b.outputDir;
    this.multiValuedOutput = b.multiValuedOutput;
    this.overwrite = b.overwrite;
    this.outputCompression = b.outputCompression;
    this.keepIntermediate = b.keepIntermediate;
    this.config = Map.copyOf(b.config);
    this.threads = b.threads;
    this.jar = b.jar;
  }

  public static Builder named(String name) {
    return new Builder(name);
  }

  public String name() {
    return name;
  }

  public String outputTable() {
    return outputTable;
  }

  /** The output's name for messages: its table, or its directory. */
  String outputName() {
    return outputDir != null ? outputDir.toString() : outputTable;
  }

  /** One stage as planned on the client. */
  record StagePlan(boolean map, String functionClass, String combinerClass, String partitionerClass,
                   Serde<?> inKey, Serde<?> inValue, Serde<?> outKey, Serde<?> outValue) {
    StagePlan withCombiner(String c) {
      return new StagePlan(map, functionClass, c, partitionerClass, inKey, inValue, outKey, outValue);
    }

    StagePlan withPartitioner(String p) {
      return new StagePlan(map, functionClass, combinerClass, p, inKey, inValue, outKey, outValue);
    }
  }

  /** Builds a job stage by stage. */
  public static final class Builder {
    private final String name;
    private String inputTable;
    private Path inputFiles;
    private final List<StagePlan> stages = new ArrayList<>();
    private String outputTable;
    private Path outputDir;
    private boolean multiValuedOutput;
    private boolean overwrite;
    private TableSpec.Compression outputCompression = TableSpec.Compression.LZ4;
    private boolean keepIntermediate;
    private final Map<String, String> config = new LinkedHashMap<>();
    private int threads;
    private Path jar;
    private Serde<?> currentKey;
    private Serde<?> currentValue;

    private Builder(String name) {
      this.name = name;
    }

    /**
     * The table the first stage reads, and the serdes of its keys and values (the table's
     * declared types); once, before the first stage: later stages read what the one before
     * them wrote, by its serdes.
     */
    public Builder input(String table, Serde<?> keySerde, Serde<?> valueSerde) {
      if (!stages.isEmpty()) {
        // the next stage would declare these types for the previous stage's output
        throw new IllegalStateException("job " + name + ": input(...) names the first stage's table; call it"
            + " once, before adding stages");
      }
      this.inputTable = table;
      this.inputFiles = null;
      this.currentKey = keySerde;
      this.currentValue = valueSerde;
      return this;
    }

    /**
     * Text files as the first stage's input, as Hadoop's {@code TextInputFormat} reads them: a
     * file, or every regular file below a directory (names starting with {@code .} or {@code _}
     * left out). Each line is a pair: its key the offset of the line's first byte in its file
     * ({@link org.sss.core.api.Serdes#LONG}), its value the line without its end (as
     * {@code lineSerde}: {@link org.sss.core.api.Serdes#STRING} or {@link org.sss.core.api.Serdes#BYTES}).
     * Files are cut into splits, each one map task on one node; every node must see the files
     * at the same path (one machine, or a shared file system), or the job fails with
     * {@code NO_SUCH_FILE} naming the node.
     */
    public Builder inputText(Path files, Serde<?> lineSerde) {
      if (lineSerde.dataType() != DataType.STRING
          && lineSerde.dataType() != DataType.BYTES) {
        throw new IllegalArgumentException("job " + name + ": lines read as string or bytes, not "
            + PairTypes.name(lineSerde.dataType()));
      }
      input("", Serdes.LONG, lineSerde);
      this.inputFiles = resolved(files);
      return this;
    }

    /**
     * Where {@code files} is, as the nodes are told: with its links resolved, as this machine
     * resolves them (a {@code ..} after a link goes up from where the link points, which a
     * textual tidy-up would get wrong); absolute and tidied when it does not exist here (the job
     * then fails, naming it).
     */
    private static Path resolved(Path files) {
      Path absolute = files.toAbsolutePath();
      try {
        return absolute.toRealPath();
      } catch (IOException e) {
        return absolute.normalize();
      }
    }

    /** {@link #inputText(Path, Serde)} with lines as strings. */
    public Builder inputText(Path files) {
      return inputText(files, Serdes.STRING);
    }

    /** A map stage emitting keys and values of the given serdes. */
    @SuppressWarnings("rawtypes")
    public Builder map(Class<? extends Mapper> mapper, Serde<?> outKey, Serde<?> outValue) {
      requireInput();
      stages.add(new StagePlan(true, mapper.getName(), "", "", currentKey, currentValue, outKey, outValue));
      currentKey = outKey;
      currentValue = outValue;
      return this;
    }

    /** A combiner for the previous stage's output (see {@link Reducer} for its contract). */
    @SuppressWarnings("rawtypes")
    public Builder combine(Class<? extends Reducer> combiner) {
      StagePlan last = lastStage("combine");
      stages.set(stages.size() - 1, last.withCombiner(combiner.getName()));
      return this;
    }

    /** How the previous stage places its output keys (default: by hash). */
    public Builder partitionBy(Class<? extends Partitioner> partitioner) {
      StagePlan last = lastStage("partitionBy");
      stages.set(stages.size() - 1, last.withPartitioner(partitioner.getName()));
      return this;
    }

    /** A reduce stage emitting keys and values of the given serdes. */
    @SuppressWarnings("rawtypes")
    public Builder reduce(Class<? extends Reducer> reducer, Serde<?> outKey, Serde<?> outValue) {
      requireInput();
      stages.add(new StagePlan(false, reducer.getName(), "", "", currentKey, currentValue, outKey, outValue));
      currentKey = outKey;
      currentValue = outValue;
      return this;
    }

    /** The table the last stage writes. */
    public Builder output(String table) {
      this.outputTable = table;
      this.outputDir = null;
      return this;
    }

    /**
     * Text files instead of a table, as Hadoop's {@code TextOutputFormat} writes them: the last
     * stage's tasks each write a {@code part-m-NNNNN} (map) or {@code part-r-NNNNN} (reduce)
     * file of {@code KEY<TAB>VALUE} lines into {@code dir}, on their own nodes, in parallel;
     * the commit adds an empty {@code _SUCCESS}. Nothing is shuffled after the last stage: a
     * pair is in the file of the task that emitted it, so a reduce's files are each in key
     * order. Keys and values print as {@code sss dump} prints their types (text as its bytes,
     * numbers in decimal, a user's type by {@code toString()}). The directory must not hold
     * anything unless {@link #overwrite()}, and the client and every node must see it at the
     * same path (one machine, or a shared file system), or the job fails with
     * {@code NO_SUCH_FILE} naming the node. See {@link org.sss.core.io.TextOutputDir}.
     */
    public Builder outputText(Path dir) {
      this.outputDir = dir.toAbsolutePath().normalize();
      this.outputTable = null;
      return this;
    }

    /** Keep every value of a key in the output table (for a later reduce-only job). */
    public Builder multiValuedOutput() {
      this.multiValuedOutput = true;
      return this;
    }

    /**
     * Replace the output table if it exists (default: fail, as Hadoop does for output dirs).
     * The old table is replaced when the job commits; a job that fails leaves it as it was.
     */
    public Builder overwrite() {
      this.overwrite = true;
      return this;
    }

    /**
     * How the output table is compressed on disk (default LZ4, as any user table). NONE saves
     * the compression's CPU when the output is written once and read rarely, as Hadoop's output
     * is uncompressed unless {@code mapreduce.output.fileoutputformat.compress} says otherwise.
     */
    public Builder outputCompression(TableSpec.Compression compression) {
      this.outputCompression = Objects.requireNonNull(compression, "compression");
      return this;
    }

    /**
     * Keep the tables between stages after the job, as {@code <output>.stage<i>} (their names
     * are in the result): multi-valued tables that a reduce-only job can read. Like the output,
     * they appear when the job commits, and must not exist unless {@link #overwrite()}.
     */
    public Builder keepIntermediate() {
      this.keepIntermediate = true;
      return this;
    }

    /** A configuration entry user code reads through {@code TaskContext.config()}. */
    public Builder config(String key, String value) {
      config.put(key, value);
      return this;
    }

    /**
     * Tasks run at once per node (default: the node's worker threads, divided among the nodes
     * that share its JVM, as an embedded cluster's do).
     */
    public Builder threads(int n) {
      this.threads = n;
      return this;
    }

    /** A JAR holding the job's classes, shipped to nodes that do not have it yet. */
    public Builder jar(Path jarFile) {
      this.jar = jarFile;
      return this;
    }

    /**
     * Ships the JAR that {@code c} was loaded from, as Hadoop's {@code setJarByClass} does —
     * so that nodes of a running cluster can load the job's classes. Does nothing when the
     * class does not come from a JAR (an IDE's or test's class directory, which servers
     * started from the same class path already see).
     */
    public Builder jarByClass(Class<?> c) {
      var source = c.getProtectionDomain().getCodeSource();
      if (source != null && source.getLocation() != null) {
        try {
          Path p = Path.of(source.getLocation().toURI());
          if (p.toString().endsWith(".jar") && Files.isRegularFile(p)) {
            this.jar = p;
          }
        } catch (URISyntaxException | IllegalArgumentException ignored) {
          // not a file location: nothing to ship
        }
      }
      return this;
    }

    private void requireInput() {
      if (inputTable == null) {
        throw new IllegalStateException("job " + name + ": call input(...) before adding stages");
      }
    }

    private StagePlan lastStage(String what) {
      if (stages.isEmpty()) {
        throw new IllegalStateException("job " + name + ": " + what + " needs a stage before it");
      }
      return stages.get(stages.size() - 1);
    }

    public Job build() {
      requireInput();
      if (stages.isEmpty()) {
        throw new IllegalStateException("job " + name + " has no stages");
      }
      if (outputTable == null && outputDir == null) {
        throw new IllegalStateException("job " + name + " has no output table");
      }
      if (outputDir != null && keepIntermediate) {
        throw new IllegalStateException("job " + name + " writes files: it keeps no tables between stages"
            + " (keepIntermediate() names them after an output table)");
      }
      return new Job(this);
    }
  }
}
