package org.sss.client.job;

/**
 * What one stage did, summed over the nodes.
 *
 * @param index           the stage's position in the job
 * @param kind            "map" or "reduce"
 * @param recordsIn       pairs read
 * @param recordsOut      pairs emitted (before combining)
 * @param recordsShuffled pairs written to the stage's output (after combining); a stage that
 *                        writes part files: the lines written
 * @param bytesShuffled   key and value bytes of those pairs; part files: the bytes written
 * @param seconds         wall time of the stage, barrier included
 */
public record StageSummary(int index, String kind, long recordsIn, long recordsOut, long recordsShuffled,
                           long bytesShuffled, double seconds) {}
