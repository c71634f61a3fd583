#!/bin/bash
# usage (as root, from the repository's top): benchmarks/results/replication/frozen-disk-drill.sh [job|append|leader]
# A node whose disk hangs: node 2 of a 3-process cluster keeping two copies has its directory on
# an ext4 file system of its own (a loop device), frozen with fsfreeze 3 s into a load of 300 MB
# of RandomTextWriter text: every write to that disk then blocks, while the node's process,
# its connections and its event loops go on. Mode job (default): `bin/sss load` (the nodes read
# the file: a job). Mode append: `bin/sss load --append` (the client's bulk writer). Mode leader:
# as job, with the cluster started again until node 2 leads the members (Raft), so that the
# frozen node is the one that decides who is down. Prints the
# members' view every 5 s, the load's outcome and the counts while frozen and after the thaw.
# Needs root, a loop device, mkfs.ext4, fsfreeze, and /work/data/rtw.txt or SSS_DRILL_TEXT.
set -u
MODE=${1:-job}
TEXT=${SSS_DRILL_TEXT:-/work/data/rtw.txt}
T=${TMPDIR:-/tmp}/sss-frozen-disk; SSS="$(pwd)/bin/sss"
cleanup() { fsfreeze --unfreeze "$T/cluster/node-2" 2>/dev/null; $SSS cluster stop --dir "$T/cluster" >/dev/null 2>&1; sleep 2;
  umount "$T/cluster/node-2" 2>/dev/null || umount -l "$T/cluster/node-2" 2>/dev/null; umount "$T/disk" 2>/dev/null; }
trap cleanup EXIT
cleanup; rm -rf "$T"; mkdir -p "$T/disk"
truncate -s 2G "$T/disk.img" && mkfs.ext4 -q -F "$T/disk.img" && mount -o loop "$T/disk.img" "$T/disk"
head -c 300000000 "$TEXT" > "$T/in.txt"
$SSS cluster start --dir "$T/cluster" --nodes 3 --replication 2 --heap 1g > /dev/null
$SSS cluster stop --dir "$T/cluster" > /dev/null
# node 2's directory moves onto the file system that will freeze
cp -a "$T/cluster/node-2/." "$T/disk/" && umount "$T/disk" && rm -rf "$T/cluster/node-2" && mkdir "$T/cluster/node-2" \
  && mount -o loop "$T/disk.img" "$T/cluster/node-2"
$SSS cluster start --dir "$T/cluster" | tail -1
C="--cluster $T/cluster/cluster.properties"
if [ "$MODE" = leader ]; then
  for i in $(seq 1 12); do
    sleep 2
    $SSS $C ping 2>&1 | grep -q 'leader node 2,' && break
    $SSS cluster stop --dir "$T/cluster" > /dev/null; $SSS cluster start --dir "$T/cluster" > /dev/null
  done
  echo "members: $($SSS $C ping 2>&1 | grep membership)"
fi
[ "$MODE" = append ] && { printf 'a b a\n' > "$T/six.txt"; $SSS $C load t "$T/six.txt" > /dev/null; }
elapsed() { echo "$(date +%s.%N) - $t0" | bc | xargs printf "%5.1f"; }
t0=$(date +%s.%N)
if [ "$MODE" = append ]; then args="--append"; else args=""; fi
( $SSS $C load $args t "$T/in.txt" 2>&1 | grep -v '^stage' > "$T/load.log"; echo "load ended at $(elapsed) s" >> "$T/load.log" ) &
sleep 3
fsfreeze --freeze "$T/cluster/node-2"; echo "$(elapsed) s: froze node 2's disk"
for i in $(seq 1 40); do
  sleep 5
  echo "$(elapsed) s: $($SSS $C ping 2>&1 | grep membership)"
  grep -q "load ended" "$T/load.log" && break
done
cat "$T/load.log"
echo "count while frozen: $($SSS $C count t 2>&1 | tail -1)"
fsfreeze --unfreeze "$T/cluster/node-2"; echo "$(elapsed) s: thawed"
for i in $(seq 1 6); do sleep 5; echo "$(elapsed) s: $($SSS $C ping 2>&1 | grep membership)"; done
echo "count after: $($SSS $C count t 2>&1 | tail -1)"
echo "lines in the file (the last one has no newline): $(wc -l < "$T/in.txt") + 1"
