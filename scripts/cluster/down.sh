#!/usr/bin/env bash
# Stop everything scripts/cluster/up.sh started (by its pid files), then verify that nothing is
# left.  The data (PostgreSQL's data dir, the warehouse) stays under .cluster/; `--purge` removes it.
set -euo pipefail
cd "$(dirname "$0")/../.."
source scripts/cluster/settings.sh

stop_pid() {  # name
  local file="$CLUSTER_DIR/run/$1.pid" pid
  [ -f "$file" ] || return 0
  pid=$(cat "$file")
  if kill -0 "$pid" 2>/dev/null; then
    echo "cluster-down: stopping $1 (pid $pid)"
    kill -TERM "$pid" 2>/dev/null || true
    for _ in $(seq 1 40); do kill -0 "$pid" 2>/dev/null || break; sleep 0.25; done
    kill -0 "$pid" 2>/dev/null && { echo "cluster-down: $1 ignored TERM; killing it"; kill -KILL "$pid" 2>/dev/null || true; }
  fi
  rm -f "$file"
}

# workers first (they kill their executors), then the master and the metastore
for file in "$CLUSTER_DIR"/run/worker*.pid; do
  [ -e "$file" ] && stop_pid "$(basename "$file" .pid)"
done
stop_pid master
stop_pid metastore

PGDATA="$CLUSTER_DIR/pgdata"
if [ -f "$PGDATA/postmaster.pid" ]; then
  PGBIN=$(pg_bindir)
  echo "cluster-down: stopping PostgreSQL"
  if [ "$(id -u)" = 0 ]; then
    runuser -u postgres -- "$PGBIN/pg_ctl" -D "$PGDATA" -m fast -w stop >/dev/null || true
  else
    "$PGBIN/pg_ctl" -D "$PGDATA" -m fast -w stop >/dev/null || true
  fi
fi

if [ -d "$CLUSTER_DIR/hdfs/run" ]; then
  cluster_hdfs down
fi
if [ -d "$CLUSTER_DIR/s3/run" ]; then
  cluster_s3 down
fi

# nothing of this cluster may be left: its executors, daemons and PostgreSQL all name $CLUSTER_DIR
left=$(pgrep -f -- "$CLUSTER_DIR" || true)
left=$(echo "$left" | grep -v -x -e "$$" -e '' || true)
if [ -n "$left" ]; then
  echo "cluster-down: still running after stop:" >&2
  ps -o pid,args -p $(echo "$left" | tr '\n' ' ') >&2 || true
  exit 1
fi
if [ "${1:-}" = "--purge" ]; then
  rm -rf "$CLUSTER_DIR"
  echo "cluster-down: removed $CLUSTER_DIR"
fi
echo "cluster-down: nothing left running"
