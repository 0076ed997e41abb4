#!/usr/bin/env bash
# A real HDFS on loopback: one NameNode and one DataNode (Hadoop 3.3.4, the version inside
# pyspark 3.5.7), data on disk under $HDFS_DIR (.hdfs/, git-ignored).
#   hdfs.sh up     start what is not running, wait for the DataNode, print the export lines
#   hdfs.sh down   stop both; fail if anything of $HDFS_DIR still runs (--purge: remove the data)
#   hdfs.sh env    print the export lines only
set -euo pipefail
cd "$(dirname "$0")/../.."
source scripts/storage/settings.sh

exports() {
  cat <<OUT
export SPARK_WAREHOUSE_DIR=$HDFS_URI$HDFS_WAREHOUSE
OUT
}

# a Hadoop class with the daemons' classpath and this HDFS's conf; on Java 17 the NameNode's REST
# API (WebHDFS: JAXB through Jersey) fails unless java.lang is opened to it
HADOOP_JAVA=(java -Xmx512m --add-opens=java.base/java.lang=ALL-UNNAMED
  -Dhadoop.log.dir="$HDFS_DIR/logs" -Dhadoop.home.dir="$HDFS_DIR"
  -Dlog4j.configuration="file:$HDFS_DIR/conf/log4j.properties" -cp "$HDFS_DIR/conf:$JARS_DIR/hdfs/*")
hadoop_java() { "${HADOOP_JAVA[@]}" "$@"; }

write_conf() {
  mkdir -p "$HDFS_DIR"/{conf,name,data,logs,run}
  # the daemons' web servers look up webapps/<name> on the classpath (a Hadoop distribution ships
  # them beside the jars; the JMX and the status pages need no more than the directory)
  mkdir -p "$HDFS_DIR"/conf/webapps/{hdfs,datanode,static}
  cat >"$HDFS_DIR/conf/core-site.xml" <<XML
<?xml version="1.0"?>
<configuration>
  <property><name>fs.defaultFS</name><value>$HDFS_URI</value></property>
  <property><name>hadoop.tmp.dir</name><value>$HDFS_DIR/tmp</value></property>
</configuration>
XML
  cat >"$HDFS_DIR/conf/hdfs-site.xml" <<XML
<?xml version="1.0"?>
<configuration>
  <property><name>dfs.namenode.name.dir</name><value>file:$HDFS_DIR/name</value></property>
  <property><name>dfs.datanode.data.dir</name><value>file:$HDFS_DIR/data</value></property>
  <property><name>dfs.replication</name><value>1</value></property>
  <property><name>dfs.namenode.rpc-address</name><value>127.0.0.1:$HDFS_NAMENODE_PORT</value></property>
  <property><name>dfs.namenode.http-address</name><value>127.0.0.1:$HDFS_NAMENODE_HTTP_PORT</value></property>
  <property><name>dfs.namenode.secondary.http-address</name><value>127.0.0.1:0</value></property>
  <property><name>dfs.datanode.address</name><value>127.0.0.1:$HDFS_DATANODE_PORT</value></property>
  <property><name>dfs.datanode.http.address</name><value>127.0.0.1:$HDFS_DATANODE_HTTP_PORT</value></property>
  <property><name>dfs.datanode.ipc.address</name><value>127.0.0.1:$HDFS_DATANODE_IPC_PORT</value></property>
  <property><name>dfs.datanode.hostname</name><value>127.0.0.1</value></property>
  <property><name>dfs.namenode.datanode.registration.ip-hostname-check</name><value>false</value></property>
  <property><name>dfs.namenode.safemode.extension</name><value>0</value></property>
  <property><name>dfs.namenode.fs-limits.min-block-size</name><value>1048576</value></property>
  <property><name>dfs.datanode.du.reserved</name><value>0</value></property>
  <property><name>dfs.heartbeat.interval</name><value>1</value></property>
</configuration>
XML
  cat >"$HDFS_DIR/conf/log4j.properties" <<PROPS
log4j.rootLogger=WARN, console
log4j.appender.console=org.apache.log4j.ConsoleAppender
log4j.appender.console.layout=org.apache.log4j.PatternLayout
log4j.appender.console.layout.ConversionPattern=%d{ISO8601} %p %c{2}: %m%n
log4j.logger.org.apache.hadoop.hdfs.server.namenode.NameNode=INFO
log4j.logger.org.apache.hadoop.hdfs.server.datanode.DataNode=INFO
PROPS
}

live_datanodes() {
  python3 - "$HDFS_NAMENODE_HTTP_PORT" <<'PY' 2>/dev/null || echo 0
import json, sys, urllib.request
url = f"http://127.0.0.1:{sys.argv[1]}/jmx?qry=Hadoop:service=NameNode,name=FSNamesystemState"
beans = json.load(urllib.request.urlopen(url, timeout=5))["beans"]
print(beans[0]["NumLiveDataNodes"] if beans else 0)
PY
}

start_daemon() {  # name label class port where: start it unless it runs, then wait for its port
  if storage_alive "$HDFS_DIR" "$1"; then
    echo "hdfs-up: the $2 already runs" >&2
  else
    echo "hdfs-up: starting the $2 $5" >&2
    storage_start "$HDFS_DIR" "$1" "${HADOOP_JAVA[@]}" "$3"
  fi
  storage_wait_port "$HDFS_DIR" "$1" "$4" 120
}

up() {
  scripts/storage/jars.sh hdfs
  write_conf
  if [ ! -f "$HDFS_DIR/name/current/VERSION" ]; then
    echo "hdfs-up: formatting the NameNode in $HDFS_DIR/name" >&2
    hadoop_java org.apache.hadoop.hdfs.server.namenode.NameNode -format -nonInteractive -force \
      >"$HDFS_DIR/logs/format.log" 2>&1 || { tail -n 30 "$HDFS_DIR/logs/format.log" >&2; exit 1; }
  fi
  start_daemon namenode NameNode org.apache.hadoop.hdfs.server.namenode.NameNode "$HDFS_NAMENODE_PORT" \
    "on $HDFS_URI (UI http://127.0.0.1:$HDFS_NAMENODE_HTTP_PORT)"
  start_daemon datanode DataNode org.apache.hadoop.hdfs.server.datanode.DataNode "$HDFS_DATANODE_PORT" \
    "on 127.0.0.1:$HDFS_DATANODE_PORT"
  local deadline=$((SECONDS + 180))
  until [ "$(live_datanodes)" -ge 1 ]; do
    if [ $SECONDS -ge $deadline ]; then
      echo "hdfs-up: no DataNode registered within 180s; the end of its log ($HDFS_DIR/logs/datanode.log):" >&2
      tail -n 25 "$HDFS_DIR/logs/datanode.log" >&2
      exit 1
    fi
    sleep 0.5
  done
  hadoop_java org.apache.hadoop.hdfs.tools.DFSAdmin -safemode wait >>"$HDFS_DIR/logs/shell.log" 2>&1
  hadoop_java org.apache.hadoop.fs.FsShell -mkdir -p "$HDFS_URI$HDFS_WAREHOUSE" >>"$HDFS_DIR/logs/shell.log" 2>&1
  exports >"$HDFS_DIR/env"
  echo "hdfs-up: ready; a warehouse at $HDFS_URI$HDFS_WAREHOUSE. Point the profiles at it with:" >&2
  exports
}

down() {
  storage_stop "$HDFS_DIR" datanode
  storage_stop "$HDFS_DIR" namenode
  storage_left "$HDFS_DIR"
  if [ "${1:-}" = "--purge" ]; then
    rm -rf "$HDFS_DIR"
    echo "hdfs-down: removed $HDFS_DIR" >&2
  fi
  echo "hdfs-down: nothing left running" >&2
}

case "${1:-}" in
  up) up ;;
  down) shift; down "$@" ;;
  env) exports ;;
  *) echo "usage: $0 up|down [--purge]|env" >&2; exit 2 ;;
esac
