#!/bin/sh
# Writes the cluster and node files from the environment, then runs `sss server` (default) or
# any other sss command against the cluster.
#   SSS_NODES       comma-separated host:port of node 0, 1, ... (required)
#   SSS_NODE_ID     this node's index (servers only)
#   SSS_PARTITIONS  partitions (default 8 per node)
#   SSS_REPLICATION copies of each partition (default 1); each container is a host of its own
#   SSS_SECRET      the cluster secret, or SSS_SECRET_FILE naming a file that holds it
set -eu
: "${SSS_NODES:?set SSS_NODES to host:port,host:port,...}"
if [ -n "${SSS_SECRET_FILE:-}" ]; then SSS_SECRET="$(cat "$SSS_SECRET_FILE")"; fi
: "${SSS_SECRET:?set SSS_SECRET or SSS_SECRET_FILE}"
umask 077
{
  echo "secret=$SSS_SECRET"
  [ -n "${SSS_PARTITIONS:-}" ] && echo "partitions=$SSS_PARTITIONS"
  [ -n "${SSS_REPLICATION:-}" ] && echo "replication=$SSS_REPLICATION"
  i=0
  for n in $(echo "$SSS_NODES" | tr ',' ' '); do echo "node.$i=$n"; i=$((i + 1)); done
} > /etc/sss/cluster.properties
if [ "${1:-server}" = "server" ]; then
  : "${SSS_NODE_ID:?set SSS_NODE_ID for a server}"
  {
    echo "cluster=cluster.properties"
    echo "node.id=$SSS_NODE_ID"
    echo "data.dir=/var/lib/sss/data"
    echo "bind=0.0.0.0"
  } > /etc/sss/node.properties
  SSS_LOG_LEVEL="${SSS_LOG_LEVEL:-INFO}" exec sss server --config /etc/sss/node.properties
fi
exec sss --cluster /etc/sss/cluster.properties "$@"
