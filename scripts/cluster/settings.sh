# The cluster's settings, shared by up.sh, down.sh and the Makefile (every one can be overridden
# from the environment).  Sourced, not run.
CLUSTER_DIR=${CLUSTER_DIR:-$PWD/.cluster}
PG_PORT=${CLUSTER_PG_PORT:-5433}
METASTORE_PORT=${CLUSTER_METASTORE_PORT:-9083}
MASTER_PORT=${CLUSTER_MASTER_PORT:-7077}
MASTER_UI_PORT=${CLUSTER_MASTER_UI_PORT:-8080}   # worker i's UI is MASTER_UI_PORT + i
CLUSTER_WORKERS=${CLUSTER_WORKERS:-2}
WORKER_CORES=${CLUSTER_WORKER_CORES:-2}   # executor slots, not CPUs: a run, a reader and a test session each get one
WORKER_MEMORY=${CLUSTER_WORKER_MEMORY:-3g}
WAREHOUSE_PATH="$CLUSTER_DIR/warehouse"
WAREHOUSE_URI="file:$WAREHOUSE_PATH"
# CLUSTER_WAREHOUSE_FS=hdfs: the warehouse on an HDFS of the cluster's own (a NameNode and a
# DataNode, scripts/storage/hdfs.sh, state in $CLUSTER_DIR/hdfs), as a multi-host cluster keeps it:
# the metastore, the drivers and the executors then share nothing but the network
CLUSTER_WAREHOUSE_FS=${CLUSTER_WAREHOUSE_FS:-file}
case "$CLUSTER_WAREHOUSE_FS" in
  file | hdfs | s3a) ;;
  *) echo "cluster: CLUSTER_WAREHOUSE_FS='$CLUSTER_WAREHOUSE_FS' is not file, hdfs or s3a" >&2; exit 2 ;;
esac
CLUSTER_HDFS_PORT=${CLUSTER_HDFS_PORT:-9830}   # the NameNode's; its HTTP and the DataNode's follow it
CLUSTER_HDFS_HTTP_PORT=$((CLUSTER_HDFS_PORT + 50))   # the NameNode's web server (WebHDFS)
if [ "$CLUSTER_WAREHOUSE_FS" = hdfs ]; then
  WAREHOUSE_URI="hdfs://127.0.0.1:$CLUSTER_HDFS_PORT/cluster/warehouse"
fi
cluster_hdfs() {  # up|down ... : the cluster's HDFS, on its own ports and directory
  HDFS_DIR="$CLUSTER_DIR/hdfs" HDFS_NAMENODE_PORT=$CLUSTER_HDFS_PORT \
    HDFS_NAMENODE_HTTP_PORT=$CLUSTER_HDFS_HTTP_PORT HDFS_DATANODE_PORT=$((CLUSTER_HDFS_PORT + 56)) \
    HDFS_DATANODE_HTTP_PORT=$((CLUSTER_HDFS_PORT + 54)) HDFS_DATANODE_IPC_PORT=$((CLUSTER_HDFS_PORT + 57)) \
    HDFS_WAREHOUSE=/cluster/warehouse scripts/storage/hdfs.sh "$@"
}
# CLUSTER_WAREHOUSE_FS=s3a: the warehouse in a bucket of an object store of the cluster's own
# (moto's server, scripts/storage/s3.sh, on its own port, state in $CLUSTER_DIR/s3), which the
# metastore, the drivers and the executors all reach through S3A, as a cloud cluster does
CLUSTER_S3_PORT=${CLUSTER_S3_PORT:-7170}
CLUSTER_S3_BUCKET=${CLUSTER_S3_BUCKET:-cluster}
if [ "$CLUSTER_WAREHOUSE_FS" = s3a ]; then
  WAREHOUSE_URI="s3a://$CLUSTER_S3_BUCKET/warehouse"
fi
cluster_s3() {  # up|down|env ... : the cluster's object store, on its own port and directory
  S3_DIR="$CLUSTER_DIR/s3" S3_PORT=$CLUSTER_S3_PORT S3_BUCKET=$CLUSTER_S3_BUCKET S3_PREFIX=warehouse \
    scripts/storage/s3.sh "$@"
}
PG_JDBC_JAR=${PG_JDBC_JAR:-/usr/share/java/postgresql.jar}
PYSPARK_PYTHON=${PYSPARK_PYTHON:-$PWD/.venv/bin/python}
SPARK_HOME=${SPARK_HOME:-$("$PYSPARK_PYTHON" -c 'import os, pyspark; print(os.path.dirname(pyspark.__file__))' 2>/dev/null || true)}

pg_bindir() {
  local bin
  bin=$(ls -d /usr/lib/postgresql/*/bin 2>/dev/null | sort -V | tail -n 1)
  [ -n "$bin" ] && [ -x "$bin/initdb" ] && echo "$bin"
}
