"""The settings an s3a:// warehouse gets from the environment, and where the run lock lives."""

from __future__ import annotations

import pytest
from dbt.adapters.lakehouse import storage

ENV = {"LAKEHOUSE_JARS": "/j/hadoop-aws.jar,/j/bundle.jar", "LAKEHOUSE_S3_ENDPOINT": "http://127.0.0.1:7070"}


def test_an_s3a_warehouse_gets_the_jars_the_endpoint_and_the_magic_committer():
    settings = storage.object_store_settings({"spark.sql.warehouse.dir": "s3a://b/w"}, ENV)
    assert settings["spark.jars"] == "/j/hadoop-aws.jar,/j/bundle.jar"
    assert settings["spark.hadoop.fs.s3a.endpoint"] == "http://127.0.0.1:7070"
    assert settings["spark.hadoop.fs.s3a.path.style.access"] == "true"
    assert settings["spark.hadoop.fs.s3a.connection.ssl.enabled"] == "false"
    assert settings["spark.hadoop.fs.s3a.committer.name"] == "magic"
    # no credential is ever a setting: S3A reads them from the environment
    assert not [k for k in settings if "key" in k.lower() or "secret" in k.lower()]


def test_the_profile_wins_and_its_jars_are_kept():
    params = {
        "spark.sql.warehouse.dir": "s3a://b/w",
        "spark.jars": "/mine.jar",
        "spark.hadoop.fs.s3a.endpoint": "https://s3.eu-west-1.amazonaws.com",
    }
    settings = storage.object_store_settings(params, ENV)
    assert settings["spark.jars"] == "/mine.jar,/j/hadoop-aws.jar,/j/bundle.jar"
    assert "spark.hadoop.fs.s3a.endpoint" not in settings


def test_other_filesystems_get_nothing():
    for warehouse in ("/tmp/w", "file:/tmp/w", "hdfs://nn:8020/w"):
        assert storage.object_store_settings({"spark.sql.warehouse.dir": warehouse}, ENV) == {}


def test_the_lock_is_beside_derby_when_the_warehouse_is_not_local():
    assert storage.lock_directory("/tmp/w", "/tmp/m/metastore_db") == "/tmp/w"
    assert storage.lock_directory("file:/tmp/w", None) == "/tmp/w"
    assert storage.lock_directory("hdfs://nn:8020/w", "/tmp/m/metastore_db") == "/tmp/m"
    assert storage.lock_directory("s3a://b/w", None) is None
    url = {"spark.hadoop.javax.jdo.option.ConnectionURL": "jdbc:derby:;databaseName=/tmp/m/db;create=true"}
    assert storage.metastore_dir(url) == "/tmp/m/db"
    assert storage.metastore_dir({}) is None


def test_a_local_master_does_not_wait_for_locality_and_the_profile_wins():
    """Spark's local backend offers its cores again only when a task starts or ends: a task held
    back for the host of its HDFS block hung its job (make test-hdfs).  One executor has no
    nearer place to run a task, so the embedded session does not wait."""
    from dbt.adapters.lakehouse.connections import session_parameters

    for master in ({}, {"spark.master": "local[2]"}, {"spark.master": "local[*]"}):
        assert session_parameters(master)["spark.locality.wait"] == "0s", master
    assert (
        session_parameters({"spark.master": "local[2]", "spark.locality.wait": "1s"})["spark.locality.wait"]
        == "1s"
    )
    # a cluster's executors live on many hosts: there the wait buys data locality, and it is Spark's
    assert "spark.locality.wait" not in session_parameters({"spark.master": "spark://127.0.0.1:7077"})


def test_delta_comes_in_by_its_jars_and_the_profile_wins(tmp_path):
    for name in ("delta-spark_2.12-3.3.3.jar", "delta-storage-3.3.3.jar", "iceberg-x.jar"):
        (tmp_path / name).write_text("")
    settings = storage.format_settings({"spark.jars": "/mine.jar"}, {"LAKEHOUSE_DELTA_JARS": str(tmp_path)})
    assert settings == {
        "spark.jars": f"/mine.jar,{tmp_path}/delta-spark_2.12-3.3.3.jar,{tmp_path}/delta-storage-3.3.3.jar",
        "spark.sql.extensions": "io.delta.sql.DeltaSparkSessionExtension",
        "spark.sql.catalog.spark_catalog": "org.apache.spark.sql.delta.catalog.DeltaCatalog",
    }
    mine = {"spark.sql.extensions": "my.Ext", "spark.sql.catalog.spark_catalog": "my.Catalog"}
    settings = storage.format_settings(mine, {"LAKEHOUSE_DELTA_JARS": str(tmp_path)})
    assert settings["spark.sql.extensions"] == "my.Ext,io.delta.sql.DeltaSparkSessionExtension"
    assert "spark.sql.catalog.spark_catalog" not in settings
    assert storage.format_settings({}, {}) == {}


def test_iceberg_comes_in_beside_delta_with_its_own_catalog_and_the_lock_only_where_it_can_go(tmp_path):
    """Iceberg's runtime jar beside Delta's: its extension after Delta's, its catalog `iceberg`
    over the Hive metastore; on the embedded Derby metastore (no lock tables, one JVM) it commits
    without the metastore's lock, on a shared one it keeps it."""
    for name in (
        "delta-spark_2.12-3.3.3.jar",
        "delta-storage-3.3.3.jar",
        "iceberg-spark-runtime-3.5_2.12-1.10.0.jar",
    ):
        (tmp_path / name).write_text("")
    derby = {
        "spark.hadoop.javax.jdo.option.ConnectionURL": "jdbc:derby:;databaseName=/w/metastore_db;create=true"
    }
    settings = storage.format_settings(derby, {"LAKEHOUSE_DELTA_JARS": str(tmp_path)})
    assert settings["spark.jars"].endswith("/iceberg-spark-runtime-3.5_2.12-1.10.0.jar")
    assert settings["spark.sql.extensions"] == (
        "io.delta.sql.DeltaSparkSessionExtension,org.apache.iceberg.spark.extensions.IcebergSparkSessionExtensions"
    )
    assert settings["spark.sql.catalog.iceberg"] == "org.apache.iceberg.spark.SparkCatalog"
    assert settings["spark.sql.catalog.iceberg.type"] == "hive"
    assert settings["spark.sql.catalog.iceberg.hadoop.iceberg.engine.hive.lock-enabled"] == "false"
    shared = {
        "spark.hadoop.hive.metastore.uris": "thrift://127.0.0.1:9083",
        "spark.sql.catalog.iceberg.type": "rest",
    }
    settings = storage.format_settings(shared, {"LAKEHOUSE_DELTA_JARS": str(tmp_path)})
    assert not any("lock-enabled" in k or "datanucleus" in k for k in settings), settings
    assert "spark.sql.catalog.iceberg.type" not in settings  # the profile's own
    # a URL naming a database is not an embedded Derby metastore: a shared one keeps its lock
    for shared in (
        {"spark.hadoop.javax.jdo.option.ConnectionURL": "jdbc:sqlserver://h:1433;databaseName=hive"},
        {"spark.hadoop.javax.jdo.option.ConnectionURL": "jdbc:derby://h:1527/metastore_db;create=true"},
        {**derby, "spark.hadoop.hive.metastore.uris": "thrift://127.0.0.1:9083"},
    ):
        settings = storage.format_settings(shared, {"LAKEHOUSE_DELTA_JARS": str(tmp_path)})
        assert not any("lock-enabled" in k or "datanucleus" in k for k in settings), (shared, settings)


def test_a_delta_jars_setting_that_holds_no_jar_names_itself_and_the_remedy(tmp_path):
    with pytest.raises(
        ValueError, match=r"LAKEHOUSE_DELTA_JARS is '.*', which names no delta-spark jar: run `make jars`"
    ):
        storage.format_settings({}, {"LAKEHOUSE_DELTA_JARS": str(tmp_path)})
