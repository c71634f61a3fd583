package org.sss.bench.synthetic;

import java.util.Map;

/**
 * One run of one point on one engine.
 *
 * @param loadSeconds time to store the input in the engine's natural storage
 * @param jobSeconds  time from job submission to its end, as the client sees it
 * @param verified    the output and the counters matched the expected values
 * @param problem     what did not match (empty when verified)
 * @param counters    the engine's own counters (SSS stage figures, Hadoop job counters)
 */
public record RunResult(double loadSeconds, double jobSeconds, boolean verified, String problem,
                        Map<String, Long> counters) {}
