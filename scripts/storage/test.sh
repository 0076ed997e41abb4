#!/usr/bin/env bash
# `make test-hdfs` / `make test-s3`: an HDFS or an object store of its own (state in .hdfs-test/ or
# .s3-test/, ports apart from the ones `make hdfs-up` / `make s3-up` use, so a developer's data is
# never touched), the functional suites with their warehouse on it, then stopped and removed
# however the tests end.
#   test.sh hdfs|s3a [pytest arguments...]   (default: every functional suite of issue 29's list)
# Two runs at once (two worktrees) need ports apart: TEST_HDFS_PORTS="nn nn-http dn dn-http dn-ipc"
# or TEST_S3_PORT; a port another process listens on is refused before anything starts.
set -euo pipefail
cd "$(dirname "$0")/../.."
fs=${1:?usage: test.sh hdfs|s3a [pytest arguments]}
shift
case "$fs" in
  hdfs)
    read -r nn nn_http dn dn_http dn_ipc <<<"${TEST_HDFS_PORTS:-9821 9871 9876 9874 9877}"
    export HDFS_DIR=$PWD/.hdfs-test HDFS_NAMENODE_PORT=$nn HDFS_NAMENODE_HTTP_PORT=$nn_http
    export HDFS_DATANODE_PORT=$dn HDFS_DATANODE_HTTP_PORT=$dn_http HDFS_DATANODE_IPC_PORT=$dn_ipc
    ports="$nn $nn_http $dn $dn_http $dn_ipc"
    export LAKEHOUSE_TEST_WEBHDFS=http://127.0.0.1:$nn_http   # the concurrent writer's own client
    service=scripts/storage/hdfs.sh ;;
  s3a)
    export S3_DIR=$PWD/.s3-test S3_PORT=${TEST_S3_PORT:-7071}
    ports=$S3_PORT
    service=scripts/storage/s3.sh ;;
  *) echo "test.sh: unknown filesystem '$fs' (hdfs or s3a)" >&2; exit 2 ;;
esac

stop() {
  status=$?
  "$service" down --purge >&2 || status=1
  exit $status
}
trap stop EXIT
trap 'exit 130' INT TERM

"$service" down --purge >/dev/null 2>&1 || true   # what an interrupted run left
# a port taken by another run would pass for ours (the wait for a listening port would succeed)
# while ours failed to bind: the tests would then use, and the stop pull away, another's store
for port in $ports; do
  if (exec 3<>"/dev/tcp/127.0.0.1/$port") 2>/dev/null; then
    echo "test-$fs: port $port is in use by another process (another test run?); choose other ports" \
      "with TEST_HDFS_PORTS / TEST_S3_PORT" >&2
    exit 1
  fi
done
started=$SECONDS
# (a failed start must stop here: `eval "$(...)"` would go on with nothing exported)
exports=$("$service" up) || { echo "test-$fs: the $fs store did not start (its log above)" >&2; exit 1; }
eval "$exports"
export LAKEHOUSE_TEST_FS=$fs LAKEHOUSE_TEST_WAREHOUSE=$SPARK_WAREHOUSE_DIR
unset SPARK_WAREHOUSE_DIR SPARK_METASTORE_DIR
echo "test-$fs: up in $((SECONDS - started))s; the suites with their warehouse under $LAKEHOUSE_TEST_WAREHOUSE" >&2
if [ $# -eq 0 ]; then
  set -- tests/functional/storage tests/functional/purge tests/functional/retention \
    tests/functional/erasure tests/functional/compaction tests/functional/audit tests/faults \
    -m "not faults and not property" -n "${TEST_WORKERS:-2}" --dist loadfile
fi
.venv/bin/pytest -q --durations=15 "$@"
echo "test-$fs: passed in $((SECONDS - started))s" >&2
