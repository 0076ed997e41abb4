"""The seed document's example table `tracking.event`, generated.

Rows carry a nested `metadata.guestid` (the purge identifier), partitions are
`datepartition` (hourly, `2017-02-16-00`) and `is_guest`.  Deterministic for a given
`demo_event_rows` so that the demo's figures are reproducible.
"""

from pyspark.sql import functions as F


def model(dbt, spark):
    # dbt only passes a config key to a Python model when `dbt.config.get("key")` is a plain call
    configured_rows = dbt.config.get("demo_event_rows")
    configured_hours = dbt.config.get("demo_event_hours")
    configured_guests = dbt.config.get("demo_guest_count")
    rows = int(configured_rows or 120000)
    hours = int(configured_hours or 6)
    guests = int(configured_guests or 5000)
    ids = spark.range(rows)
    return ids.select(
        F.struct(
            (F.col("id") % guests + 1).cast("bigint").alias("guestid"),
            F.concat(F.lit("session-"), (F.col("id") % 977).cast("string")).alias("sessionid"),
        ).alias("metadata"),
        F.element_at(
            F.array(F.lit("page_view"), F.lit("click"), F.lit("search"), F.lit("purchase")),
            (F.col("id") % 4 + 1).cast("int"),
        ).alias("event_type"),
        (F.lit(1487203200) + F.col("id") % (hours * 3600)).cast("timestamp").alias("event_ts"),
        F.date_format(
            (F.lit(1487203200) + (F.col("id") % hours) * 3600).cast("timestamp"), "yyyy-MM-dd-HH"
        ).alias("datepartition"),
        ((F.col("id") % guests + 1) % 2).cast("string").alias("is_guest"),
    )
