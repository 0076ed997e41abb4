#!/usr/bin/env bash
# Start a real, loopback-only cluster on this machine from the pinned dependencies:
#   PostgreSQL (the metastore's database), the Hive metastore service (thrift), a Spark standalone
#   master and $CLUSTER_WORKERS workers, and a warehouse directory all of them share (standing in
#   for HDFS/S3).  Idempotent: what already runs is left alone.  State lives under .cluster/;
#   `scripts/cluster/down.sh` stops everything this starts.
set -euo pipefail
cd "$(dirname "$0")/../.."
source scripts/cluster/settings.sh

log() { echo "cluster-up: $*"; }

# ---- what is missing gets installed ------------------------------------------------------------
apt_install() {
  local sudo=""
  [ "$(id -u)" = 0 ] || sudo=sudo
  log "installing Debian's $*"
  $sudo apt-get update -qq
  $sudo env DEBIAN_FRONTEND=noninteractive apt-get install -y -qq "$@" >/dev/null
}
missing=()
pg_bindir >/dev/null 2>&1 || missing+=(postgresql postgresql-contrib)
[ -f "$PG_JDBC_JAR" ] || missing+=(libpostgresql-jdbc-java)
command -v javac >/dev/null 2>&1 || missing+=(openjdk-17-jdk-headless)
[ ${#missing[@]} -eq 0 ] || apt_install "${missing[@]}"
[ -x "$SPARK_HOME/bin/spark-class" ] || { echo "cluster-up: $SPARK_HOME/bin/spark-class is missing: run 'make setup' first" >&2; exit 1; }

mkdir -p "$CLUSTER_DIR"/{logs,run,conf,work} "$WAREHOUSE_PATH"
# the metastore's tables point into one warehouse: a cluster made on one filesystem is not
# started again on another (its metastore and daemons would keep the first's settings)
if [ -f "$CLUSTER_DIR/warehouse-fs" ] && [ "$(cat "$CLUSTER_DIR/warehouse-fs")" != "$CLUSTER_WAREHOUSE_FS" ]; then
  echo "cluster-up: $CLUSTER_DIR was made with CLUSTER_WAREHOUSE_FS=$(cat "$CLUSTER_DIR/warehouse-fs")," \
    "not $CLUSTER_WAREHOUSE_FS: start it with that, or remove it first (scripts/cluster/down.sh --purge)" >&2
  exit 1
fi
echo "$CLUSTER_WAREHOUSE_FS" >"$CLUSTER_DIR/warehouse-fs"

# ---- helpers -----------------------------------------------------------------------------------
alive() { [ -f "$CLUSTER_DIR/run/$1.pid" ] && kill -0 "$(cat "$CLUSTER_DIR/run/$1.pid")" 2>/dev/null; }

wait_port() {  # name port seconds [pid-name]
  local name=$1 port=$2 timeout=$3 deadline=$((SECONDS + $3))
  while ! (exec 3<>"/dev/tcp/127.0.0.1/$port") 2>/dev/null; do
    if [ -n "${4:-}" ] && ! alive "$4"; then
      echo "cluster-up: $name died while starting; its log:" >&2
      tail -n 40 "$CLUSTER_DIR/logs/$4.log" >&2 || true
      exit 1
    fi
    if [ $SECONDS -ge $deadline ]; then
      echo "cluster-up: $name did not listen on 127.0.0.1:$port within ${timeout}s" >&2
      tail -n 40 "$CLUSTER_DIR/logs/${4:-$name}.log" >&2 || true
      exit 1
    fi
    sleep 0.5
  done
}

start_daemon() {  # name command... : detached, its own session, pid file, log
  local name=$1; shift
  setsid nohup "$@" >"$CLUSTER_DIR/logs/$name.log" 2>&1 </dev/null &
  echo $! >"$CLUSTER_DIR/run/$name.pid"
}

# ---- PostgreSQL: its own data dir, 127.0.0.1:$PG_PORT, run as the postgres user ------------------
PGBIN=$(pg_bindir)
as_pg() { if [ "$(id -u)" = 0 ]; then runuser -u postgres -- "$@"; else "$@"; fi; }
PGDATA="$CLUSTER_DIR/pgdata"
metastore_kept=no   # a metastore from an earlier start, whose tables name the warehouse's files
[ -f "$PGDATA/PG_VERSION" ] && metastore_kept=yes
if [ ! -f "$PGDATA/PG_VERSION" ]; then
  log "initdb $PGDATA"
  mkdir -p "$PGDATA" "$CLUSTER_DIR/pgsock"
  [ "$(id -u)" = 0 ] && chown postgres: "$PGDATA" "$CLUSTER_DIR/pgsock"
  chmod 700 "$PGDATA"
  as_pg "$PGBIN/initdb" -D "$PGDATA" -A trust -U postgres -E UTF8 >"$CLUSTER_DIR/logs/initdb.log"
  cat >>"$PGDATA/postgresql.conf" <<EOF
listen_addresses = '127.0.0.1'
port = $PG_PORT
unix_socket_directories = '$CLUSTER_DIR/pgsock'
shared_preload_libraries = 'pg_stat_statements'
pg_stat_statements.track = all
shared_buffers = 64MB
max_connections = 60
EOF
fi
if as_pg "$PGBIN/pg_ctl" -D "$PGDATA" status >/dev/null 2>&1; then
  log "PostgreSQL already runs"
else
  log "starting PostgreSQL on 127.0.0.1:$PG_PORT"
  as_pg "$PGBIN/pg_ctl" -D "$PGDATA" -l "$PGDATA/postgres.log" -w -t 60 start >/dev/null
fi
psql_pg() { as_pg "$PGBIN/psql" -h 127.0.0.1 -p "$PG_PORT" -U postgres -v ON_ERROR_STOP=1 -qAt "$@"; }
if [ "$(psql_pg -d postgres -c "select count(*) from pg_roles where rolname = 'hive'")" = 0 ]; then
  psql_pg -d postgres -c "create role hive login password 'hive'"
  psql_pg -d postgres -c "create database metastore owner hive"
  psql_pg -d metastore -c "create extension if not exists pg_stat_statements"
fi

# ---- the warehouse's HDFS (CLUSTER_WAREHOUSE_FS=hdfs) -----------------------------------------------
if [ "$CLUSTER_WAREHOUSE_FS" = hdfs ]; then
  log "starting the warehouse's HDFS on hdfs://127.0.0.1:$CLUSTER_HDFS_PORT"
  cluster_hdfs up >/dev/null
fi

# ---- the warehouse's object store (CLUSTER_WAREHOUSE_FS=s3a) ------------------------------------
# S3A's jars, endpoint and credentials reach the metastore (its classpath, core-site.xml in the
# conf directory, the environment), the workers (their executors inherit the environment, as a
# cloud cluster's hosts get an instance role; core-site.xml is on their classpath too) and the
# drivers (.cluster/env, mode 600: it then holds the credentials)
s3a_classpath=""
if [ "$CLUSTER_WAREHOUSE_FS" = s3a ]; then
  # moto keeps its objects in memory: a store started again is empty, while the metastore (in
  # PostgreSQL) still names tables in it
  if [ $metastore_kept = yes ] && ! (exec 3<>"/dev/tcp/127.0.0.1/$CLUSTER_S3_PORT") 2>/dev/null; then
    log "warning: the object store starts empty; the metastore's tables in s3a://$CLUSTER_S3_BUCKET have" \
      "lost their files (scripts/cluster/down.sh --purge starts afresh)"
  fi
  log "starting the warehouse's object store on 127.0.0.1:$CLUSTER_S3_PORT"
  s3_exports=$(cluster_s3 up)   # the export lines it prints; its own line: a failure stops here
  eval "$s3_exports"
  [ -n "${LAKEHOUSE_JARS:-}" ] || { echo "cluster-up: no S3A jars: run 'make jars'" >&2; exit 1; }
  s3a_classpath=":${LAKEHOUSE_JARS//,/:}"
  cat >"$CLUSTER_DIR/conf/core-site.xml" <<EOF
<?xml version="1.0"?>
<!-- Generated by scripts/cluster/up.sh (CLUSTER_WAREHOUSE_FS=s3a): the cluster's object store. -->
<configuration>
  <property><name>fs.s3a.endpoint</name><value>$LAKEHOUSE_S3_ENDPOINT</value></property>
  <property><name>fs.s3a.path.style.access</name><value>true</value></property>
  <property><name>fs.s3a.connection.ssl.enabled</name><value>false</value></property>
</configuration>
EOF
else
  rm -f "$CLUSTER_DIR/conf/core-site.xml"
fi

# ---- the Hive metastore service, bound to 127.0.0.1:$METASTORE_PORT ------------------------------
sed -e "s|@PG_PORT@|$PG_PORT|" -e "s|@WAREHOUSE@|$WAREHOUSE_URI|" -e "s|@METASTORE_PORT@|$METASTORE_PORT|" \
  scripts/cluster/hive-site.xml.template >"$CLUSTER_DIR/conf/hive-site.xml"
# Its database's schema is made as a production metastore's is: by Hive's schematool (pyspark's
# Hive), from Hive's own scripts (Maven: jvm/pom.xml, profile metastore), the oldest full schema
# of the distribution then its upgrades to pyspark's version.  It holds the lock tables that
# Iceberg's Hive catalog commits under (docs/formats.md), which DataNucleus's would not.
schematool() {
  HIVE_HOME="$CLUSTER_DIR/hive-home" java -cp "$CLUSTER_DIR/conf:$SPARK_HOME/jars/*:$PG_JDBC_JAR" \
    org.apache.hive.beeline.HiveSchemaTool -dbType postgres "$@" >>"$CLUSTER_DIR/logs/schematool.log" 2>&1 \
    || { echo "cluster-up: Hive's schematool $* failed; its log:" >&2; tail -n 30 "$CLUSTER_DIR/logs/schematool.log" >&2; exit 1; }
}
metastore_tables=$(psql_pg -d metastore -c "select string_agg(table_name, ',') from information_schema.tables
  where table_schema = 'public' and table_name in ('VERSION', 'DBS', 'hive_locks')")
if [ -z "$metastore_tables" ]; then
  hive_jar=$(basename "$(ls "$SPARK_HOME"/jars/hive-metastore-*.jar)")   # hive-metastore-2.3.9.jar
  hive_schema=$(echo "$hive_jar" | sed -E 's/^hive-metastore-([0-9]+)\.([0-9]+)\..*/\1.\2.0/')
  scripts/storage/jars.sh metastore
  rm -rf "$CLUSTER_DIR/hive-home"
  mkdir -p "$CLUSTER_DIR/hive-home"
  tar -xzf "${LAKEHOUSE_JARS_DIR:-$PWD/.jars}"/metastore/hive-standalone-metastore-*-bin.tar.gz -C "$CLUSTER_DIR/hive-home" \
    --strip-components=1 --wildcards '*/scripts/metastore/upgrade/postgres/*'
  upgrades="$CLUSTER_DIR/hive-home/scripts/metastore/upgrade/postgres"
  # the upgrades stop at pyspark's Hive: the distribution's list goes on to its own version
  awk -v last="-to-$hive_schema" '{ print } index($0, last) == length($0) - length(last) + 1 { exit }' \
    "$upgrades/upgrade.order.postgres" >"$upgrades/upgrade.order.postgres.new"
  mv "$upgrades/upgrade.order.postgres.new" "$upgrades/upgrade.order.postgres"
  oldest=$(ls "$upgrades" | sed -nE 's/^hive-schema-([0-9.]+)\.postgres\.sql$/\1/p' | sort -V | head -n 1)
  log "making the metastore's schema with Hive's schematool ($oldest, upgraded to $hive_schema)"
  schematool -initSchemaTo "$oldest"
  schematool -upgradeSchemaFrom "$oldest"
elif ! grep -q hive_locks <<<"$metastore_tables"; then
  echo "cluster-up: the metastore database in $PGDATA was made by an earlier cluster-up without Hive's" \
    "schematool (no lock tables for Iceberg's commits): start afresh with scripts/cluster/down.sh --purge" >&2
  exit 1
fi
classes="$CLUSTER_DIR/classes"
for class in LoopbackMetaStore SwapEventLog; do
  if [ ! -f "$classes/$class.class" ] || [ "scripts/cluster/$class.java" -nt "$classes/$class.class" ]; then
    mkdir -p "$classes"
    javac -nowarn -cp "$SPARK_HOME/jars/*" -d "$classes" "scripts/cluster/$class.java"
  fi
done
if alive metastore; then
  log "the metastore already runs"
else
  log "starting the Hive metastore on thrift://127.0.0.1:$METASTORE_PORT"
  start_daemon metastore java -Xmx768m \
    -Dlog4j2.configurationFile="file:$PWD/scripts/cluster/metastore-log4j2.properties" \
    -Dcluster.log.dir="$CLUSTER_DIR/logs" \
    -cp "$CLUSTER_DIR/conf:$classes:$SPARK_HOME/jars/*:$PG_JDBC_JAR$s3a_classpath" \
    LoopbackMetaStore 127.0.0.1 "$METASTORE_PORT"
fi
wait_port metastore "$METASTORE_PORT" 180 metastore

# ---- Spark standalone: a master and the workers ------------------------------------------------
export SPARK_LOCAL_IP=127.0.0.1 SPARK_DAEMON_MEMORY=512m SPARK_LOG_DIR="$CLUSTER_DIR/logs"
export PYSPARK_PYTHON SPARK_HOME
export SPARK_CONF_DIR="$CLUSTER_DIR/conf"   # hive-site.xml reaches executors' Hive serdes too
if alive master; then
  log "the Spark master already runs"
else
  log "starting the Spark master on spark://127.0.0.1:$MASTER_PORT"
  start_daemon master "$SPARK_HOME/bin/spark-class" org.apache.spark.deploy.master.Master \
    --host 127.0.0.1 --port "$MASTER_PORT" --webui-port "$MASTER_UI_PORT"
fi
wait_port "Spark master" "$MASTER_PORT" 90 master
for i in $(seq 1 "$CLUSTER_WORKERS"); do
  if alive "worker$i"; then
    log "worker $i already runs"
    continue
  fi
  log "starting worker $i ($WORKER_CORES core, $WORKER_MEMORY)"
  mkdir -p "$CLUSTER_DIR/work/worker$i"
  start_daemon "worker$i" "$SPARK_HOME/bin/spark-class" org.apache.spark.deploy.worker.Worker \
    --host 127.0.0.1 --cores "$WORKER_CORES" --memory "$WORKER_MEMORY" \
    --webui-port $((MASTER_UI_PORT + i)) --work-dir "$CLUSTER_DIR/work/worker$i" \
    "spark://127.0.0.1:$MASTER_PORT"
  wait_port "worker $i UI" $((MASTER_UI_PORT + i)) 90 "worker$i"
done
# the workers must have registered with the master before a driver asks for executors
deadline=$((SECONDS + 60))
until [ "$(python3 - "$MASTER_UI_PORT" <<'EOF' 2>/dev/null
import json, sys, urllib.request
state = json.load(urllib.request.urlopen(f"http://127.0.0.1:{sys.argv[1]}/json/", timeout=5))
print(sum(1 for w in state["workers"] if w["state"] == "ALIVE"))
EOF
)" = "$CLUSTER_WORKERS" ]; do
  [ $SECONDS -lt $deadline ] || { echo "cluster-up: the workers did not register with the master" >&2; exit 1; }
  sleep 1
done

# ---- what a driver needs --------------------------------------------------------------------------
rm -f "$CLUSTER_DIR/env"
(umask 077; : >"$CLUSTER_DIR/env")   # it holds the object store's secret with s3a
cat >>"$CLUSTER_DIR/env" <<EOF
# source this file to use the cluster: DBT_TARGET=cluster reads these
export DBT_TARGET=cluster
export HIVE_METASTORE_URIS=thrift://127.0.0.1:$METASTORE_PORT
export SPARK_MASTER_URL=spark://127.0.0.1:$MASTER_PORT
export SPARK_WAREHOUSE_DIR=$WAREHOUSE_URI
export SPARK_LOCAL_IP=127.0.0.1
export PYSPARK_PYTHON=$PYSPARK_PYTHON
EOF
if [ "$CLUSTER_WAREHOUSE_FS" = s3a ]; then
  grep -v '^export SPARK_WAREHOUSE_DIR=' <<<"$s3_exports" >>"$CLUSTER_DIR/env"
fi
cat <<EOF
cluster-up: ready
  Hive metastore      thrift://127.0.0.1:$METASTORE_PORT   (PostgreSQL 127.0.0.1:$PG_PORT, database metastore)
  Spark master        spark://127.0.0.1:$MASTER_PORT   UI http://127.0.0.1:$MASTER_UI_PORT
  Spark workers       $CLUSTER_WORKERS x ($WORKER_CORES core, $WORKER_MEMORY)   UI http://127.0.0.1:$((MASTER_UI_PORT + 1))..$((MASTER_UI_PORT + CLUSTER_WORKERS))
  shared warehouse    $WAREHOUSE_URI
  use it:             source $CLUSTER_DIR/env && dbt build      (or: make demo DBT_TARGET=cluster)
EOF
