"""The warehouse's filesystem: what a session needs to reach it, and where its run lock lives.

A warehouse is a local directory, `file:`, `hdfs://` or `s3a://` (`spark.sql.warehouse.dir`).
HDFS needs nothing but its URI (or `HADOOP_CONF_DIR` for an HA nameservice).  S3A needs its jars
and, for a store other than AWS's, an endpoint; these come from the environment, the same for
users, tests and benchmarks (`make s3-up` prints them), and settings given in the profile win:

- `LAKEHOUSE_JARS`: comma-separated jars for `spark.jars` (hadoop-aws and the AWS SDK bundle
  of the Hadoop inside pyspark; `make jars` puts them in `.jars/spark/`);
- `LAKEHOUSE_S3_ENDPOINT`: the store's endpoint; path-style access then, and plain HTTP when the
  endpoint says `http://`.

Credentials are never settings here: S3A's default chain reads `AWS_ACCESS_KEY_ID` and
`AWS_SECRET_ACCESS_KEY` from the environment, or an instance or pod role, so no secret reaches a
profile, a log line or a `target/` artifact.

Object-store writes commit without renaming whole directories where Spark allows it (see
`commit_settings`); docs/deploy.md says what each filesystem guarantees.
"""

from __future__ import annotations

import os
from urllib.parse import urlparse


def scheme(location: str) -> str:
    """`file`, `hdfs`, `s3a`, ... of a warehouse or table location (`file` for a bare path)."""
    return urlparse(location).scheme or "file"


def object_store_settings(params: dict[str, str], environ: dict[str, str] | None = None) -> dict[str, str]:
    """The Spark settings an `s3a://` warehouse needs, from the environment (the profile's win)."""
    env = os.environ if environ is None else environ
    warehouse = params.get("spark.sql.warehouse.dir", "")
    if scheme(warehouse) != "s3a":
        return {}
    settings: dict[str, str] = {}
    jars = env.get("LAKEHOUSE_JARS", "").strip()
    if jars:
        given = params.get("spark.jars", "")
        settings["spark.jars"] = ",".join(j for j in (given, jars) if j)
    # the purge's staging writes commit with S3A's magic committer, which copies no byte
    # (python_hooks/catalog/commit.py sets Spark's protocol around those writes only)
    settings["spark.hadoop.fs.s3a.committer.name"] = "magic"
    settings["spark.hadoop.fs.s3a.committer.magic.enabled"] = "true"
    settings["spark.hadoop.mapreduce.outputcommitter.factory.scheme.s3a"] = (
        "org.apache.hadoop.fs.s3a.commit.S3ACommitterFactory"
    )
    endpoint = env.get("LAKEHOUSE_S3_ENDPOINT", "").strip()
    if endpoint:
        settings["spark.hadoop.fs.s3a.endpoint"] = endpoint
        settings["spark.hadoop.fs.s3a.path.style.access"] = "true"
        settings["spark.hadoop.fs.s3a.connection.ssl.enabled"] = str(endpoint.startswith("https://")).lower()
    return {key: value for key, value in settings.items() if key == "spark.jars" or key not in params}


DELTA_EXTENSION = "io.delta.sql.DeltaSparkSessionExtension"
DELTA_CATALOG = "org.apache.spark.sql.delta.catalog.DeltaCatalog"
ICEBERG_EXTENSION = "org.apache.iceberg.spark.extensions.IcebergSparkSessionExtensions"
ICEBERG_CATALOG_CLASS = "org.apache.iceberg.spark.SparkCatalog"
ICEBERG_CATALOG = "iceberg"  # the name Iceberg's catalog gets beside Delta's spark_catalog
ICEBERG_RUNTIME = "iceberg-spark-runtime-"


def delta_jars(where: str) -> list[str]:
    """The Delta Lake jars `where` names: comma-separated jars, or a directory holding them
    (`make jars` resolves them into `.jars/formats/`).  Raises ValueError naming `where` when it
    holds no delta-spark jar."""
    found: list[str] = []
    for entry in (e.strip() for e in where.split(",") if e.strip()):
        if os.path.isdir(entry):
            found += sorted(
                os.path.join(entry, name)
                for name in os.listdir(entry)
                if name.startswith(("delta-spark_", "delta-storage-", ICEBERG_RUNTIME))
                and name.endswith(".jar")
            )
        else:
            found.append(entry)
    if not any(os.path.basename(j).startswith("delta-spark_") for j in found):
        raise ValueError(
            f"LAKEHOUSE_DELTA_JARS is {where!r}, which names no delta-spark jar: run `make jars`"
            " (it resolves them into .jars/formats/) or unset it to run without Delta Lake."
        )
    return found


def format_settings(params: dict[str, str], environ: dict[str, str] | None = None) -> dict[str, str]:
    """The Spark settings that put Delta Lake, and Apache Iceberg when its runtime jar is there too,
    in the session, when `LAKEHOUSE_DELTA_JARS` names their jars (docs/formats.md): the jars, the
    formats' SQL extensions, Delta's catalog as the session catalog, which keeps every Hive table
    as it was, and Iceberg's as `iceberg` (iceberg_settings).  The profile's own settings win; an
    extension list of the profile gets the formats' appended."""
    env = os.environ if environ is None else environ
    where = env.get("LAKEHOUSE_DELTA_JARS", "").strip()
    if not where:
        return {}
    jars = delta_jars(where)
    settings = {"spark.jars": ",".join(j for j in [params.get("spark.jars", ""), *jars] if j)}
    given = [e.strip() for e in params.get("spark.sql.extensions", "").split(",") if e.strip()]
    extensions = [*given, DELTA_EXTENSION]
    if "spark.sql.catalog.spark_catalog" not in params:
        settings["spark.sql.catalog.spark_catalog"] = DELTA_CATALOG
    if any(os.path.basename(j).startswith(ICEBERG_RUNTIME) for j in jars):
        extensions.append(ICEBERG_EXTENSION)
        settings.update(iceberg_settings(params))
    extensions = list(dict.fromkeys(extensions))
    if extensions != given:
        settings["spark.sql.extensions"] = ",".join(extensions)
    return settings


def iceberg_settings(params: dict[str, str]) -> dict[str, str]:
    """Apache Iceberg's catalog `iceberg`, beside Delta's `spark_catalog`, over the same Hive
    metastore (Iceberg's Hive catalog): an Iceberg table is `iceberg.<database>.<table>`.

    Iceberg's Hive catalog locks a table in the metastore at each commit.  The embedded Derby
    metastore has no lock tables (DataNucleus creates its schema), and only this JVM can open it,
    so on it Iceberg commits without the lock, and creates the metastore's schema when it reaches
    it first.  A shared metastore keeps Iceberg's lock: a schema made by Hive's schematool has the
    lock tables.  The profile's own settings win."""
    prefix = f"spark.sql.catalog.{ICEBERG_CATALOG}"
    wanted = {prefix: ICEBERG_CATALOG_CLASS, f"{prefix}.type": "hive"}
    if embedded_derby(params):
        wanted.update(
            {
                f"{prefix}.hadoop.iceberg.engine.hive.lock-enabled": "false",
                "spark.hadoop.hive.metastore.schema.verification": "false",
                "spark.hadoop.datanucleus.schema.autoCreateAll": "true",
            }
        )
    return {k: v for k, v in wanted.items() if k not in params}


def embedded_derby(params: dict[str, str]) -> bool:
    """Whether the session's metastore is an embedded Derby database (`jdbc:derby:<path>`, not a
    Derby network server's `jdbc:derby://`), with no metastore service named."""
    url = (params.get("spark.hadoop.javax.jdo.option.ConnectionURL") or "").strip()
    served = (params.get("spark.hadoop.hive.metastore.uris") or "").strip()
    return url.startswith("jdbc:derby:") and not url.startswith("jdbc:derby://") and not served


def metastore_dir(params: dict[str, str]) -> str | None:
    """The embedded Derby metastore's directory of a session's settings, or None (a shared one)."""
    url = params.get("spark.hadoop.javax.jdo.option.ConnectionURL") or ""
    marker = "databaseName="
    if marker not in url:
        return None
    return url.split(marker, 1)[1].split(";", 1)[0]


def lock_directory(warehouse: str, metastore_dir: str | None) -> str | None:
    """The local directory that holds the run lock of an embedded-metastore session.

    The warehouse directory when it is on the local disk; otherwise (HDFS, S3) the directory of
    the embedded Derby metastore, which is the catalog every run of this warehouse shares and
    which only one JVM may open at a time.  None when neither is local.
    """
    for candidate in (warehouse, metastore_dir):
        if candidate and scheme(candidate) == "file":
            parsed = urlparse(candidate)
            path = parsed.path if parsed.scheme == "file" else candidate
            if candidate is metastore_dir:
                path = os.path.dirname(os.path.abspath(path))
            return os.path.abspath(path)
    return None
