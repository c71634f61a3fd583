#!/bin/bash
# usage: drill.sh REPO DIR   -- load big.txt into a 3-node R=2 cluster, kill node 1, restart it, time its catch-up
set -u
REPO=$1; D=$2
rm -rf $D; cd $REPO
bin/sss cluster start --nodes 3 --dir $D --heap 2g > $D.start.log 2>&1 || { echo start failed; cat $D.start.log; exit 1; }
C="--cluster $D/cluster.properties"
/usr/bin/time -f "load %e s" bin/sss $C load lines ${TEXT:-/tmp/cu/big.txt} 2>&1 | tail -2
bin/sss $C count lines
kill -9 $(pgrep -f "ServerMain.*$D/node-1/")
for i in $(seq 1 60); do sleep 1; if bin/sss $C ping 2>&1 | grep -q "out of the in-sync copies \[1\]"; then echo "out after $i s"; break; fi; done
t0=$(date +%s.%N)
bin/sss cluster start --dir $D > /dev/null 2>&1
for i in $(seq 1 600); do sleep 0.5; if ! bin/sss $C ping 2>&1 | grep -qE "catching up|out of the in-sync|unreachable"; then break; fi; done
t1=$(date +%s.%N)
echo "restart to in sync: $(echo "$t1 - $t0" | bc) s"
grep -h "copied .* pair" $D/node-1/*.log $D/*.log 2>/dev/null | tail -2
bin/sss $C count lines
bin/sss cluster stop --dir $D > /dev/null 2>&1
