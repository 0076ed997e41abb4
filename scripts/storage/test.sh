#!/usr/bin/env bash
# `make test-hdfs` / `make test-s3`: an HDFS or an object store of its own (state in .hdfs-test/ or
# .s3-test/, ports apart from the ones `make hdfs-up` / `make s3-up` use, so a developer's data is
# never touched), the functional suites with their warehouse on it, then stopped and removed
# however the tests end.
#   test.sh hdfs|s3a [pytest arguments...]   (default: every functional suite of issue 29's list)
set -euo pipefail
cd "$(dirname "$0")/../.."
fs=${1:?usage: test.sh hdfs|s3a [pytest arguments]}
shift
case "$fs" in
  hdfs)
    export HDFS_DIR=$PWD/.hdfs-test HDFS_NAMENODE_PORT=9821 HDFS_NAMENODE_HTTP_PORT=9871
    export HDFS_DATANODE_PORT=9876 HDFS_DATANODE_HTTP_PORT=9874 HDFS_DATANODE_IPC_PORT=9877
    service=scripts/storage/hdfs.sh ;;
  s3a)
    export S3_DIR=$PWD/.s3-test S3_PORT=7071
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
started=$SECONDS
eval "$("$service" up)"
export LAKEHOUSE_TEST_FS=$fs LAKEHOUSE_TEST_WAREHOUSE=$SPARK_WAREHOUSE_DIR
unset SPARK_WAREHOUSE_DIR SPARK_METASTORE_DIR
echo "test-$fs: up in $((SECONDS - started))s; the suites with their warehouse under $LAKEHOUSE_TEST_WAREHOUSE" >&2
if [ $# -eq 0 ]; then
  set -- tests/functional/storage tests/functional/purge tests/functional/retention \
    tests/functional/erasure tests/functional/compaction tests/functional/audit \
    -m "not faults and not property" -n "${TEST_WORKERS:-2}" --dist loadfile
fi
.venv/bin/pytest -q --durations=15 "$@"
echo "test-$fs: passed in $((SECONDS - started))s" >&2
