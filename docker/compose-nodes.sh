#!/usr/bin/env bash
# Prints a compose file for an N-node SSS cluster (8 partitions per node) and its client:
#   docker/compose-nodes.sh 5 > docker/docker-compose.5.yml
#   docker compose -f docker/docker-compose.5.yml up --build -d
set -euo pipefail
n="${1:?usage: compose-nodes.sh N}"
[[ "$n" =~ ^[1-9][0-9]*$ ]] || { echo "N must be a positive number" >&2; exit 2; }
nodes=""
for ((i = 0; i < n; i++)); do nodes+="${nodes:+,}sss-node-$i:7070"; done
cat <<YAML
x-sss-env: &sss-env
  SSS_NODES: $nodes
  SSS_PARTITIONS: "$((8 * n))"
  SSS_REPLICATION: "$(( n >= 2 ? 2 : 1 ))"
  SSS_SECRET_FILE: /run/secrets/sss_secret
services:
YAML
for ((i = 0; i < n; i++)); do
cat <<YAML
  sss-node-$i:
    image: sss:latest
    build: {context: .., dockerfile: docker/Dockerfile}
    hostname: sss-node-$i
    secrets: [sss_secret]
    restart: unless-stopped
    environment:
      <<: *sss-env
      SSS_NODE_ID: "$i"
    volumes: [sss-data-$i:/var/lib/sss]
YAML
done
cat <<YAML
  client:
    image: sss:latest
    secrets: [sss_secret]
    environment: *sss-env
    profiles: [client]
    command: ["bench", "/opt/sss/params/quick.properties", "--engines", "sss", "--out", "/tmp/bench"]
volumes:
YAML
for ((i = 0; i < n; i++)); do echo "  sss-data-$i:"; done
cat <<YAML
secrets:
  sss_secret:
    file: ./secret.txt
YAML
