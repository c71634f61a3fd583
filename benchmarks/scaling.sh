#!/usr/bin/env bash
# Shuffle throughput against the number of hosts, with the network as the bottleneck: the
# shuffle-intensive shape at a fixed size per host on 1, 2 and 4 network-namespace hosts whose
# links are shaped to --rate (default 100mbit). Needs root. Writes DIR/scaling.md and .csv.
#   benchmarks/scaling.sh [--rate 100mbit] [--per-host 32MiB] [--hosts "1 2 4"] [--input-keys 1024] [--tcp cubic] [--out DIR]
# --tcp sets the hosts' TCP congestion control (default cubic, Linux's own default; "host" keeps
# whatever the machine uses, which the namespaces inherit).
# Besides the job's time it records what each host's link carried (the bridge ports' byte
# counters), TCP retransmits, queue drops and the machine's CPU, so a run that falls short of
# the link bound says where the time went.
set -euo pipefail
SSS_HOME="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
# without --out, results go to a new directory (the published ones are in benchmarks/results/scaling)
rate=100mbit; per_host_mib=32; hosts="1 2 4"; input_keys=1024; tcp=cubic; out="${TMPDIR:-/tmp}/sss-results/scaling-$(date +%Y%m%d-%H%M%S)"
while [[ $# -gt 0 ]]; do
  case "$1" in
    --rate) rate="$2"; shift 2 ;;
    --per-host) per_host_mib="${2%MiB}"; shift 2 ;;
    --hosts) hosts="$2"; shift 2 ;;
    --input-keys) input_keys="$2"; shift 2 ;;
    --tcp) tcp="$2"; shift 2 ;;
    --out) out="$2"; shift 2 ;;
    *) echo "usage: $0 [--rate R] [--per-host NMiB] [--hosts \"1 2 4\"] [--input-keys N] [--tcp CC|host] [--out DIR]" >&2; exit 2 ;;
  esac
done
mkdir -p "$out"
work="$(mktemp -d)"
trap 'for d in "$work"/c[0-9]*; do [[ -f "$d/netns.state" ]] && "$SSS_HOME/docker/netns-cluster.sh" down --dir "$d" >/dev/null; done' EXIT
echo "hosts,mib_shuffled,job_seconds,mb_per_s,efficiency,link_bound_seconds,share_of_link_bound,busiest_link_vs_mean,busiest_link_bound_seconds,share_of_busiest_link_bound,retransmitted_segments,queue_drops,cpu_busy" > "$out/scaling.csv"

# One line of counters for cluster directory $1: per host "sent received" bytes (its bridge
# port's rx and tx), then TCP segments sent and retransmitted in all its namespaces, packets
# its qdiscs dropped, and the machine's busy and total CPU ticks.
counters() {
  local c="$1" line="" out_segs=0 retrans=0 drops=0
  while read -r kind name _; do
    case "$kind" in
      veth) line="$line $(cat "/sys/class/net/$name/statistics/rx_bytes") $(cat "/sys/class/net/$name/statistics/tx_bytes")"
        drops=$((drops + $(tc -s qdisc show dev "$name" | awk '/dropped/ {gsub(",", "", $7); s += $7} END {print s + 0}'))) ;;
      netns)
        read -r o r < <(ip netns exec "$name" awk '/^Tcp:/ {if (!h) {for (i = 1; i <= NF; i++) f[$i] = i; h = 1} else print $f["OutSegs"], $f["RetransSegs"]}' /proc/net/snmp)
        out_segs=$((out_segs + o)); retrans=$((retrans + r))
        drops=$((drops + $(ip netns exec "$name" tc -s qdisc show dev eth0 | awk '/dropped/ {gsub(",", "", $7); s += $7} END {print s + 0}'))) ;;
    esac
  done < "$c/netns.state"
  echo "$line $out_segs $retrans $drops $(awk '/^cpu / {print $2 + $3 + $4 + $7 + $8 + $9, $2 + $3 + $4 + $5 + $6 + $7 + $8 + $9}' /proc/stat)"
}
case "$rate" in
  *gbit) link_mbs="$(awk -v r="${rate%gbit}" 'BEGIN {print r * 1000 / 8}')" ;;
  *mbit) link_mbs="$(awk -v r="${rate%mbit}" 'BEGIN {print r / 8}')" ;;
  *) echo "rate must end in mbit or gbit" >&2; exit 2 ;;
esac
base=""
for n in $hosts; do
  c="$work/c$n"
  tcp_args=(); [[ "$tcp" == host ]] || tcp_args=(--tcp "$tcp")
  "$SSS_HOME/docker/netns-cluster.sh" up "$n" --dir "$c" --rate "$rate" ${tcp_args[@]+"${tcp_args[@]}"} >/dev/null
  cat > "$work/scaling-$n.properties" <<P
workload=scaling-$n
nodes=$n
threadsPerNode=1
totalBytes=$((per_host_mib * n))MiB
initialKeyCount=$input_keys
initialValueLength=1
sweep.mapoutKeyCount=4K
mapoutUniqueKeyCount=1K
reduceoutValueLength=1
partitionMethod=average
combinerEnabled=false
repeats=2
engines=sss
P
  before="$(counters "$c")"
  "$SSS_HOME/bin/sss" --cluster "$c/cluster.properties" bench "$work/scaling-$n.properties" --engines sss \
    --out "$work/out-$n" > "$work/console-$n.txt" 2>&1
  after="$(counters "$c")"
  # the busiest link against the mean (bytes over all runs: the ratio is each run's), retransmitted
  # share of TCP segments, qdisc drops, and how busy the machine's cores were during the runs
  read -r skew retrans drops busy < <(awk -v n="$n" -v a="$after" -v b="$before" 'BEGIN {
      split(a, x, " "); split(b, y, " "); max = 0; sum = 0
      for (i = 0; i < n; i++) {
        s = x[2 * i + 1] - y[2 * i + 1]; r = x[2 * i + 2] - y[2 * i + 2]; sum += s
        if (s > max) max = s; if (r > max) max = r
      }
      o = x[2 * n + 1] - y[2 * n + 1]; t = x[2 * n + 2] - y[2 * n + 2]
      printf "%.2f %s %d %.0f%%\n", (n > 1 && sum > 0 ? max * n / sum : 1), (o > 0 ? sprintf("%.2f%%", 100 * t / o) : "-"),
        x[2 * n + 3] - y[2 * n + 3], 100 * (x[2 * n + 4] - y[2 * n + 4]) / (x[2 * n + 5] - y[2 * n + 5])}')
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
  busiest="$(awk -v b="$bound" -v k="$skew" 'BEGIN {printf "%.2f", b * k}')"
  busiest_share="$(awk -v b="$busiest" -v s="$secs" 'BEGIN {printf (b > 0 ? "%.0f%%" : "-"), 100 * b / s}')"
  echo "$n,$mib,$secs,$mbs,$eff,$bound,$share,$skew,$busiest,$busiest_share,$retrans,$drops,$busy" >> "$out/scaling.csv"
  echo "hosts=$n: $mib MiB shuffled in $secs s = $mbs MB/s (efficiency $eff, link-bound time $bound s)"
done
{
  echo "# Shuffle scaling over network-namespace hosts"
  echo
  echo "Command: \`benchmarks/scaling.sh --rate $rate --per-host ${per_host_mib}MiB --hosts \"$hosts\" --input-keys $input_keys --tcp $tcp\`"
  echo
  echo "Each host is a network namespace on one bridge with its link shaped to $rate (tbf, both"
  echo "directions), so the network rather than this machine's two cores limits the shuffle. The"
  echo "shuffle-intensive shape moves ${per_host_mib} MiB per host ($input_keys input pairs, 4K map output pairs over"
  echo "1K keys, hash placement, no combiner); every run is verified; the faster of two repeats is"
  echo "shown. Efficiency is throughput / (hosts x single-host throughput); a single host shuffles"
  echo "without the network, so the link-bound time — each host's (n-1)/n share through its own"
  echo "link at $rate — is the fairer yardstick, and *share of link bound* is that bound over the"
  echo "measured time. The rest is counted over all runs of a row: *busiest link* is the most"
  echo "bytes one host's link carried (sent or received) over the mean a host sent, and its bound"
  echo "the time that link needs at $rate; retransmits are TCP's retransmitted share of segments"
  echo "sent, drops the packets the shaping queues dropped, CPU the machine's busy share."
  echo
  echo "| hosts | MiB shuffled | job s | MB/s | efficiency vs 1 host | link-bound s | share of link bound | busiest link / mean | its bound s | share of its bound | retransmits | queue drops | CPU busy |"
  echo "|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|"
  tail -n +2 "$out/scaling.csv" | awk -F, '{printf "| %s | %s | %s | %s | %s | %s | %s | %s | %s | %s | %s | %s | %s |\n", $1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11, $12, $13}'
  echo
  echo "TCP congestion control in the hosts: $([[ "$tcp" == host ]] && echo "$(sysctl -n net.ipv4.tcp_congestion_control), the machine's" || echo "$tcp")."
  echo
  echo "Machine: $(nproc) cores, $(awk '/MemTotal/ {printf "%.0f GiB", $2 / 1048576}' /proc/meminfo), load before the run: $(cut -d' ' -f1-3 /proc/loadavg)."
} > "$out/scaling.md"
cat "$out/scaling.md"
echo "results in $out"
