package org.sss.bench;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

class ResultTablesTest {
  private static final Path ROOT = Path.of(System.getProperty("user.dir")).getParent();

  @TempDir
  Path dir;

  @Test
  void committedReadmes_showWhatTheirCsvFilesHold() throws IOException {
    for (String readme : ResultTables.READMES) {
      Path file = ROOT.resolve(readme);
      String text = Files.readString(file);
      assertTrue(text.contains("<!-- table: "), readme + " has rendered tables");
      assertEquals(text, ResultTables.render(text, file.getParent()),
          readme + " differs from its CSV files: run bin/sss bench-tables from the repository root");
    }
  }

  @Test
  void syntheticSummary_ratiosAreHadoopOverSssMedians() throws IOException {
    Files.writeString(dir.resolve("summary.csv"), """
        workload,param,value,engine,combiner,phase,warmups,runs,median,min,max,verified
        read-intensive,initialKeyCount,64,sss,false,load,1,3,9.0,9.0,9.0,true
        read-intensive,initialKeyCount,64,sss,false,job,1,3,2.0,1.0,3.0,true
        read-intensive,initialKeyCount,64,hadoop,false,job,1,3,4.0,4.0,4.0,true
        read-intensive,initialKeyCount,1K,sss,false,job,0,3,1.0,1.0,1.0,true
        read-intensive,initialKeyCount,1K,hadoop,false,job,0,3,0.5,0.5,0.5,true
        """);
    String text = "before\n<!-- table: synthetic-vs-hadoop -->\nstale\n<!-- end table -->\nafter\n";
    String rendered = ResultTables.render(text, dir);
    assertTrue(rendered.startsWith("before\n<!-- table: synthetic-vs-hadoop -->\n| workload |"), rendered);
    assertTrue(rendered.contains("| read-intensive | off | initialKeyCount 64 … 1K | 1 of 2 | 0.50x–2.00x |\n"
        + "<!-- end table -->\nafter\n"), rendered);
    assertEquals(rendered, ResultTables.render(rendered, dir), "rendering twice changes nothing");
  }

  @Test
  void classicJobs_mediansOfTimedRunsOnly() throws IOException {
    Files.writeString(dir.resolve("results.csv"), """
        workload,param,value,engine,combiner,kind,run,phase,seconds,verified
        pi,maps,8,sss,true,warmup,1,job,100.0,true
        pi,maps,8,sss,true,timed,1,job,3.0,true
        pi,maps,8,sss,true,timed,2,job,1.0,true
        pi,maps,8,sss,true,timed,3,job,2.0,true
        pi,maps,8,hadoop,true,timed,1,job,5.0,true
        pi,maps,8,hadoop,true,timed,2,job,6.0,false
        wordcount,input,1 MiB,sss,true,timed,1,job,2.0,true
        wordcount,input,1 MiB,sss,true,timed,1,file-to-file,1.0,true
        wordcount,input,1 MiB,spark,true,timed,1,job,3.0,true
        wordcount,input,1 MiB,spark,true,timed,1,file-to-file,3.0,true
        """);
    String rendered = ResultTables.render("<!-- table: classic-jobs -->\n<!-- end table -->", dir);
    assertTrue(rendered.contains("| pi | 8 | SSS | - | - | 2.00 | 1.00–3.00 | - | - | - | - | yes |"), rendered);
    assertTrue(rendered.contains("| pi | 8 | Hadoop | - | - | 5.00 | 5.00–5.00 | 2.50x | - | - | - | 1 of 2 |"),
        "an unverified run is in no median, range or ratio: " + rendered);
    assertTrue(rendered.contains("| wordcount | 1 MiB | Spark | - | - | 3.00 | 3.00–3.00 | 1.50x | 3.00 | 3.00–3.00 | 3.00x | yes |"),
        "file to file, against SSS's own file-to-file figure: " + rendered);
  }

  @Test
  void aMarkerTheRendererCannotRead_orACsvRowOfAnotherShape_isAnError() throws IOException {
    IllegalArgumentException marker = assertThrows(IllegalArgumentException.class,
        () -> ResultTables.render("<!-- table: Classic2 -->\n<!-- end table -->", dir));
    assertTrue(marker.getMessage().contains("1 table markers but 0 readable"), marker.getMessage());
    Files.writeString(dir.resolve("results.csv"), "workload,param,value,engine,combiner,kind,run,phase,seconds,verified\n"
        + "pi,maps,8,sss,true,timed,1,job,3.0\n");
    IllegalArgumentException row = assertThrows(IllegalArgumentException.class,
        () -> ResultTables.render("<!-- table: classic-jobs -->\n<!-- end table -->", dir));
    assertTrue(row.getMessage().contains("results.csv line 2: expected 10 plain fields"), row.getMessage());
  }

  @Test
  void unknownTable_isNamed() {
    IllegalArgumentException e = assertThrows(IllegalArgumentException.class,
        () -> ResultTables.render("<!-- table: nope -->\n<!-- end table -->", dir));
    assertTrue(e.getMessage().contains("'nope'"), e.getMessage());
  }
}
