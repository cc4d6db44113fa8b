#!/bin/sh
# Form a Redis Cluster once, on empty nodes; never re-create one.
#
#   NODES="host1:port1 host2:port2 ..." REPLICAS=1 sh cluster-init.sh
#   (REDISCLI_AUTH: the nodes' password, read by redis-cli itself)
#
# - every node empty (no keys) and alone (knows no other node): create the cluster, wait for ok;
# - the cluster is formed and ok: do nothing;
# - anything else (a node that does not answer, or nodes that hold keys or belong to a cluster
#   that is not ok): refuse, exit 1, change nothing. A cluster with data is repaired by hand
#   (redis-cli --cluster check / fix), never re-created: creating would assign its slots anew.
set -eu

: "${NODES:?NODES: the nodes as host:port, separated by spaces}"
REPLICAS="${REPLICAS:-1}"

say() { echo "cluster-init: $*"; }
cli() { hp="$1"; shift; redis-cli -h "${hp%:*}" -p "${hp##*:}" "$@"; }
field() { sed -n "s/^$1:\([^[:space:]]*\).*/\1/p"; }

total=0
fresh=0
busy=""
for hp in $NODES; do
  total=$((total + 1))
  if ! info=$(cli "$hp" cluster info 2>&1) || [ -z "$(printf '%s\n' "$info" | field cluster_known_nodes)" ]; then
    say "refusing: node $hp does not answer CLUSTER INFO (${info:-no reply}); nothing changed" >&2
    exit 1
  fi
  known=$(printf '%s\n' "$info" | field cluster_known_nodes)
  keys=$(cli "$hp" dbsize)
  if [ "$known" = 1 ] && [ "$keys" = 0 ]; then
    fresh=$((fresh + 1))
  else
    busy="$busy $hp(knows $known nodes, $keys keys)"
  fi
done

if [ "$fresh" -eq "$total" ]; then
  addrs=""
  for hp in $NODES; do
    host="${hp%:*}"
    ip=$(getent hosts "$host" | awk 'NR == 1 {print $1}')
    addrs="$addrs ${ip:-$host}:${hp##*:}"
  done
  say "creating a cluster of $total empty nodes:$addrs"
  # shellcheck disable=SC2086  # one argument per node
  redis-cli --cluster create $addrs --cluster-replicas "$REPLICAS" --cluster-yes
  i=0
  first="${NODES%% *}"
  until cli "$first" cluster info | grep -q '^cluster_state:ok'; do
    i=$((i + 1))
    [ "$i" -lt 60 ] || { say "cluster not ok 60 s after creating it" >&2; exit 1; }
    sleep 1
  done
  say "cluster formed"
  exit 0
fi

for hp in $NODES; do
  if [ "$(cli "$hp" cluster info | field cluster_state)" != ok ]; then
    say "refusing: the cluster is not ok at $hp and nodes hold data or know each other:$busy;" \
        "repair it by hand (redis-cli --cluster check / fix), never by re-creating it; nothing changed" >&2
    exit 1
  fi
done
say "cluster already formed and ok on all $total nodes; nothing to do"
