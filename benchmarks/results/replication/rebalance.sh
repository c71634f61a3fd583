#!/bin/bash
# usage: benchmarks/results/replication/rebalance.sh [SIZE]   (from the repository's top; SIZE default 512m)
# A 3-node cluster keeping two copies, a RandomTextWriter file loaded; then, timed as whole
# commands: cluster resize --nodes 4 (a rebalance: the partitions that gain a copy on the new node
# move), --nodes 3 (node 3 removed for good: its partitions move), and --partitions 48 (every
# table moves, for comparison). The table's count and a WordCount checksum are compared after each.
set -eu
SIZE=${1:-512m}
T=${TMPDIR:-/tmp}/sss-rebalance
rm -rf "$T"; mkdir -p "$T"
D=$T/cluster; C="--cluster $D/cluster.properties"
bin/sss example randomtextwriter "$T/text.txt" --bytes "$SIZE" --seed 1 > "$T/rtw.log"
bytes=$(stat -c %s "$T/text.txt")
bin/sss cluster start --nodes 3 --dir "$D" > "$T/start.log"
bin/sss $C load lines "$T/text.txt" > "$T/load.log" 2>&1
count0=$(bin/sss $C count lines)
echo "file: $bytes bytes, $count0 lines, 2 copies, $(grep -o '^partitions=[0-9]*' "$D/cluster.properties")"
echo "step,seconds,partitions_moved,lines_after,same_count"
for step in "--nodes 4" "--nodes 3" "--partitions 48"; do
  t0=$(date +%s.%N)
  bin/sss cluster resize --dir "$D" $step | while IFS= read -r line; do
    echo "$(echo "$(date +%s.%N) - $t0" | bc | xargs printf '%6.2f') s  $line"; done > "$T/resize.log"
  t1=$(date +%s.%N)
  sed 's/^/#   /' "$T/resize.log" >> "$T/steps.txt"
  moved=$(grep -o '([0-9]* partitions moved)' "$T/resize.log" | grep -o '[0-9]*' || echo all)
  n=$(bin/sss $C count lines)
  echo "$step,$(echo "$t1 - $t0" | bc),$moved,$n,$([ "$n" = "$count0" ] && echo yes || echo NO)"
done
bin/sss cluster stop --dir "$D" > /dev/null
echo "# each resize's steps, seconds from its start:"
cat "$T/steps.txt"
