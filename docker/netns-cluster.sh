#!/usr/bin/env bash
# A cluster of separate network hosts on one machine: N network namespaces on one bridge,
# one SSS server per namespace, optionally shaped with tc netem. Needs root.
#
#   docker/netns-cluster.sh up N --dir DIR [--rate 1gbit] [--delay 0.1ms] [--heap 1g] [--replication R] [--tcp cubic]
#   docker/netns-cluster.sh down --dir DIR
#   docker/netns-cluster.sh link down|up I --dir DIR     # cut or restore node I's link
#   docker/netns-cluster.sh restart I --dir DIR          # start node I again after it died
#   docker/netns-cluster.sh kill I --dir DIR             # kill -9 of every process on node I's host
#   docker/netns-cluster.sh exec I --dir DIR -- CMD...   # run CMD on node I's host (its namespace)
#
# `up` writes DIR/cluster.properties, usable from the host: bin/sss --cluster DIR/cluster.properties ...
# `up` on a DIR that holds a cluster starts exactly the nodes that do not run (after a crash).
# Whether a node runs is asked of the node itself (`sss node state`: its data directory's lock
# and its answer); `down` asks each node to flush and exit (`sss node stop`) before it removes
# the namespaces. Everything it creates is recorded in DIR/netns.state; `down` removes exactly that.
# Servers run with the class path in $SSS_SERVER_CP (default: the jars bin/sss builds).
set -euo pipefail
SSS_HOME="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"

die() { echo "netns-cluster: $*" >&2; exit 1; }
usage() { sed -n '2,13p' "$0" >&2; exit 2; }

cmd="${1:-}"; shift || true
n=""; dir=""; rate=""; delay=""; heap="1g"; replication=""; tcp=""; link_action=""; link_node=""
if [[ "$cmd" == "up" ]]; then n="${1:-}"; shift || true; fi
if [[ "$cmd" == "link" ]]; then link_action="${1:-}"; link_node="${2:-}"; shift 2 || true; fi
if [[ "$cmd" == "restart" || "$cmd" == "kill" || "$cmd" == "exec" ]]; then link_node="${1:-}"; shift || true; fi
exec_cmd=()
while [[ $# -gt 0 ]]; do
  case "$1" in
    --) shift; exec_cmd=("$@"); break ;;
    --dir) dir="$2"; shift 2 ;;
    --rate) rate="$2"; shift 2 ;;
    --delay) delay="$2"; shift 2 ;;
    --tcp) tcp="$2"; shift 2 ;;
    --heap) heap="$2"; shift 2 ;;
    --replication) replication="$2"; shift 2 ;;
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

# The server's class path (it holds the command line too): the cluster's own, else
# $SSS_SERVER_CP, else the jars bin/sss builds.
classpath() {
  if [[ -f "$state" ]] && grep -q '^classpath ' "$state"; then
    awk '$1 == "classpath" {print $2}' "$state"
  elif [[ -n "${SSS_SERVER_CP:-}" ]]; then
    echo "$SSS_SERVER_CP"
  else
    [[ -d "$SSS_HOME/benchmarks/target/lib" ]] || (cd "$SSS_HOME" && mvn -q -B -DskipTests package) >&2
    ls "$SSS_HOME"/benchmarks/target/lib/*.jar | grep -E '/(sss-|rocksdbjni|netty-|protobuf-java|guava|failureaccess|listenablefuture|jspecify|error_prone|j2objc|jsr305|slf4j-api|logback-|ratis-)' | tr '\n' ':'
  fi
}

sss_cli() {
  "$java_bin" -Xmx256m -cp "$(classpath)" -Dsss.log.level=ERROR org.sss.client.cli.SssCommand "$@"
}

# running, stopped or unresponsive, as the node itself says (its lock and its answer); with a
# third argument --serving, `not serving` for a node that runs but does not serve yet
node_state() {
  sss_cli node state --config "$dir/node-$1/node.properties" --wait "${2:-30}" ${3:-} 2>/dev/null || true
}

up() {
  [[ "$n" =~ ^[1-9][0-9]*$ ]] || die "N must be a positive number"
  [[ -n "$replication" ]] || replication=$(( n >= 2 ? 2 : 1 ))   # two copies where there are two hosts
  [[ "$replication" =~ ^[1-9][0-9]*$ && "$replication" -le "$n" ]] || die "--replication must be 1..$n, not $replication"
  if [[ -f "$state" ]]; then
    restart_all
    return
  fi
  ! ip link show "$bridge" >/dev/null 2>&1 \
    || die "bridge $bridge (subnet 10.$subnet_octet.0.0/24) is in use by another namespace cluster; use another --dir"
  mkdir -p "$dir"
  local cp; cp="$(classpath)"
  : > "$state"
  echo "nodes $n" >> "$state"
  echo "classpath $cp" >> "$state"
  ip link add "$bridge" type bridge
  echo "bridge $bridge" >> "$state"
  ip addr add "10.$subnet_octet.0.254/24" dev "$bridge"
  ip link set "$bridge" up
  local secret; secret="$(head -c 32 /dev/urandom | od -An -tx1 | tr -d ' \n')"
  # created owner-only (umask in a subshell), never readable by others even for a moment
  (
    umask 077
    {
      echo "secret=$secret"
      echo "partitions=$((8 * n))"
      echo "replication=$replication"   # each namespace is a host of its own: copies land on distinct ones
      for ((i = 0; i < n; i++)); do echo "node.$i=10.$subnet_octet.0.$((i + 1)):7070"; done
    } > "$dir/cluster.properties"
  )
  for ((i = 0; i < n; i++)); do
    local ns="sss$tag-$i" veth="sv$tag-$i"
    ip netns add "$ns"; echo "netns $ns" >> "$state"
    ip link add "$veth" type veth peer name eth0 netns "$ns"
    echo "veth $veth $i" >> "$state"
    ip link set "$veth" master "$bridge" up
    ip -n "$ns" addr add "10.$subnet_octet.0.$((i + 1))/24" dev eth0
    ip -n "$ns" link set eth0 up
    ip -n "$ns" link set lo up
    if [[ -n "$tcp" ]]; then
      # the namespace's TCP congestion control (else the host's); a namespace may only pick
      # one the host allows
      ip netns exec "$ns" sysctl -qw net.ipv4.tcp_congestion_control="$tcp" 2>/dev/null \
        || die "--tcp $tcp: this host lets namespaces choose only among '$(sysctl -n net.ipv4.tcp_allowed_congestion_control)' (as root: sysctl -w net.ipv4.tcp_allowed_congestion_control='$(sysctl -n net.ipv4.tcp_allowed_congestion_control) $tcp')"
    fi
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
  local thp=() # huge pages for the heap where the kernel gives them on request (as bin/sss)
  if [[ "${SSS_THP:-1}" != "0" ]] && grep -qE '\[(always|madvise)\]' /sys/kernel/mm/transparent_hugepage/enabled 2>/dev/null; then
    thp=(-XX:+UseTransparentHugePages)
  fi
  ip netns exec "$ns" setsid "$java_bin" -Xmx"$heap" -XX:+UseParallelGC "${thp[@]}" \
    --add-opens=java.base/java.nio=ALL-UNNAMED -Dio.netty.tryReflectionSetAccessible=true -cp "$cp" org.sss.server.ServerMain \
    --config "$dir/node-$i/node.properties" >> "$dir/node-$i/server.log" 2>&1 < /dev/null &
}

# Starts node I unless it runs; a node still being torn down is waited for first.
ensure_node() {
  local i="$1" cp="$2"
  case "$(node_state "$i")" in
    running) echo "node $i: already running" ;;
    stopped) start_node "$i" "$cp" ;;
    *) die "node $i holds its data directory's lock but does not answer; stop it first (sss node stop --config $dir/node-$i/node.properties)" ;;
  esac
}

await_all() {
  local count; count="$(awk '$1 == "nodes" {print $2}' "$state")"
  for ((i = 0; i < count; i++)); do
    for ((t = 0; ; t++)); do
      # serving, not only answering: a load committed before the members recorded a node's store is refused
      [[ "$(node_state "$i" 1 --serving)" == running ]] && break
      ((t < 120)) || die "node $i did not start; its log, $dir/node-$i/server.log, ends with:
$(tail -n 20 "$dir/node-$i/server.log" 2>/dev/null)"
      sleep 0.5
    done
  done
}

# `up` on an existing cluster: starts exactly the nodes that do not run.
restart_all() {
  local count cp; count="$(awk '$1 == "nodes" {print $2}' "$state")"
  cp="$(awk '$1 == "classpath" {print $2}' "$state")"
  [[ "$n" == "$count" ]] || die "$dir holds a namespace cluster of $count nodes, not $n"
  for ((i = 0; i < count; i++)); do ensure_node "$i" "$cp"; done
  await_all
  echo "cluster file: $dir/cluster.properties"
}

down() {
  [[ -f "$state" ]] || die "no namespace cluster in $dir"
  local count failed=0; count="$(awk '$1 == "nodes" {print $2}' "$state")"
  for ((i = 0; i < count; i++)); do
    # each node flushes every table and exits; one that does not answer is said so
    sss_cli node stop --config "$dir/node-$i/node.properties" || failed=1
  done
  [[ $failed == 0 ]] || echo "netns-cluster: some nodes did not stop cleanly (see above)" >&2
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
  [[ -f "$dir/node-$i/node.properties" ]] || die "no node $i"
  ensure_node "$i" "$cp"
  await_all
}

# Kills node I's server with SIGKILL, as a crash would, and waits until it is gone.
kill_node() {
  [[ -f "$state" ]] || die "no namespace cluster in $dir"
  [[ -f "$dir/node-$link_node/node.properties" ]] || die "no node $link_node"
  local ns="sss$tag-$link_node" pids
  pids="$(ip netns pids "$ns" 2>/dev/null || true)"
  [[ -n "$pids" ]] || die "node $link_node: no process runs on its host"
  kill -9 $pids 2>/dev/null || true # one that ended meanwhile is no failure
  for ((t = 0; t < 100; t++)); do
    [[ -z "$(ip netns pids "$ns" 2>/dev/null || true)" ]] && { echo "node $link_node: killed"; return; }
    sleep 0.1
  done
  die "node $link_node: its processes did not end after kill -9"
}

exec_on() {
  [[ -f "$state" ]] || die "no namespace cluster in $dir"
  [[ -f "$dir/node-$link_node/node.properties" ]] || die "no node $link_node"
  [[ ${#exec_cmd[@]} -gt 0 ]] || usage
  exec ip netns exec "sss$tag-$link_node" "${exec_cmd[@]}"
}

case "$cmd" in
  up) up ;;
  down) down ;;
  link) link ;;
  restart) restart ;;
  kill) kill_node ;;
  exec) exec_on ;;
  *) usage ;;
esac
