package org.sss.bench.edges;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;

import java.nio.file.Files;
import java.nio.file.Path;
import java.util.Arrays;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/** The edges picture: the medians it draws, and a PNG file where it was asked for. */
class EdgesPlotTest {
  @TempDir
  Path dir;

  @Test
  void drawsEachThingsMedianRateIntoAPng() throws Exception {
    List<String> csv = List.of("what,run,seconds,MB/s",
        "sss wordcount,1,4.68,229", "spark wordcount,1,11.77,91",
        "sss wordcount,2,4.96,216", "spark wordcount,2,12.92,83",
        "sss wordcount,3,5.20,206", "spark wordcount,3,12.34,87",
        "dd write with fsync,1,2.27,473");
    Map<String, Double> medians = EdgesPlot.medianRates(csv);
    assertEquals(List.of("sss wordcount", "spark wordcount", "dd write with fsync"), List.copyOf(medians.keySet()));
    assertEquals(216.0, medians.get("sss wordcount"));
    assertEquals(87.0, medians.get("spark wordcount"));
    assertEquals(473.0, medians.get("dd write with fsync"));
    assertEquals(150.0, EdgesPlot.medianRates(List.of("what,run,seconds,MB/s", "x,1,1,100", "x,2,1,200")).get("x"));

    Path png = dir.resolve("edges.png");
    EdgesPlot.write(medians, png);
    byte[] head = Arrays.copyOf(Files.readAllBytes(png), 8);
    assertArrayEquals(new byte[] {(byte) 0x89, 'P', 'N', 'G', '\r', '\n', 0x1a, '\n'}, head);
  }

  @Test
  void aLineOfOtherFieldsIsRefusedNamingIt() {
    IllegalArgumentException e = assertThrows(IllegalArgumentException.class,
        () -> EdgesPlot.medianRates(List.of("what,run,seconds,MB/s", "sss wordcount,1,4.68")));
    assertEquals("not what,run,seconds,MB/s: 'sss wordcount,1,4.68'", e.getMessage());
  }
}
