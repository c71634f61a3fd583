package org.sss.bench.spark;

import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.Iterator;
import java.util.List;
import java.util.Locale;
import java.util.StringTokenizer;
import org.apache.spark.SparkConf;
import org.apache.spark.api.java.JavaPairRDD;
import org.apache.spark.api.java.JavaRDD;
import org.apache.spark.api.java.JavaSparkContext;
import scala.Tuple2;

/**
 * WordCount on Spark in local mode, the classic benchmark's Spark side, run in its own JVM:
 * {@code java -cp sss-bench-spark.jar:lib/* org.sss.bench.spark.SparkWordCount INPUT THREADS OUTPUT [WARMUPS REPEATS]}.
 *
 * <p>Tokenizes as Hadoop's WordCount does ({@link StringTokenizer} with its default delimiters)
 * over the lines {@code textFile} reads (Hadoop's line reader: {@code \n}, {@code \r\n}, lone
 * {@code \r}); counts with {@code reduceByKey} (map-side combining, as Hadoop's combiner) into
 * THREADS partitions and writes {@code word<TAB>count} lines as part files in OUTPUT. Prints one
 * line {@code SPARK_RESULT context=S job=S threads=N spark=V run=R} on stdout per run: the seconds
 * to start the context, and the seconds from the job's first RDD to the written output.
 *
 * <p>With WARMUPS and REPEATS, the one context runs WARMUPS untimed warm-up runs and then REPEATS
 * timed runs, into OUTPUT/warmup-1 ... and OUTPUT/run-1 ... (R is warmup-1 ... or 1 ...): the
 * warm-ups load and compile Spark's code in this JVM before its first timed run, as the other
 * engines' warm-ups do in theirs.
 */
public final class SparkWordCount {
  private SparkWordCount() {}

  public static void main(String[] args) throws Exception {
    if (args.length != 3 && args.length != 5) {
      System.err.println("usage: SparkWordCount INPUT THREADS OUTPUT [WARMUPS REPEATS]");
      System.exit(2);
    }
    String input = args[0];
    int threads = Integer.parseInt(args[1]);
    String output = args[2];
    boolean runs = args.length == 5;
    int warmups = runs ? Integer.parseInt(args[3]) : 0;
    int repeats = runs ? Integer.parseInt(args[4]) : 1;
    if (Files.exists(Path.of(output))) {
      System.err.println("output exists: " + output);
      System.exit(2);
    }
    if (runs) {
      Files.createDirectories(Path.of(output));
    }
    long t0 = System.nanoTime();
    SparkConf conf = new SparkConf().setAppName("wordcount").setMaster("local[" + threads + "]")
        .set("spark.ui.enabled", "false")
        .set("spark.ui.showConsoleProgress", "false")
        .set("spark.default.parallelism", Integer.toString(threads));
    try (JavaSparkContext sc = new JavaSparkContext(conf)) {
      sc.setLogLevel("WARN");
      double context = (System.nanoTime() - t0) / 1e9;
      for (int i = 0; i < warmups + repeats; i++) {
        boolean warmup = i < warmups;
        String run = warmup ? "warmup-" + (i + 1) : Integer.toString(i - warmups + 1);
        String target = !runs ? output : Path.of(output, warmup ? run : "run-" + run).toString();
        long t1 = System.nanoTime();
        count(sc, input, threads, target);
        double job = (System.nanoTime() - t1) / 1e9;
        System.out.println(String.format(Locale.ROOT, "SPARK_RESULT context=%.3f job=%.3f threads=%d spark=%s run=%s",
            context, job, threads, sc.version(), run));
        System.out.flush();
      }
    }
  }

  /** One WordCount: {@code input} counted into part files in {@code output}. */
  static void count(JavaSparkContext sc, String input, int threads, String output) {
    JavaRDD<String> lines = sc.textFile(input, threads);
    JavaPairRDD<String, Integer> counts = lines.flatMap(SparkWordCount::tokens)
        .mapToPair(w -> new Tuple2<>(w, 1))
        .reduceByKey(Integer::sum, threads);
    counts.map(t -> t._1() + "\t" + t._2()).saveAsTextFile(output);
  }

  /** The tokens of one line, as Hadoop's WordCount mapper finds them. */
  static Iterator<String> tokens(String line) {
    StringTokenizer t = new StringTokenizer(line);
    List<String> out = new ArrayList<>();
    while (t.hasMoreTokens()) {
      out.add(t.nextToken());
    }
    return out.iterator();
  }
}
