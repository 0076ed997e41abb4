# The loopback storage's settings, shared by hdfs.sh, s3.sh and the Makefile; each can be
# overridden from the environment (a test run starts its own on other ports and directories).
# Sourced, not run.
JARS_DIR=${LAKEHOUSE_JARS_DIR:-$PWD/.jars}

# HDFS: one NameNode and one DataNode, from Hadoop 3.3.4's own jars (jvm/pom.xml, profile hdfs)
HDFS_DIR=${HDFS_DIR:-$PWD/.hdfs}
HDFS_NAMENODE_PORT=${HDFS_NAMENODE_PORT:-9820}
HDFS_NAMENODE_HTTP_PORT=${HDFS_NAMENODE_HTTP_PORT:-9870}
HDFS_DATANODE_PORT=${HDFS_DATANODE_PORT:-9866}
HDFS_DATANODE_HTTP_PORT=${HDFS_DATANODE_HTTP_PORT:-9864}
HDFS_DATANODE_IPC_PORT=${HDFS_DATANODE_IPC_PORT:-9867}
HDFS_URI="hdfs://127.0.0.1:$HDFS_NAMENODE_PORT"
HDFS_WAREHOUSE=${HDFS_WAREHOUSE:-/lakehouse/warehouse}

# S3: moto's server (PyPI, in the venv), objects in its memory
S3_DIR=${S3_DIR:-$PWD/.s3}
S3_PORT=${S3_PORT:-7070}
S3_BUCKET=${S3_BUCKET:-lakehouse}
S3_PREFIX=${S3_PREFIX:-warehouse}
S3_ENDPOINT="http://127.0.0.1:$S3_PORT"

storage_alive() {  # dir name
  [ -f "$1/run/$2.pid" ] && kill -0 "$(cat "$1/run/$2.pid")" 2>/dev/null
}

storage_start() {  # dir name command... : detached, its own session, a pid file and a log
  local dir=$1 name=$2; shift 2
  mkdir -p "$dir/run" "$dir/logs"
  setsid nohup "$@" >"$dir/logs/$name.log" 2>&1 </dev/null &
  echo $! >"$dir/run/$name.pid"
}

storage_stop() {  # dir name
  local file="$1/run/$2.pid" pid
  [ -f "$file" ] || return 0
  pid=$(cat "$file")
  if kill -0 "$pid" 2>/dev/null; then
    echo "stopping $2 (pid $pid)" >&2
    kill -TERM "$pid" 2>/dev/null || true
    for _ in $(seq 1 40); do kill -0 "$pid" 2>/dev/null || break; sleep 0.25; done
    kill -0 "$pid" 2>/dev/null && kill -KILL "$pid" 2>/dev/null || true
  fi
  rm -f "$file"
}

storage_wait_port() {  # dir name port seconds
  local deadline=$((SECONDS + $4))
  while ! (exec 3<>"/dev/tcp/127.0.0.1/$3") 2>/dev/null; do
    if ! storage_alive "$1" "$2"; then
      echo "$2 died while starting; its log:" >&2
      tail -n 40 "$1/logs/$2.log" >&2 || true
      return 1
    fi
    if [ $SECONDS -ge $deadline ]; then
      echo "$2 did not listen on 127.0.0.1:$3 within $4s; its log:" >&2
      tail -n 40 "$1/logs/$2.log" >&2 || true
      return 1
    fi
    sleep 0.5
  done
}

storage_left() {  # dir: fail when a process naming it still runs
  local left
  left=$(pgrep -f -- "$1/" || true)
  left=$(echo "$left" | grep -v -x -e "$$" -e '' || true)
  if [ -n "$left" ]; then
    echo "still running after stop:" >&2
    ps -o pid,args -p $(echo "$left" | tr '\n' ' ') >&2 || true
    return 1
  fi
}
