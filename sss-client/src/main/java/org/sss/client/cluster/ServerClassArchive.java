package org.sss.client.cluster;

import java.io.File;
import java.io.IOException;
import java.io.InputStream;
import java.io.OutputStream;
import java.nio.channels.FileChannel;
import java.nio.channels.FileLock;
import java.nio.charset.StandardCharsets;
import java.nio.file.DirectoryStream;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardCopyOption;
import java.nio.file.StandardOpenOption;
import java.security.MessageDigest;
import java.security.NoSuchAlgorithmException;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.HashMap;
import java.util.HexFormat;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.concurrent.TimeUnit;
import java.util.jar.JarEntry;
import java.util.jar.JarOutputStream;
import org.sss.client.BulkWriter;
import org.sss.client.ScanOptions;
import org.sss.client.SssClient;
import org.sss.client.TableScan;
import org.sss.client.TableSpec;
import org.sss.client.job.Job;
import org.sss.client.job.JobFailedException;
import org.sss.core.api.Emitter;
import org.sss.core.api.Mapper;
import org.sss.core.api.Pair;
import org.sss.core.api.Reducer;
import org.sss.core.api.Serdes;
import org.sss.core.keys.PairTypes;
import org.sss.core.proto.DataType;

/**
 * A class-data archive (the JVM's AppCDS) for the server processes {@link LocalProcessCluster}
 * starts. A server's JVM otherwise loads, verifies and links some 10,000 classes at every start
 * (Ratis and its gRPC, Netty, RocksDB, protocol buffers): measured here, a 3-node cluster's
 * start took 10-11 s and 4-6 s of CPU per node; with the archive, 6-7 s and 2-3 s. Every
 * restart, resize and test drill pays that again, on every node at once.
 *
 * <p>The archive is made once per class path and JVM, by a training JVM that starts a
 * two-copy cluster in itself, writes, reads and runs a small job
 * ({@code -XX:ArchiveClassesAtExit}); servers then start with {@code -XX:SharedArchiveFile}. It
 * lives in the directory named by the system property {@value #DIR_PROPERTY} ({@code bin/sss}
 * sets {@code benchmarks/target/cds}, the build's tests their module's {@code target}); without
 * that property nothing is made and servers start as before. The archive's name holds a digest
 * of the JVM and of every JAR's path, size and time, so a rebuilt JAR makes a new archive rather
 * than meet one the JVM would refuse. A training that fails leaves a {@code .failed} file with
 * its output and is not tried again for that class path; servers then start without an
 * archive, only slower. The JVM checks an archive against the class path itself and ignores
 * one that does not match, so an archive can make a start slower, never wrong.
 *
 * <p>The JVM writes no archive while a directory of classes is on the class path (a build's
 * tests have SSS's classes in {@code target/classes}), so servers get the class path's JARs
 * first, then the training's own JAR, then its directories, and the training loads the
 * directories' classes with a loader of its own ({@link ServerArchiveTraining}).
 */
final class ServerClassArchive {
  /** The system property naming the directory archives are kept in. */
  static final String DIR_PROPERTY = "sss.server.archive.dir";
  private static final Duration TRAINING_TIMEOUT = Duration.ofSeconds(180);

  /** The JVM options and class path a server process starts with. */
  record Launch(List<String> jvmOptions, String classpath) {}

  private static final Map<String, Launch> MADE = new HashMap<>();

  private ServerClassArchive() {}

  /**
   * How servers with this class path start: with the archive, made first if need be (once per
   * class path and JVM; a few seconds), or as before when archives are not kept or cannot be made.
   *
   * @param java        the server's {@code java}: this JVM's
   * @param classpath   the server's class path, as given ({@code dir/*} entries allowed)
   * @param jvmOptions  the options every server starts with, which the training uses too
   */
  static synchronized Launch forServers(String java, String classpath, List<String> jvmOptions) {
    String dirName = System.getProperty(DIR_PROPERTY);
    if (dirName == null || dirName.isBlank()) {
      return new Launch(List.of(), classpath);
    }
    String memo = dirName + '\n' + classpath + '\n' + jvmOptions;
    Launch known = MADE.get(memo);
    if (known == null) {
      known = prepare(Path.of(dirName), java, classpath, jvmOptions);
      if (!Thread.currentThread().isInterrupted()) { // an interrupted training decided nothing
        MADE.put(memo, known);
      }
    }
    return known;
  }

  private static Launch prepare(Path dir, String java, String classpath, List<String> jvmOptions) {
    Launch without = new Launch(List.of(), classpath);
    try {
      List<String> jars = new ArrayList<>();
      List<String> others = new ArrayList<>();
      for (String entry : expand(classpath)) {
        (Files.isRegularFile(Path.of(entry)) ? jars : others).add(entry);
      }
      if (jars.isEmpty()) {
        return without;
      }
      Files.createDirectories(dir);
      Path trainingJar = trainingJar(dir);
      jars.add(trainingJar.toString());
      String archivedPath = String.join(File.pathSeparator, jars);
      String serverPath = others.isEmpty() ? archivedPath
          : archivedPath + File.pathSeparator + String.join(File.pathSeparator, others);
      Path archive = dir.resolve("server-" + digest(java, jars, jvmOptions) + ".jsa");
      Path failed = Path.of(archive + ".failed");
      if (!Files.exists(archive) && !Files.exists(failed)) {
        // one training at a time per directory, across processes (two test JVMs, two launchers):
        // trainings side by side each take twice as long, and one that runs out of time marks the
        // class path as failed for every process
        try (FileChannel ch = FileChannel.open(dir.resolve("training.lock"), StandardOpenOption.CREATE,
                 StandardOpenOption.WRITE);
             FileLock held = ch.lock()) {
          if (!Files.exists(archive) && !Files.exists(failed)) { // the other one's may be made meanwhile
            make(archive, failed, java, archivedPath, String.join(File.pathSeparator, others), jvmOptions);
          }
        }
      }
      if (!Files.exists(archive)) {
        return without;
      }
      return new Launch(List.of("-XX:SharedArchiveFile=" + archive, "-Xlog:cds*=off"), serverPath);
    } catch (IOException | RuntimeException e) {
      System.err.println("sss: servers start without a class-data archive (" + e + ")");
      return without;
    }
  }

  /** The class path's entries, each {@code dir/*} replaced by the JARs in {@code dir} in name order. */
  static List<String> expand(String classpath) throws IOException {
    List<String> out = new ArrayList<>();
    for (String entry : classpath.split(File.pathSeparator)) {
      if (entry.isEmpty()) {
        continue;
      }
      if (entry.equals("*") || entry.endsWith(File.separator + "*")) {
        Path d = Path.of(entry.substring(0, entry.length() - 1).isEmpty() ? "." : entry.substring(0, entry.length() - 1));
        List<String> jars = new ArrayList<>();
        if (Files.isDirectory(d)) {
          try (DirectoryStream<Path> s = Files.newDirectoryStream(d)) {
            for (Path p : s) {
              String name = p.getFileName().toString().toLowerCase(Locale.ROOT);
              if (name.endsWith(".jar") && Files.isRegularFile(p)) {
                jars.add(p.toString());
              }
            }
          }
        }
        jars.sort(null);
        out.addAll(jars);
      } else {
        out.add(entry);
      }
    }
    return out;
  }

  /** A JAR holding {@link ServerArchiveTraining} alone, named after its bytes. */
  private static Path trainingJar(Path dir) throws IOException {
    byte[] bytes;
    try (InputStream in = ServerArchiveTraining.class.getResourceAsStream("ServerArchiveTraining.class")) {
      if (in == null) {
        throw new IOException("ServerArchiveTraining.class not found");
      }
      bytes = in.readAllBytes();
    }
    Path jar = dir.resolve("server-training-" + hex(sha256(bytes)).substring(0, 16) + ".jar");
    if (!Files.exists(jar)) {
      Path tmp = Files.createTempFile(dir, "server-training", ".tmp");
      try (OutputStream out = Files.newOutputStream(tmp); JarOutputStream j = new JarOutputStream(out)) {
        JarEntry e = new JarEntry(ServerArchiveTraining.class.getName().replace('.', '/') + ".class");
        e.setTime(0); // the same bytes give the same JAR, whose time and size the archive records
        j.putNextEntry(e);
        j.write(bytes);
        j.closeEntry();
      }
      try {
        Files.createLink(jar, tmp); // never replaces one another process made meanwhile (an archive may name it)
      } catch (java.nio.file.FileAlreadyExistsException madeMeanwhile) {
        // the same bytes: theirs is as good
      } catch (IOException | UnsupportedOperationException noLinksHere) {
        try {
          Files.move(tmp, jar); // a file system without hard links: a move, which also never replaces
        } catch (java.nio.file.FileAlreadyExistsException madeMeanwhile) {
          // as above
        }
      } finally {
        Files.deleteIfExists(tmp);
      }
    }
    return jar;
  }

  /** Runs the training JVM: {@code archive} made and accepted by a JVM, or {@code failed} saying why. */
  private static void make(Path archive, Path failed, String java, String archivedPath, String dirs,
                              List<String> jvmOptions) throws IOException {
    System.err.println("sss: making a class-data archive for faster server starts (once per build)...");
    Path work = Files.createTempDirectory(archive.getParent(), "training");
    Path tmp = work.resolve("server.jsa");
    Path log = work.resolve("training.log");
    try {
      List<String> train = new ArrayList<>(List.of(java));
      train.addAll(jvmOptions);
      train.addAll(List.of("-Xmx512m", "-Djava.io.tmpdir=" + work, "-XX:ArchiveClassesAtExit=" + tmp));
      if (!dirs.isEmpty()) {
        // logback looks for SSS's log configuration with its own loader, which does not see the
        // directories: without a file it would log everything at DEBUG
        Path quiet = work.resolve("logback.xml");
        Files.writeString(quiet, "<configuration><appender name=\"E\" class=\"ch.qos.logback.core.ConsoleAppender\">"
            + "<encoder><pattern>%msg%n</pattern></encoder></appender><root level=\"WARN\"><appender-ref ref=\"E\"/>"
            + "</root></configuration>\n", StandardCharsets.UTF_8);
        train.add("-Dlogback.configurationFile=" + quiet);
      }
      train.addAll(List.of("-cp", archivedPath, ServerArchiveTraining.class.getName(), dirs));
      Boolean trained = run(train, log);
      if (trained == null) {
        return; // interrupted: not a verdict on the class path, so no mark either
      }
      boolean made = trained && Files.isRegularFile(tmp) && Files.size(tmp) > 0;
      if (made) {
        List<String> check = new ArrayList<>(List.of(java));
        check.addAll(jvmOptions);
        check.addAll(List.of("-XX:SharedArchiveFile=" + tmp, "-Xshare:on", "-cp", archivedPath, "-version"));
        Boolean accepted = run(check, log);
        if (accepted == null) {
          return;
        }
        made = accepted;
      }
      if (made) {
        removeOthers(archive);
        Files.move(tmp, archive, StandardCopyOption.REPLACE_EXISTING, StandardCopyOption.ATOMIC_MOVE);
        return;
      }
      Files.move(log, failed, StandardCopyOption.REPLACE_EXISTING);
      System.err.println("sss: no class-data archive for the servers (see " + failed + "); they start slower");
    } finally {
      deleteTree(work);
    }
  }

  /** Whether {@code command} exited with 0 within the training's time; null when this thread was interrupted. */
  private static Boolean run(List<String> command, Path log) throws IOException {
    Process p;
    try {
      p = new ProcessBuilder(command).redirectErrorStream(true)
          .redirectOutput(ProcessBuilder.Redirect.appendTo(log.toFile())).start();
    } catch (IOException e) {
      System.err.println("sss: cannot run " + command.get(0) + " to make the servers' class-data archive: " + e);
      return null; // (out of processes or memory for now?) no verdict on the class path
    }
    try {
      if (!p.waitFor(TRAINING_TIMEOUT.toSeconds(), TimeUnit.SECONDS)) {
        p.destroyForcibly().waitFor();
        Files.writeString(log, "\n(ended after " + TRAINING_TIMEOUT.toSeconds() + " s)\n", StandardCharsets.UTF_8,
            StandardOpenOption.APPEND);
        return false;
      }
      return p.exitValue() == 0;
    } catch (InterruptedException e) {
      p.destroyForcibly();
      Thread.currentThread().interrupt();
      return null;
    }
  }

  /** One archive per directory: those of earlier builds go when a new one is made. */
  private static void removeOthers(Path archive) throws IOException {
    try (DirectoryStream<Path> s = Files.newDirectoryStream(archive.getParent(), "server-*.jsa*")) {
      for (Path p : s) {
        if (!p.equals(archive)) {
          Files.deleteIfExists(p);
        }
      }
    }
  }

  /** The JVM, its options and every JAR (path, size, time): what decides whether an archive fits. */
  private static String digest(String java, List<String> jars, List<String> jvmOptions) throws IOException {
    StringBuilder what = new StringBuilder(Path.of(java).toRealPath().toString())
        .append('\n').append(System.getProperty("java.vm.version")).append('\n').append(jvmOptions);
    for (String jar : jars) {
      Path p = Path.of(jar);
      what.append('\n').append(p.toAbsolutePath()).append(' ').append(Files.size(p)).append(' ')
          .append(Files.getLastModifiedTime(p).toMillis());
    }
    return hex(sha256(what.toString().getBytes(StandardCharsets.UTF_8))).substring(0, 16);
  }

  private static byte[] sha256(byte[] bytes) {
    try {
      return MessageDigest.getInstance("SHA-256").digest(bytes);
    } catch (NoSuchAlgorithmException e) {
      throw new IllegalStateException(e);
    }
  }

  private static String hex(byte[] bytes) {
    return HexFormat.of().formatHex(bytes);
  }

  private static void deleteTree(Path root) {
    try (var walk = Files.walk(root)) {
      walk.sorted(Comparator.reverseOrder()).forEach(p -> p.toFile().delete());
    } catch (IOException | RuntimeException ignored) {
      // a temporary directory left behind
    }
  }

  /**
   * What the training JVM does (called by {@link ServerArchiveTraining}): the paths a server
   * takes in its first seconds, so that their classes are in the archive. Two nodes keeping two
   * copies (the members' consensus), a table written by both writers, read by key, scan and
   * count, and a map-combine-reduce job.
   */
  static void train() throws Exception {
    try (EmbeddedCluster cluster = EmbeddedCluster.start(2, 4, 2);
         SssClient client = SssClient.connect(cluster.spec())) {
      TableSpec lines = TableSpec.of(PairTypes.of(DataType.LONG, DataType.STRING));
      client.createTable("lines", lines, false);
      try (BulkWriter w = client.writer("lines", lines.types())) {
        for (long i = 0; i < 2_000; i++) {
          w.put(Serdes.LONG.encodeKey(i), Serdes.STRING.encodeValue("line " + i + " of the training"));
        }
      }
      client.putAll("lines", lines.types(), List.of(new Pair(Serdes.LONG.encodeKey(-1L), Serdes.STRING.encodeValue("x"))));
      client.get("lines", Serdes.LONG.encodeKey(7L));
      client.count("lines");
      try (TableScan scan = client.scan("lines", ScanOptions.anyOrder())) {
        while (scan.hasNext()) {
          scan.next();
        }
      }
      Job job = Job.named("training")
          .input("lines", Serdes.LONG, Serdes.STRING)
          .map(Words.class, Serdes.STRING, Serdes.LONG)
          .combine(Sum.class)
          .reduce(Sum.class, Serdes.STRING, Serdes.LONG)
          .output("counts")
          .build();
      try {
        client.submit(job).await();
      } catch (JobFailedException e) {
        // The nodes load user classes with the loader of their own classes: where those come from
        // a JAR and this class from a directory (one module's tests run alone), they cannot find
        // Words. The job's own paths ran nonetheless; only its user classes are not archived.
        System.out.println("training job: " + e.getMessage());
      }
      client.dropTable("lines", false);
      client.dropTable("counts", true);
    }
  }

  /** The training job's map: the words of a line. */
  public static final class Words implements Mapper<Long, String, String, Long> {
    @Override
    public void map(Long key, String line, Emitter<String, Long> out) {
      for (String w : line.split(" ")) {
        out.emit(w, 1L);
      }
    }
  }

  /** The training job's combiner and reducer. */
  public static final class Sum implements Reducer<String, Long, String, Long> {
    @Override
    public void reduce(String key, Iterable<Long> values, Emitter<String, Long> out) {
      long sum = 0;
      for (long v : values) {
        sum += v;
      }
      out.emit(key, sum);
    }
  }
}
