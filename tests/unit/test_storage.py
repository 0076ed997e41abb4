"""The settings an s3a:// warehouse gets from the environment, and where the run lock lives."""

from __future__ import annotations

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
