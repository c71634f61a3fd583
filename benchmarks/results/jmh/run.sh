#!/usr/bin/env bash
# The JMH micro-benchmarks of the engine's hot paths (`bin/sss jmh`), with the settings their
# classes set (1 fork, 3 warmup and 5 measured iterations of 3 s each: about 3.5 minutes for all
# eight), kept beside the other results:
#   console.txt   JMH's text output (progress, then the summary table)
#   results.json  JMH's JSON results (-rf json)
#   command.txt   the command, the commit and whether the tree had changes
#   machine.txt   cores, CPU, memory, JVM
# Usage: benchmarks/results/jmh/run.sh [JMH ARGS...]   e.g. `run.sh SortedRuns` for one class.
# bin/sss builds its jars on first use only: after changing the code, run with SSS_REBUILD=1
# (or after `mvn -B -o install -DskipTests`), or this measures the jars of the last build.
set -euo pipefail
cd "$(dirname "$0")/../../.."
OUT=benchmarks/results/jmh
# the tree's state before this script writes its own files into it
changes="$(git status --porcelain -- . ":!$OUT" 2>/dev/null || true)"
{
  echo "bin/sss jmh -foe true -rf json -rff $OUT/results.json $*"
  echo "commit: $(git rev-parse --short HEAD 2>/dev/null || echo unknown)$( [ -n "$changes" ] && echo ' (with uncommitted changes)')"
} > $OUT/command.txt
{
  echo "nproc: $(nproc)"
  grep -m1 'model name' /proc/cpuinfo || true
  grep MemTotal /proc/meminfo
  "${JAVA_HOME:+$JAVA_HOME/bin/}java" -version 2>&1
} > $OUT/machine.txt
# -foe: a benchmark that throws fails the run (JMH would otherwise go on and leave it out)
bin/sss jmh -foe true -rf json -rff "$OUT/results.json" "$@" 2>&1 | tee "$OUT/console.txt"
