#!/usr/bin/env bash
# Files in and out, whole processes, on this machine:
#  1. WordCount on a 1 GiB RandomTextWriter file, file in and file out: `bin/sss example wordcount`
#     (the embedded cluster, one node by default, reads the file's splits) against Spark local[2]
#     (org.sss.bench.spark.SparkWordCount, its own JVM) and Hadoop's own WordCount
#     (org.apache.hadoop.examples.WordCount, the local job runner with 2 map and 2 reduce slots,
#     as the classic benchmark configures it, its own JVM), alternated, ROUNDS times each.
#  2. `bin/sss load` of the same file into a 3-process cluster (`cluster start`, two copies):
#     read by the nodes (a new table) and sent by the client (--append into an empty table).
#  3. `dd` of the same bytes to a file and back, for the disk's rate.
# Writes results.csv, edges.png (each row's median MB/s) and command.txt into benchmarks/results/edges/.
# Usage: benchmarks/results/edges/run.sh [ROUNDS]   (run from the repository's root, after a build)
set -euo pipefail
ROUNDS=${1:-3}
OUT=benchmarks/results/edges
T=$(mktemp -d /tmp/sss-edges.XXXXXX)
trap 'bin/sss cluster stop --dir "$T/cluster" >/dev/null 2>&1 || true; rm -rf "$T"' EXIT
TEXT=$T/rtw1g.txt
bin/sss example randomtextwriter "$TEXT" --bytes 1g --seed 1 > "$T/rtw.log"
BYTES=$(stat -c %s "$TEXT")
SPARK_CP="benchmarks/spark/target/sss-bench-spark-0.1.0-SNAPSHOT.jar:benchmarks/spark/target/lib/*"
[ -f benchmarks/spark/target/sss-bench-spark-0.1.0-SNAPSHOT.jar ] || mvn -q -B -f benchmarks/spark/pom.xml package -DskipTests
secs() { /usr/bin/time -f %e -o "$T/t" "$@" > "$T/last.log" 2>&1; cat "$T/t"; }
# Spark's JVM gets bin/sss's heap: -Xmx4g -Xmn256m, and huge pages where the kernel gives them on request
SPARK_OPTS=(-Xmx4g -Xmn256m)
[[ "${SSS_THP:-1}" != 0 ]] && grep -qE '\[(always|madvise)\]' /sys/kernel/mm/transparent_hugepage/enabled 2>/dev/null \
  && SPARK_OPTS+=(-XX:+UseTransparentHugePages)
echo "what,run,seconds,MB/s" > $OUT/results.csv
for r in $(seq 1 "$ROUNDS"); do
  rm -rf "$T/wc" "$T/spark"
  s=$(secs bin/sss example wordcount "$TEXT" "$T/wc/")
  grep -q "1,000 distinct words" "$T/last.log" || { cat "$T/last.log"; exit 1; }
  echo "sss wordcount file-in file-out,$r,$s,$(echo "$BYTES / $s / 1000000" | bc -l | xargs printf %.0f)" >> $OUT/results.csv
  p=$(SPARK_LOCAL_IP=127.0.0.1 secs java "${SPARK_OPTS[@]}" -cp "$SPARK_CP" org.sss.bench.spark.SparkWordCount "$TEXT" 2 "$T/spark" 0 1)
  cmp <(sort "$T/wc/part-r-00000") <(cat "$T/spark"/run-1/part-* | sort) || { echo "outputs differ"; exit 1; }
  echo "spark local[2] wordcount file-in file-out,$r,$p,$(echo "$BYTES / $p / 1000000" | bc -l | xargs printf %.0f)" >> $OUT/results.csv
  rm -rf "$T/hadoop" "$T/hadoop-tmp"
  h=$(secs java "${SPARK_OPTS[@]}" -cp "benchmarks/target/lib/*" org.apache.hadoop.examples.WordCount \
    -D mapreduce.framework.name=local -D fs.defaultFS=file:/// -D hadoop.tmp.dir="$T/hadoop-tmp" \
    -D mapreduce.local.map.tasks.maximum=2 -D mapreduce.local.reduce.tasks.maximum=2 "$TEXT" "$T/hadoop")
  cmp "$T/wc/part-r-00000" "$T/hadoop/part-r-00000" || { echo "SSS's and Hadoop's outputs differ"; exit 1; }
  echo "hadoop wordcount file-in file-out,$r,$h,$(echo "$BYTES / $h / 1000000" | bc -l | xargs printf %.0f)" >> $OUT/results.csv
done
bin/sss cluster start --nodes 3 --dir "$T/cluster" > /dev/null
C="--cluster $T/cluster/cluster.properties"
for r in $(seq 1 "$ROUNDS"); do
  sync
  s=$(secs bin/sss $C load "nodes-$r" "$TEXT")
  echo "sss load 3 processes 2 copies (nodes read),$r,$s,$(echo "$BYTES / $s / 1000000" | bc -l | xargs printf %.0f)" >> $OUT/results.csv
  bin/sss $C table create "client-$r" --key long --value string > /dev/null
  sync
  c=$(secs bin/sss $C load "client-$r" "$TEXT" --append)
  echo "sss load 3 processes 2 copies (client sends),$r,$c,$(echo "$BYTES / $c / 1000000" | bc -l | xargs printf %.0f)" >> $OUT/results.csv
  [ "$(bin/sss $C count "nodes-$r")" = "$(bin/sss $C count "client-$r")" ] || { echo "counts differ"; exit 1; }
  bin/sss $C table drop "nodes-$r" > /dev/null; bin/sss $C table drop "client-$r" > /dev/null
done
sync
w=$(secs dd if="$TEXT" of="$T/dd.out" bs=4M conv=fsync)
echo "dd write with fsync,1,$w,$(echo "$BYTES / $w / 1000000" | bc -l | xargs printf %.0f)" >> $OUT/results.csv
echo 3 > /proc/sys/vm/drop_caches 2>/dev/null || true
d=$(secs dd if="$T/dd.out" of=/dev/null bs=4M)
echo "dd read,1,$d,$(echo "$BYTES / $d / 1000000" | bc -l | xargs printf %.0f)" >> $OUT/results.csv
# the picture: each row's median MB/s (edges.png)
java -cp "$(ls benchmarks/target/benchmarks-*.jar | head -1):benchmarks/target/lib/*" org.sss.bench.edges.EdgesPlot \
  $OUT/results.csv $OUT/edges.png
echo "input: $BYTES bytes of RandomTextWriter text (seed 1)" > $OUT/command.txt
echo "benchmarks/results/edges/run.sh $ROUNDS" >> $OUT/command.txt
cat $OUT/results.csv
