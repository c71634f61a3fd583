#!/bin/bash
# usage: benchmarks/results/replication/load-copies.sh [ROUNDS] [SIZE] [nodes|client] [cold|warm] [lz4|zstd|none]
#        (from the repository's top)
# What a second copy costs a load: `bin/sss load` of one RandomTextWriter file (SIZE, default 1g)
# into a new 3-process cluster (1 GiB heap each) keeping one copy, then one keeping two,
# alternated ROUNDS times (default 3), a fresh cluster per load. `nodes` (the default): the
# nodes read the file (a job); `client`: the client reads it and sends it through its bulk writer
# (`load --append` into a table made first), and the seconds are the whole command's, timed here.
# The load's own report line is kept; counts are compared with the file's lines. Also: the
# servers' CPU seconds by thread kind (/proc/PID/task/*/stat, before and after the load), to show
# where the time goes. `warm` (the fourth argument; `cold`, the default, as before): each cluster
# first loads the same file into another table, dropped before the measured load, so that the
# measured load runs on servers whose JIT compiler has compiled the load's code, as on a cluster
# that has been running: the seconds and CPU are then those of the copies, not of the servers'
# warm-up (which loads more code with two copies: the replicated paths). The fifth argument is
# the loaded table's compression (`load --compression`, `table create --compression`; lz4 the default).
set -eu
ROUNDS=${1:-3}
SIZE=${2:-1g}
KIND=${3:-nodes}
case "$KIND" in nodes|client) ;; *) echo "the third argument is nodes or client, not $KIND" >&2; exit 2 ;; esac
WARMTH=${4:-cold}
case "$WARMTH" in cold|warm) ;; *) echo "the fourth argument is cold or warm, not $WARMTH" >&2; exit 2 ;; esac
COMPRESSION=${5:-lz4}
T=${TMPDIR:-/tmp}/sss-load-copies
rm -rf "$T"; mkdir -p "$T"
trap 'bin/sss cluster stop --dir "$T/cluster" >/dev/null 2>&1 || true' EXIT
bin/sss example randomtextwriter "$T/text.txt" --bytes "$SIZE" --seed 1 > "$T/rtw.log"
bytes=$(stat -c %s "$T/text.txt")
lines=$(wc -l < "$T/text.txt")
cpu() { # pid... -> "thread-kind ticks" per line, summed
  for p in "$@"; do for s in /proc/$p/task/*/stat; do cat "$s" 2>/dev/null; done; done \
    | sed -E 's/^[0-9]+ \((.*)\) [A-Z] (.*)$/\1|\2/' \
    | awk -F'|' '{split($2,f," "); k=$1; gsub(/[0-9]+/,"N",k); gsub(/ /,"_",k); t[k]+=f[11]+f[12]} END {for (k in t) print k, t[k]}' | sort
}
echo "file: $bytes bytes, $lines lines; $KIND load, $WARMTH servers, compression $COMPRESSION"
echo "round,copies,seconds,MB/s,lines_counted,cpu_seconds_servers"
for r in $(seq 1 "$ROUNDS"); do
  for copies in 1 2; do
    rm -rf "$T/cluster"
    bin/sss cluster start --nodes 3 --replication "$copies" --dir "$T/cluster" --heap 1g > "$T/start.log"
    pids=$(pgrep -f "$T/cluster/node-" | tr '\n' ' ')
    if [ "$WARMTH" = warm ]; then
      if [ "$KIND" = nodes ]; then
        bin/sss --cluster "$T/cluster/cluster.properties" load w "$T/text.txt" --compression "$COMPRESSION" > "$T/warm.log" 2>&1
      else
        bin/sss --cluster "$T/cluster/cluster.properties" table create w --key long --value string --compression "$COMPRESSION" > /dev/null
        bin/sss --cluster "$T/cluster/cluster.properties" load w "$T/text.txt" --append > "$T/warm.log" 2>&1
      fi
      bin/sss --cluster "$T/cluster/cluster.properties" table drop w > /dev/null
    fi
    sleep 2; sync
    cpu $pids > "$T/cpu0"
    if [ "$KIND" = nodes ]; then
      bin/sss --cluster "$T/cluster/cluster.properties" load t "$T/text.txt" --compression "$COMPRESSION" > "$T/load.log" 2>&1
      secs=$(grep -o '[0-9.]* s$' "$T/load.log" | tail -1 | cut -d' ' -f1)
    else
      bin/sss --cluster "$T/cluster/cluster.properties" table create t --key long --value string --compression "$COMPRESSION" > /dev/null
      start=$(date +%s.%N)
      bin/sss --cluster "$T/cluster/cluster.properties" load t "$T/text.txt" --append > "$T/load.log" 2>&1
      secs=$(echo "$(date +%s.%N) - $start" | bc -l | xargs printf %.2f)
    fi
    cpu $pids > "$T/cpu1"
    n=$(bin/sss --cluster "$T/cluster/cluster.properties" count t)
    stored=$(bin/sss --cluster "$T/cluster/cluster.properties" table stats t | grep -o 'bytes=[0-9]*' | cut -d= -f2)
    echo "#   round $r, $copies copies: the table takes $((stored / 1000000)) MB (table stats: every copy's files)" >> "$T/threads.txt"
    # threads started during the load count from 0 (join -a 2 -e 0 keeps them)
    delta() { join -a 2 -e 0 -o 0,1.2,2.2 "$T/cpu0" "$T/cpu1" | awk '{print $1, $3-$2}'; }
    total=$(delta | awk '{s+=$2} END {printf "%.1f", s/100}')
    echo "$r,$copies,$secs,$(echo "$bytes / $secs / 1000000" | bc -l | xargs printf %.0f),$n,$total"
    delta | sort -k2,2nr | awk -v c="$copies" -v r="$r" '$2 >= 20 {printf "#   round %d, %d copies: %-16s %5.1f s\n", r, c, $1, $2/100}' >> "$T/threads.txt"
    [ "$n" = "$lines" ] || { echo "count $n, file has $lines lines"; exit 1; }
    bin/sss cluster stop --dir "$T/cluster" > /dev/null
  done
done
echo "# servers' CPU by thread kind, per load:"
cat "$T/threads.txt"
