#!/usr/bin/env bash
# Shuffle throughput against the number of hosts, with the network as the bottleneck: the
# shuffle-intensive shape at a fixed size per host on 1, 2 and 4 network-namespace hosts whose
# links are shaped to --rate (default 100mbit). Needs root. Writes DIR/scaling.md and .csv.
#   benchmarks/scaling.sh [--rate 100mbit] [--per-host 32MiB] [--hosts "1 2 4"] [--out DIR]
set -euo pipefail
SSS_HOME="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
# without --out, results go to a new directory (the published ones are in benchmarks/results/scaling)
rate=100mbit; per_host_mib=32; hosts="1 2 4"; out="${TMPDIR:-/tmp}/sss-results/scaling-$(date +%Y%m%d-%H%M%S)"
while [[ $# -gt 0 ]]; do
  case "$1" in
    --rate) rate="$2"; shift 2 ;;
    --per-host) per_host_mib="${2%MiB}"; shift 2 ;;
    --hosts) hosts="$2"; shift 2 ;;
    --out) out="$2"; shift 2 ;;
    *) echo "usage: $0 [--rate R] [--per-host NMiB] [--hosts \"1 2 4\"] [--out DIR]" >&2; exit 2 ;;
  esac
done
mkdir -p "$out"
work="$(mktemp -d)"
trap 'for d in "$work"/c[0-9]*; do [[ -f "$d/netns.state" ]] && "$SSS_HOME/docker/netns-cluster.sh" down --dir "$d" >/dev/null; done' EXIT
echo "hosts,mib_shuffled,job_seconds,mb_per_s,efficiency,link_bound_seconds,share_of_link_bound" > "$out/scaling.csv"
case "$rate" in
  *gbit) link_mbs="$(awk -v r="${rate%gbit}" 'BEGIN {print r * 1000 / 8}')" ;;
  *mbit) link_mbs="$(awk -v r="${rate%mbit}" 'BEGIN {print r / 8}')" ;;
  *) echo "rate must end in mbit or gbit" >&2; exit 2 ;;
esac
base=""
for n in $hosts; do
  c="$work/c$n"
  "$SSS_HOME/docker/netns-cluster.sh" up "$n" --dir "$c" --rate "$rate" >/dev/null
  cat > "$work/scaling-$n.properties" <<P
workload=scaling-$n
nodes=$n
threadsPerNode=1
totalBytes=$((per_host_mib * n))MiB
initialKeyCount=16
initialValueLength=1
sweep.mapoutKeyCount=4K
mapoutUniqueKeyCount=1K
reduceoutValueLength=1
partitionMethod=average
combinerEnabled=false
repeats=2
engines=sss
P
  "$SSS_HOME/bin/sss" --cluster "$c/cluster.properties" bench "$work/scaling-$n.properties" --engines sss \
    --out "$work/out-$n" > "$work/console-$n.txt" 2>&1
  "$SSS_HOME/docker/netns-cluster.sh" down --dir "$c" >/dev/null
  # fastest verified job time of the timed runs (results.csv: ...,kind,run,phase,seconds,verified; warm-ups left out)
  secs="$(awk -F, '$4 == "sss" && $6 == "timed" && $8 == "job" && $10 == "true" {print $9}' "$work/out-$n/results.csv" \
    | sort -g | head -1)"
  mib=$((per_host_mib * n))
  mbs="$(awk -v m="$mib" -v s="$secs" 'BEGIN {printf "%.1f", m * 1.048576 / s}')"
  [[ -z "$base" ]] && base="$(awk -v m="$mbs" -v k="$n" 'BEGIN {print m / k}')"
  eff="$(awk -v m="$mbs" -v b="$base" -v k="$n" 'BEGIN {printf "%.2f", m / (b * k)}')"
  # each host sends (n-1)/n of its share over its own link (and receives as much)
  bound="$(awk -v p="$per_host_mib" -v k="$n" -v l="$link_mbs" 'BEGIN {printf "%.2f", p * 1.048576 * (k - 1) / k / l}')"
  share="$(awk -v b="$bound" -v s="$secs" 'BEGIN {printf (b > 0 ? "%.0f%%" : "-"), 100 * b / s}')"
  echo "$n,$mib,$secs,$mbs,$eff,$bound,$share" >> "$out/scaling.csv"
  echo "hosts=$n: $mib MiB shuffled in $secs s = $mbs MB/s (efficiency $eff, link-bound time $bound s)"
done
{
  echo "# Shuffle scaling over network-namespace hosts"
  echo
  echo "Command: \`benchmarks/scaling.sh --rate $rate --per-host ${per_host_mib}MiB --hosts \"$hosts\"\`"
  echo
  echo "Each host is a network namespace on one bridge with its link shaped to $rate (tbf, both"
  echo "directions), so the network rather than this machine's two cores limits the shuffle. The"
  echo "shuffle-intensive shape moves ${per_host_mib} MiB per host (4K pairs over 1K keys, hash placement, no"
  echo "combiner); every run is verified; the faster of two repeats is shown. Efficiency is"
  echo "throughput / (hosts x single-host throughput); a single host shuffles without the network,"
  echo "so the link-bound time — each host's (n-1)/n share through its own link at $rate — is the"
  echo "fairer yardstick: the last column is that bound as a share of the measured time."
  echo
  echo "| hosts | MiB shuffled | job s | MB/s | efficiency vs 1 host | link-bound s | share of link bound |"
  echo "|---:|---:|---:|---:|---:|---:|---:|"
  tail -n +2 "$out/scaling.csv" | awk -F, '{printf "| %s | %s | %s | %s | %s | %s | %s |\n", $1, $2, $3, $4, $5, $6, $7}'
  echo
  echo "Machine: $(nproc) cores, $(awk '/MemTotal/ {printf "%.0f GiB", $2 / 1048576}' /proc/meminfo), load before the run: $(cut -d' ' -f1-3 /proc/loadavg)."
} > "$out/scaling.md"
cat "$out/scaling.md"
echo "results in $out"
