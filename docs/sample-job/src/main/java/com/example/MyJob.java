package com.example;

import java.nio.file.Path;
import java.util.Locale;
import org.sss.client.SssClient;
import org.sss.client.job.Job;
import org.sss.client.job.JobResult;
import org.sss.client.job.ProgressListener;
import org.sss.core.api.Emitter;
import org.sss.core.api.Mapper;
import org.sss.core.api.Reducer;
import org.sss.core.api.Serdes;
import org.sss.core.api.TaskContext;

/** Counts the words of the table "lines" (byte offset, line) into the table "counts". */
public class MyJob {
  public static class Tokenize implements Mapper<Long, String, String, Long> {
    private TaskContext.Counter words;

    @Override
    public void setup(TaskContext context) {
      words = context.counter("words"); // summed over every task, reported with the job
    }

    @Override
    public void map(Long offset, String line, Emitter<String, Long> out) {
      for (String word : line.toLowerCase(Locale.ROOT).split("[^\\p{L}\\p{N}]+")) {
        if (!word.isEmpty()) {
          out.emit(word, 1L);
          words.increment();
        }
      }
    }
  }

  public static class Sum implements Reducer<String, Long, String, Long> {
    @Override
    public void reduce(String word, Iterable<Long> counts, Emitter<String, Long> out) {
      long sum = 0;
      for (long c : counts) {
        sum += c;
      }
      out.emit(word, sum);
    }
  }

  public static void main(String[] args) throws Exception {
    Job job = Job.named("wordcount")
        .input("lines", Serdes.LONG, Serdes.STRING)
        .map(Tokenize.class, Serdes.STRING, Serdes.LONG)
        .combine(Sum.class)
        .reduce(Sum.class, Serdes.STRING, Serdes.LONG)
        .output("counts")
        .jarByClass(MyJob.class) // ships the JAR holding Tokenize and Sum to the nodes
        .build();
    Path clusterFile = Path.of(args.length > 0 ? args[0] : "/tmp/sss/cluster.properties");
    try (SssClient sss = SssClient.connect(clusterFile)) {
      JobResult r = sss.submit(job).await(ProgressListener.console());
      long words = r.stages().get(r.stages().size() - 1).recordsOut();
      System.out.printf("counted %d words, %d distinct, in %.2f s%n", r.counter("words"), words, r.seconds());
    }
  }
}
