#!/usr/bin/env bash
# The fixed cost of one command, whole processes on this machine: `bin/sss example wordcount`
# of a 6-byte file (the embedded cluster, one node by default, started and stopped, JVM included)
# with and without the launcher's class-data archive, the same with three embedded nodes,
# `bin/sss --version`, Hadoop's own WordCount (hadoop-mapreduce-examples, local mode) on the same
# file, and `java -version` as the floor.
# Each ROUNDS times, alternated; the outputs are checked.
# Usage: benchmarks/results/edges/startup.sh [ROUNDS]   (run from the repository's root, after a build)
set -euo pipefail
ROUNDS=${1:-9}
OUT=benchmarks/results/edges
T=$(mktemp -d /tmp/sss-startup.XXXXXX)
trap 'rm -rf "$T"' EXIT
printf 'a b a\n' > "$T/six.txt"
printf 'a\t2\nb\t1\n' > "$T/expected"
bin/sss --version > /dev/null # builds on first use, makes the class-data archive
LIB=benchmarks/target/lib
check() { cmp -s "$T/expected" "$1" || { echo "wrong output in $1"; cat "$1"; exit 1; }; }
declare -A times
for r in $(seq 1 "$ROUNDS"); do
  rm -rf "$T/o1"; /usr/bin/time -f %e -o "$T/t" bin/sss example wordcount "$T/six.txt" "$T/o1/" > /dev/null 2>&1
  check "$T/o1/part-r-00000"; times[sss]+="$(cat "$T/t") "
  rm -rf "$T/o2"; SSS_CDS=0 /usr/bin/time -f %e -o "$T/t" bin/sss example wordcount "$T/six.txt" "$T/o2/" > /dev/null 2>&1
  check "$T/o2/part-r-00000"; times[nocds]+="$(cat "$T/t") "
  rm -rf "$T/o4"; /usr/bin/time -f %e -o "$T/t" bin/sss --nodes 3 example wordcount "$T/six.txt" "$T/o4/" > /dev/null 2>&1
  check "$T/o4/part-r-00000"; times[three]+="$(cat "$T/t") "
  /usr/bin/time -f %e -o "$T/t" bin/sss --version > /dev/null 2>&1; times[version]+="$(cat "$T/t") "
  rm -rf "$T/o3"; /usr/bin/time -f %e -o "$T/t" java -Xmx4g -cp "$LIB/*" org.apache.hadoop.examples.ExampleDriver \
    wordcount "$T/six.txt" "$T/o3" > /dev/null 2>&1
  check "$T/o3/part-r-00000"; times[hadoop]+="$(cat "$T/t") "
  /usr/bin/time -f %e -o "$T/t" java -Xmx4g -XX:+UseParallelGC -version > /dev/null 2>&1; times[java]+="$(cat "$T/t") "
done
stats() { tr ' ' '\n' | grep . | sort -n | awk '{a[NR]=$1} END {printf "%.2f,%.2f,%.2f", a[int((NR+1)/2)], a[1], a[NR]}'; }
{
  echo "what,median s,min s,max s"
  echo "bin/sss example wordcount 6-byte file (class-data archive),$(echo "${times[sss]}" | stats)"
  echo "bin/sss example wordcount 6-byte file (SSS_CDS=0),$(echo "${times[nocds]}" | stats)"
  echo "bin/sss --nodes 3 example wordcount 6-byte file (class-data archive),$(echo "${times[three]}" | stats)"
  echo "bin/sss --version,$(echo "${times[version]}" | stats)"
  echo "Hadoop WordCount 6-byte file (local mode),$(echo "${times[hadoop]}" | stats)"
  echo "java -version,$(echo "${times[java]}" | stats)"
} > "$OUT/startup.csv"
echo "benchmarks/results/edges/startup.sh $ROUNDS  (commit $(git rev-parse --short HEAD 2>/dev/null || echo none))" > "$OUT/startup-command.txt"
cat "$OUT/startup.csv"
