#!/usr/bin/env bash
# An S3-compatible object store on loopback: moto's server (Apache-2.0, from PyPI, pinned in
# constraints.txt) on 127.0.0.1:$S3_PORT, reached by Spark through S3A.  Objects live in the
# server's memory: a key space with no directories, paged listing, multipart upload, server-side
# copy and multi-object delete, strongly consistent, as S3 is.  docs/deploy.md says why this store.
#   s3.sh up     start it (credentials made on first start, kept in $S3_DIR mode 600), make the
#                bucket, print the export lines the profiles read
#   s3.sh down   stop it (its objects go with it); fail if anything of $S3_DIR still runs
#   s3.sh env    print the export lines only
set -euo pipefail
cd "$(dirname "$0")/../.."
source scripts/storage/settings.sh

SERVER="$PWD/.venv/bin/moto_server"

credentials() {
  local file="$S3_DIR/credentials"
  if [ ! -f "$file" ]; then
    mkdir -p "$S3_DIR"
    (umask 077; python3 - >"$file" <<'PY'
import secrets
print("access=lakehouse" + secrets.token_hex(6))
print("secret=" + secrets.token_urlsafe(30))
PY
    )
  fi
  access=$(sed -n 's/^access=//p' "$file")
  secret=$(sed -n 's/^secret=//p' "$file")
}

exports() {
  credentials
  cat <<OUT
export SPARK_WAREHOUSE_DIR=s3a://$S3_BUCKET/$S3_PREFIX
export LAKEHOUSE_S3_ENDPOINT=$S3_ENDPOINT
export LAKEHOUSE_JARS=$(ls "$JARS_DIR"/spark/*.jar 2>/dev/null | paste -sd, -)
export AWS_ACCESS_KEY_ID=$access
export AWS_SECRET_ACCESS_KEY=$secret
OUT
}

up() {
  scripts/storage/jars.sh spark
  [ -x "$SERVER" ] || { echo "s3-up: $SERVER is missing: run 'make setup' first" >&2; exit 1; }
  credentials
  mkdir -p "$S3_DIR/run" "$S3_DIR/logs"
  if storage_alive "$S3_DIR" server; then
    echo "s3-up: the object store already runs" >&2
  else
    echo "s3-up: starting the object store on $S3_ENDPOINT" >&2
    # its own directory as the working directory, so that `down` can tell its process apart
    (cd "$S3_DIR" && storage_start "$S3_DIR" server "$SERVER" -H 127.0.0.1 -p "$S3_PORT")
  fi
  storage_wait_port "$S3_DIR" server "$S3_PORT" 60
  # the bucket (PUT of an existing bucket of this owner succeeds, as in us-east-1)
  python3 - "$S3_ENDPOINT/$S3_BUCKET" <<'PY'
import sys, urllib.request
urllib.request.urlopen(urllib.request.Request(sys.argv[1], method="PUT"), timeout=10).read()
PY
  (umask 077; exports >"$S3_DIR/env.tmp") && mv "$S3_DIR/env.tmp" "$S3_DIR/env"   # it holds the secret
  echo "s3-up: ready; a warehouse at s3a://$S3_BUCKET/$S3_PREFIX. Point the profiles at it with:" >&2
  exports
}

down() {
  storage_stop "$S3_DIR" server
  # the server names no directory of its own: what must be gone is whatever listens on its port
  if (exec 3<>"/dev/tcp/127.0.0.1/$S3_PORT") 2>/dev/null; then
    echo "s3-down: something still listens on 127.0.0.1:$S3_PORT" >&2
    exit 1
  fi
  if [ "${1:-}" = "--purge" ]; then
    rm -rf "$S3_DIR"
    echo "s3-down: removed $S3_DIR" >&2
  fi
  echo "s3-down: nothing left running" >&2
}

case "${1:-}" in
  up) up ;;
  down) shift; down "$@" ;;
  env) exports ;;
  *) echo "usage: $0 up|down [--purge]|env" >&2; exit 2 ;;
esac
