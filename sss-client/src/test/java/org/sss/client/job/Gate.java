package org.sss.client.job;

import static org.junit.jupiter.api.Assertions.assertTrue;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.List;
import java.util.function.Predicate;
import java.util.stream.Stream;
import org.sss.core.api.Emitter;
import org.sss.core.api.Mapper;
import org.sss.core.api.TaskContext;

/**
 * Keeps a job running for exactly as long as a test needs, instead of hoping a sleep is long
 * enough: the job's map tasks ({@link Gated}) announce themselves with a file in the gate's
 * directory and then wait until the test {@linkplain #open opens} the gate. A test waits for
 * the announcements ({@link #awaitStarted}), does what must happen while the job runs, and opens
 * the gate when done. Files work across processes, so this holds for process clusters too.
 */
public final class Gate {
  /** Job configuration key: the gate's directory. */
  public static final String DIR = "gate.dir";
  /** Job configuration key: the longest a task waits for the gate (ms; default 120 s, a safety valve). */
  public static final String MAX_MILLIS = "gate.max.millis";

  private final Path dir;

  public Gate(Path dir) throws IOException {
    this.dir = Files.createDirectories(dir);
  }

  /** The configuration a job needs for its {@link Gated} mapper to use this gate. */
  public Job.Builder configure(Job.Builder job) {
    return job.config(DIR, dir.toAbsolutePath().toString());
  }

  /** Lets every task waiting at the gate (and every later one) go on. */
  public void open() throws IOException {
    if (!Files.exists(dir.resolve("open"))) {
      Files.createFile(dir.resolve("open"));
    }
  }

  /** The tasks that went past the gate so far (opened, or tired of waiting), as "node N partition P". */
  public List<String> passed() throws IOException {
    try (Stream<Path> files = Files.list(dir)) {
      return files.map(p -> p.getFileName().toString()).filter(n -> n.startsWith("passed "))
          .map(n -> n.substring("passed ".length())).sorted().toList();
    }
  }

  /** The tasks that reached the gate so far, as "node N partition P". */
  public List<String> started() throws IOException {
    try (Stream<Path> files = Files.list(dir)) {
      return files.map(p -> p.getFileName().toString()).filter(n -> n.startsWith("started "))
          .map(n -> n.substring("started ".length())).sorted().toList();
    }
  }

  /** Waits until a task matching {@code which} (e.g. {@code s -> s.startsWith("node 1 ")}) reached the gate. */
  public void awaitStarted(Predicate<String> which, Duration within) throws IOException, InterruptedException {
    long deadline = System.nanoTime() + within.toNanos();
    while (started().stream().noneMatch(which)) {
      assertTrue(System.nanoTime() < deadline, "no task reached the gate within " + within + ": " + started());
      Thread.sleep(10);
    }
  }

  /** Waits until any task reached the gate. */
  public void awaitStarted(Duration within) throws IOException, InterruptedException {
    awaitStarted(s -> true, within);
  }

  /** ModTen behind the gate: (n, v) -> (n mod 10, 1), once the gate is open. */
  public static final class Gated implements Mapper<Long, String, Long, Long> {
    @Override
    public void setup(TaskContext context) throws Exception {
      Path dir = Path.of(context.get(DIR, "gate-directory-not-configured"));
      Files.createFile(dir.resolve("started node " + context.nodeId() + " partition " + context.partition()));
      long deadline = System.nanoTime() + Long.parseLong(context.get(MAX_MILLIS, "120000")) * 1_000_000;
      Path open = dir.resolve("open");
      while (!Files.exists(open) && System.nanoTime() < deadline) {
        Thread.sleep(10); // an abort interrupts this
      }
      // past the gate (opened, or its safety valve ran out): the task maps
      Files.createFile(dir.resolve("passed node " + context.nodeId() + " partition " + context.partition()));
    }

    @Override
    public void map(Long key, String value, Emitter<Long, Long> out) {
      out.emit(key % 10, 1L);
    }
  }
}
