#!/usr/bin/env bash
# Tables' SST block size (sss.block.bytes) against what it changes, alternating sizes:
#   benchmarks/results/edges/block-size.sh [ROUNDS] [SIZES]      (defaults: 2, "4096 65536 16384")
# from the repository's root after `mvn -B -o install -DskipTests`. Needs the 1 GiB RandomTextWriter
# text at $TEXT (default /tmp/wc/in1g.txt; made if missing) and root (it drops the page cache
# before the random reads). Prints one line per measurement.
set -euo pipefail
cd "$(dirname "$0")/../../.."
ROUNDS="${1:-2}"; SIZES="${2:-4096 65536 16384}"
TEXT="${TEXT:-/tmp/wc/in1g.txt}"; WORK="$(mktemp -d /tmp/sss-block-size.XXXXXX)"
trap 'bin/sss cluster stop --dir "$WORK/c" >/dev/null 2>&1 || true; rm -rf "$WORK"' EXIT
[[ -s "$TEXT" ]] || { mkdir -p "$(dirname "$TEXT")"; bin/sss example randomtextwriter --bytes 1g --seed 1 "$TEXT"; }
BYTES=$(stat -c %s "$TEXT")
cat > "$WORK/classic.properties" <<P
workload=classic
workloads=wordcount
engines=sss
nodes=1
threadsPerNode=2
classic.textBytes=1GiB
repeats=2
warmups=1
P
javac -d "$WORK" -cp "benchmarks/target/lib/*" benchmarks/results/edges/RandomGets.java

# 1. the classic benchmark's WordCount (embedded node): load, the job over the stored table, file to file
for r in $(seq 1 "$ROUNDS"); do for x in $SIZES; do
  SSS_JAVA_OPTS="-Xmx4g -Xmn1g -Dsss.block.bytes=$x" bin/sss bench "$WORK/classic.properties" --out "$WORK/classic-$x-$r" >/dev/null 2>&1
  echo "classic block=$x round=$r $(grep ',timed,' "$WORK/classic-$x-$r/results.csv" | awk -F, '{printf "%s=%s ", $8, $9}')"
done; done

# 2. a 3-process cluster, one copy: load (the nodes read), dump (part files), the table's bytes, random reads
for x in $SIZES; do
  rm -rf "$WORK/c"
  SSS_SERVER_JAVA_OPTS="-Dsss.block.bytes=$x" bin/sss cluster start --dir "$WORK/c" --nodes 3 --replication 1 >/dev/null 2>&1
  C=(--cluster "$WORK/c/cluster.properties")
  bin/sss "${C[@]}" load warm "$TEXT" >/dev/null 2>&1
  for i in 1 2; do
    load=$(bin/sss "${C[@]}" load "t$i" "$TEXT" 2>&1 | tail -1)
    rm -rf "$WORK/dump"
    dump=$( { /usr/bin/time -f "%e" bin/sss "${C[@]}" dump "t$i" "$WORK/dump/" >/dev/null; } 2>&1 | tail -1)
    echo "cluster block=$x ${load#load }  dump $dump s"
  done
  echo "cluster block=$x $(bin/sss "${C[@]}" table list | grep '^t1')"
  sync; echo 3 > /proc/sys/vm/drop_caches
  java -cp "$WORK:benchmarks/target/lib/*" RandomGets "$WORK/c/cluster.properties" t1 "$BYTES" "$TEXT" 2>&1 \
    | grep round | sed "s/^/gets block=$x /"
  bin/sss cluster stop --dir "$WORK/c" >/dev/null 2>&1
done
