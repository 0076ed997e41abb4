#!/usr/bin/env bash
# `make test-storage-smoke` (CI): tests/functional/storage and the purge's commit check against a
# concurrent writer (tests/functional/purge/test_concurrent_writer.py) on a loopback HDFS and on an
# S3-compatible store at once; with STORAGE_SMOKE_KILL=1, also on HDFS a purge killed (SIGKILL) at
# its swaps, checked as every kill case is (docs/safety.md) and finished by the next purge, as CI
# runs it (each on its own ports and directory, started and stopped by test.sh however the tests
# end); each one's output is printed whole when it ends, and the smoke fails if either does.
# Delta Lake and Iceberg (tests/functional/storage/test_formats.py) run on S3 only, where their
# commits differ most from a local disk's (no atomic rename); `make test-hdfs` runs them on HDFS.
set -uo pipefail
cd "$(dirname "$0")/../.."
logs=$(mktemp -d)
trap 'rm -rf "$logs"' EXIT
pids=()
kill_case="tests/faults/test_kill_purge.py::test_kill_purge[hive_parquet-swap]"
for fs in hdfs s3a; do
  extra=()
  [ "$fs" = hdfs ] && extra=(--ignore=tests/functional/storage/test_formats.py)
  [ "$fs" = hdfs ] && [ "${STORAGE_SMOKE_KILL:-0}" = 1 ] && extra+=("$kill_case")
  scripts/storage/test.sh "$fs" tests/functional/storage tests/functional/purge/test_concurrent_writer.py \
    "${extra[@]}" "$@" >"$logs/$fs.log" 2>&1 &
  pids+=($!)
done
status=0
for i in 0 1; do
  fs=$([ $i = 0 ] && echo hdfs || echo s3a)
  if wait "${pids[$i]}"; then result=passed; else result=FAILED; status=1; fi
  echo "==== test-storage-smoke: $fs: $result"
  cat "$logs/$fs.log"
done
exit $status
