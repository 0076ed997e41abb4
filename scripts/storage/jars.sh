#!/usr/bin/env bash
# Resolve the JVM jars that jvm/pom.xml declares from Maven Central into the git-ignored .jars/:
#   jars.sh spark   .jars/spark/  S3A for the Spark session (hadoop-aws, the AWS SDK bundle)
#   jars.sh hdfs    .jars/hdfs/   the loopback HDFS daemons' classpath
#   jars.sh formats .jars/formats/ Delta Lake and Iceberg for the Spark session
#   jars.sh metastore .jars/metastore/ Hive's metastore schema scripts (the loopback cluster's)
# Idempotent: a profile is resolved again only when jvm/pom.xml changed.  Maven itself comes from
# Debian's packages when missing.
set -euo pipefail
cd "$(dirname "$0")/../.."
source scripts/storage/settings.sh

if ! command -v mvn >/dev/null 2>&1; then
  echo "jars: maven is missing: installing Debian's maven" >&2
  sudo=""; [ "$(id -u)" = 0 ] || sudo=sudo
  $sudo apt-get update -qq
  $sudo env DEBIAN_FRONTEND=noninteractive apt-get install -y -qq maven >/dev/null
fi
for profile in "$@"; do
  out="$JARS_DIR/$profile"
  stamp="$out/.resolved"
  if [ -f "$stamp" ] && [ "$stamp" -nt jvm/pom.xml ]; then
    continue
  fi
  echo "jars: resolving the '$profile' jars of jvm/pom.xml into $out" >&2
  rm -rf "$out"
  mkdir -p "$out"
  mvn -q -B -f jvm/pom.xml -P "$profile" dependency:copy-dependencies \
    -DoutputDirectory="$out" -DincludeScope=runtime >"$JARS_DIR/mvn-$profile.log" 2>&1 \
    || { tail -n 30 "$JARS_DIR/mvn-$profile.log" >&2; exit 1; }
  touch "$stamp"
done
