#!/usr/bin/env bash
# `make test-cluster`: a cluster of its own (state in .cluster-test/, ports apart from the one
# `make cluster-up` starts, so a developer's cluster and its metastore are never touched), the
# purge, retention/restore, compaction and audit suites on it as the `cluster` target, then the
# cluster-only tests (the `cluster` target in profiles.yml, the run lease across drivers, the
# concurrent reader).  The cluster is stopped and its state removed however the tests end.
set -euo pipefail
cd "$(dirname "$0")/../.."
export CLUSTER_DIR=$PWD/.cluster-test
export CLUSTER_PG_PORT=${CLUSTER_TEST_PG_PORT:-5443}
export CLUSTER_METASTORE_PORT=${CLUSTER_TEST_METASTORE_PORT:-9093}
export CLUSTER_MASTER_PORT=${CLUSTER_TEST_MASTER_PORT:-7087}
export CLUSTER_MASTER_UI_PORT=${CLUSTER_TEST_MASTER_UI_PORT:-8090}
export CLUSTER_HDFS_PORT=${CLUSTER_TEST_HDFS_PORT:-9840}
export CLUSTER_S3_PORT=${CLUSTER_TEST_S3_PORT:-7172}

stop() {
  status=$?
  if [ "$status" != 0 ]; then
    # the state is removed below: keep the servers' own errors in the output, for diagnosis
    for log in "$CLUSTER_DIR/logs/metastore.log" "$CLUSTER_DIR/pgdata/postgres.log"; do
      [ -f "$log" ] || continue
      echo "test-cluster: the last errors in $(basename "$log"):"
      grep -E "ERROR|Exception|FATAL" "$log" 2>/dev/null | grep -v "Failed to delete file" | tail -20 | cut -c1-400 || true
    done
  fi
  scripts/cluster/down.sh --purge || status=1
  exit $status
}
trap stop EXIT
trap 'exit 130' INT TERM

scripts/cluster/down.sh --purge >/dev/null 2>&1 || true   # what an interrupted run left
started=$SECONDS
scripts/cluster/up.sh
source "$CLUSTER_DIR/env"
unset DBT_TARGET   # the in-process tests use their own profile; the cluster-only tests set it per process
export LAKEHOUSE_TEST_TARGET=cluster
if [ "${CLUSTER_WAREHOUSE_FS:-file}" != file ]; then   # hdfs or s3a: the tests' warehouses beside the cluster's
  export LAKEHOUSE_TEST_FS=$CLUSTER_WAREHOUSE_FS LAKEHOUSE_TEST_WAREHOUSE=${SPARK_WAREHOUSE_DIR%/warehouse}/tests
fi
if [ "${CLUSTER_WAREHOUSE_FS:-file}" = hdfs ]; then   # the concurrent writer's own client (its REST API)
  webhdfs_port=$(source scripts/cluster/settings.sh && echo "$CLUSTER_HDFS_HTTP_PORT")
  export LAKEHOUSE_TEST_WEBHDFS=http://127.0.0.1:$webhdfs_port
fi
export TEST_WAREHOUSE_ROOT=$CLUSTER_DIR/tests
mkdir -p "$TEST_WAREHOUSE_ROOT"
echo "test-cluster: cluster up in $((SECONDS - started))s; running the suites on it"
# CLUSTER_TESTS: what to run (default: every suite above; `make test-cluster-smoke`, which CI
# runs, passes the cluster-only tests and the purge engine's)
read -r -a suites <<< "${CLUSTER_TESTS:-tests/functional/cluster tests/functional/foundation/test_warehouse_lease.py tests/functional/foundation/test_partition_filter_fallback.py tests/functional/purge tests/functional/retention tests/functional/compaction tests/functional/audit}"
.venv/bin/pytest -q --durations=15 "${suites[@]}"
echo "test-cluster: passed in $((SECONDS - started))s"
