#!/usr/bin/env bash
# Dumping a 1 GiB table, whole processes, on this machine:
#  1. `bin/sss load` of a 1 GiB RandomTextWriter file into a 3-process cluster (`cluster start`,
#     two copies, the default there), once.
#  2. `bin/sss dump TABLE DIR/` (every node writes the partitions it leads into part-m-NNNNN
#     files, at once) against `bin/sss dump TABLE FILE` (the client writes one file in key
#     order), alternated, ROUNDS times each; the two outputs hold the same lines (checked
#     after sorting in round 1, by line and byte counts in every round), after one untimed dump
#     of each kind (the load's compactions settle, the servers warm up).
#  3. `dd` of the same bytes: to a file through the page cache (as the dump writes), to a file
#     with fsync, and back.
# Usage: benchmarks/results/edges/dump.sh [ROUNDS]   (run from the repository's root, after a build)
set -euo pipefail
ROUNDS=${1:-3}
OUT=benchmarks/results/edges
T=$(mktemp -d /tmp/sss-dump.XXXXXX)
trap 'bin/sss cluster stop --dir "$T/cluster" >/dev/null 2>&1 || true; rm -rf "$T"' EXIT
TEXT=$T/rtw1g.txt
bin/sss example randomtextwriter "$TEXT" --bytes 1g --seed 1 > "$T/rtw.log"
secs() { /usr/bin/time -f %e -o "$T/t" "$@" > "$T/last.log" 2>&1 || { cat "$T/last.log"; exit 1; }; cat "$T/t"; }
rate() { echo "$1 / $2 / 1000000" | bc -l | xargs printf %.0f; }
bin/sss cluster start --nodes 3 --dir "$T/cluster" > /dev/null
C="--cluster $T/cluster/cluster.properties"
bin/sss $C load text "$TEXT" 2> /dev/null
# untimed: the load's compactions settle, and one dump of each kind warms the servers up
sleep 20
bin/sss $C dump text "$T/warm/" 2> /dev/null; bin/sss $C dump text "$T/warm.txt" 2> /dev/null; rm -rf "$T/warm" "$T/warm.txt"
echo "what,run,seconds,MB/s" > $OUT/dump.csv
for r in $(seq 1 "$ROUNDS"); do
  rm -rf "$T/parts" "$T/one.txt"; sync
  p=$(secs bin/sss $C dump text "$T/parts/")
  [ -f "$T/parts/_SUCCESS" ] || { echo "no _SUCCESS"; exit 1; }
  BYTES=$(cat "$T"/parts/part-* | wc -c)
  echo "sss dump into part files (every node),$r,$p,$(rate "$BYTES" "$p")" >> $OUT/dump.csv
  sync
  s=$(secs bin/sss $C dump text "$T/one.txt")
  [ "$(stat -c %s "$T/one.txt")" = "$BYTES" ] || { echo "sizes differ"; exit 1; }
  [ "$(wc -l < "$T/one.txt")" = "$(cat "$T"/parts/part-* | wc -l)" ] || { echo "line counts differ"; exit 1; }
  if [ "$r" = 1 ]; then
    cmp <(LC_ALL=C sort -S 4G "$T/one.txt") <(cat "$T"/parts/part-* | LC_ALL=C sort -S 4G) || { echo "dumps differ"; exit 1; }
    echo "parts: $(ls "$T/parts" | grep -c part-) files, $BYTES bytes, $(wc -l < "$T/one.txt") lines" > $OUT/dump-parts.txt
  fi
  echo "sss dump into one file (client),$r,$s,$(rate "$BYTES" "$s")" >> $OUT/dump.csv
done
rm -rf "$T/parts" "$T/one.txt"; sync
BYTES=$(stat -c %s "$TEXT") # dd copies the text file
for r in 1 2; do
  w=$(secs dd if="$TEXT" of="$T/dd.out" bs=4M)
  echo "dd write (page cache),$r,$w,$(rate "$BYTES" "$w")" >> $OUT/dump.csv
  rm -f "$T/dd.out"; sync
done
for r in 1 2; do
  f=$(secs dd if="$TEXT" of="$T/dd.out" bs=4M conv=fsync)
  echo "dd write with fsync,$r,$f,$(rate "$BYTES" "$f")" >> $OUT/dump.csv
  [ "$r" = 2 ] || { rm -f "$T/dd.out"; sync; }
done
echo 3 > /proc/sys/vm/drop_caches # needs root, as the read must come from the disk
d=$(secs dd if="$T/dd.out" of=/dev/null bs=4M)
echo "dd read (caches dropped),1,$d,$(rate "$BYTES" "$d")" >> $OUT/dump.csv
echo "benchmarks/results/edges/dump.sh $ROUNDS" > $OUT/dump-command.txt
cat $OUT/dump.csv
