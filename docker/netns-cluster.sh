#!/usr/bin/env bash
# A cluster of separate network hosts on one machine: N network namespaces on one bridge,
# one SSS server per namespace, optionally shaped with tc netem. Needs root.
#
#   docker/netns-cluster.sh up N --dir DIR [--rate 1gbit] [--delay 0.1ms] [--heap 1g]
#   docker/netns-cluster.sh down --dir DIR
#   docker/netns-cluster.sh link down|up I --dir DIR     # cut or restore node I's link
#   docker/netns-cluster.sh restart I --dir DIR          # start node I again after it died
#
# `up` writes DIR/cluster.properties, usable from the host: bin/sss --cluster DIR/cluster.properties ...
# Everything it creates is recorded in DIR/netns.state; `down` removes exactly that.
# Servers run with the class path in $SSS_SERVER_CP (default: the jars bin/sss builds).
set -euo pipefail
SSS_HOME="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"

die() { echo "netns-cluster: $*" >&2; exit 1; }
usage() { sed -n '2,12p' "$0" >&2; exit 2; }

cmd="${1:-}"; shift || true
n=""; dir=""; rate=""; delay=""; heap="1g"; link_action=""; link_node=""
if [[ "$cmd" == "up" ]]; then n="${1:-}"; shift || true; fi
if [[ "$cmd" == "link" ]]; then link_action="${1:-}"; link_node="${2:-}"; shift 2 || true; fi
if [[ "$cmd" == "restart" ]]; then link_node="${1:-}"; shift || true; fi
while [[ $# -gt 0 ]]; do
  case "$1" in
    --dir) dir="$2"; shift 2 ;;
    --rate) rate="$2"; shift 2 ;;
    --delay) delay="$2"; shift 2 ;;
    --heap) heap="$2"; shift 2 ;;
    *) usage ;;
  esac
done
[[ -n "$dir" ]] || usage
[[ $EUID -eq 0 ]] || die "needs root (network namespaces)"

state="$dir/netns.state"
# A bridge and subnet per cluster directory, so that clusters in different directories coexist.
tag="$(printf '%s' "$(cd "$(dirname "$dir")" 2>/dev/null && pwd)/$(basename "$dir")" | cksum | cut -c1-4)"
subnet_octet=$(( (10#$tag % 200) + 20 ))
bridge="sssbr$tag"

java_bin="${JAVA_HOME:+$JAVA_HOME/bin/}java"

up() {
  [[ "$n" =~ ^[1-9][0-9]*$ ]] || die "N must be a positive number"
  [[ ! -f "$state" ]] || die "$dir already holds a namespace cluster (run down first)"
  mkdir -p "$dir"
  local cp="${SSS_SERVER_CP:-}"
  if [[ -z "$cp" ]]; then
    [[ -d "$SSS_HOME/benchmarks/target/lib" ]] || (cd "$SSS_HOME" && mvn -q -B -DskipTests package)
    cp="$(ls "$SSS_HOME"/benchmarks/target/lib/*.jar | grep -E '/(sss-|rocksdbjni|netty-|protobuf-java|guava|failureaccess|listenablefuture|jspecify|error_prone|j2objc|jsr305|slf4j-api|logback-|picocli)' | tr '\n' ':')"
  fi
  : > "$state"
  ip link add "$bridge" type bridge
  echo "bridge $bridge" >> "$state"
  ip addr add "10.$subnet_octet.0.254/24" dev "$bridge"
  ip link set "$bridge" up
  local secret; secret="$(head -c 32 /dev/urandom | od -An -tx1 | tr -d ' \n')"
  {
    echo "secret=$secret"
    echo "partitions=$((8 * n))"
    for ((i = 0; i < n; i++)); do echo "node.$i=10.$subnet_octet.0.$((i + 1)):7070"; done
  } > "$dir/cluster.properties"
  chmod 600 "$dir/cluster.properties"
  for ((i = 0; i < n; i++)); do
    local ns="sss$tag-$i" veth="sv$tag-$i"
    ip netns add "$ns"; echo "netns $ns" >> "$state"
    ip link add "$veth" type veth peer name eth0 netns "$ns"
    echo "veth $veth $i" >> "$state"
    ip link set "$veth" master "$bridge" up
    ip -n "$ns" addr add "10.$subnet_octet.0.$((i + 1))/24" dev eth0
    ip -n "$ns" link set eth0 up
    ip -n "$ns" link set lo up
    if [[ -n "$rate" || -n "$delay" ]]; then
      # shape both directions: the namespace's egress, and the bridge port's egress toward it
      shape "ip netns exec $ns" eth0
      shape "" "$veth"
    fi
    mkdir -p "$dir/node-$i"
    printf 'cluster=../cluster.properties\nnode.id=%d\ndata.dir=data\nbind=10.%d.0.%d\n' "$i" "$subnet_octet" "$((i + 1))" \
      > "$dir/node-$i/node.properties"
    start_node "$i" "$cp"
  done
  echo "classpath $cp" >> "$state"
  await_all
  echo "cluster file: $dir/cluster.properties"
}

# Delay needs netem; a rate alone uses tbf, which every kernel with traffic control has.
shape() {
  local prefix="$1" dev="$2"
  if [[ -n "$delay" ]]; then
    $prefix tc qdisc add dev "$dev" root netem ${rate:+rate $rate} delay "$delay" \
      || die "--delay needs the netem qdisc, which this kernel lacks (use --rate alone)"
  else
    $prefix tc qdisc add dev "$dev" root tbf rate "$rate" burst 256kb latency 100ms
  fi
}

start_node() {
  local i="$1" cp="$2" ns="sss$tag-$1"
  ip netns exec "$ns" setsid "$java_bin" -Xmx"$heap" -XX:+UseParallelGC -cp "$cp" org.sss.server.ServerMain \
    --config "$dir/node-$i/node.properties" >> "$dir/node-$i/server.log" 2>&1 < /dev/null &
  echo $! > "$dir/node-$i/pid"
  echo "pid $i $!" >> "$state"
}

await_all() {
  for ((t = 0; t < 120; t++)); do
    local ok=1
    for f in "$dir"/node-*/node.properties; do
      local host; host="$(sed -n 's/^bind=//p' "$f")"
      (exec 3<>"/dev/tcp/$host/7070") 2>/dev/null || ok=0
    done
    [[ $ok == 1 ]] && return 0
    sleep 0.5
  done
  die "servers did not start; see $dir/node-*/server.log"
}

down() {
  [[ -f "$state" ]] || die "no namespace cluster in $dir"
  while read -r kind a b; do
    [[ "$kind" == pid ]] && kill "$b" 2>/dev/null || true
  done < "$state"
  sleep 1
  while read -r kind a b; do
    [[ "$kind" == pid ]] && kill -9 "$b" 2>/dev/null || true
  done < "$state"
  while read -r kind a b; do
    case "$kind" in
      netns) ip netns del "$a" 2>/dev/null || true ;;
      veth) ip link del "$a" 2>/dev/null || true ;;
    esac
  done < "$state"
  while read -r kind a b; do
    [[ "$kind" == bridge ]] && { ip link del "$a" 2>/dev/null || true; }
  done < "$state"
  rm -f "$state"
  echo "removed"
}

link() {
  [[ -f "$state" ]] || die "no namespace cluster in $dir"
  local veth; veth="$(awk -v i="$link_node" '$1 == "veth" && $3 == i {print $2}' "$state")"
  [[ -n "$veth" ]] || die "no node $link_node"
  case "$link_action" in
    down) ip link set "$veth" down ;;
    up) ip link set "$veth" up ;;
    *) usage ;;
  esac
}

restart() {
  [[ -f "$state" ]] || die "no namespace cluster in $dir"
  local cp; cp="$(awk '$1 == "classpath" {print $2}' "$state")"
  local i="$link_node"
  start_node "$i" "$cp"
  await_all
}

case "$cmd" in
  up) up ;;
  down) down ;;
  link) link ;;
  restart) restart ;;
  *) usage ;;
esac
