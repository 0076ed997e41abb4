"""`kafka.page_view_hourly_staging`: hourly page views as a Kafka ingestion lands them.

Partitioned by `ds` (yyyy-MM-dd) and `hr` (0-23), generated relative to `compaction_now` (the
run's start when unset) so that the compaction window always has work: every hour of yesterday
and of today up to the current hour, plus one hour four days ago (outside the default 3d
window).  Duplicates of both kinds: every 10th event is landed twice byte for byte, and every
7th is re-sent with a later `event_ts` and another page (the same `event_id`).
"""

from pyspark.sql import functions as F


def model(dbt, spark):
    # plain `dbt.config.get(...)` statements: dbt only passes the keys it finds called this way
    per_hour = dbt.config.get("demo_page_view_rows_per_hour", 200)
    now = dbt.config.get("compaction_now", "")
    per_hour, now = int(per_hour or 200), str(now or "").strip()
    now_sql = f"to_timestamp('{now}')" if now else "current_timestamp()"
    base = spark.sql(
        f"select unix_timestamp(date_trunc('hour', {now_sql})) as base, hour({now_sql}) as h"
    ).first()
    # yesterday 00:00 up to the current hour, and one hour outside the 3-day window
    offsets = list(range(-(24 + base.h), 1)) + [-96]
    hours = spark.createDataFrame([(i, o) for i, o in enumerate(offsets)], "hour_index int, hour_offset int")
    events = (
        spark.range(len(offsets) * per_hour)
        .select((F.col("id") / per_hour).cast("int").alias("hour_index"), (F.col("id") % per_hour).alias("i"))
        .join(F.broadcast(hours), "hour_index")
        .select(
            "i",
            (F.lit(base.base) + F.col("hour_offset") * 3600).alias("hour_epoch"),
            (F.col("hour_index") * 100000 + F.col("i")).cast("bigint").alias("event_id"),
            (F.col("i") % 50 + 1).cast("bigint").alias("member_id"),
            F.element_at(
                F.array(*[F.lit(p) for p in ["/home", "/jobs", "/feed", "/profile", "/search"]]),
                (F.col("i") % 5 + 1).cast("int"),
            ).alias("page"),
        )
        .select(
            "*",
            (F.col("hour_epoch") + (F.col("i") * 17) % 3000).cast("timestamp").alias("event_ts"),
            (F.col("hour_epoch") + 3000 + F.col("i") % 500).cast("timestamp").alias("ingested_at"),
        )
    )
    resent = events.where(F.col("i") % 7 == 0).select(
        "i",
        "hour_epoch",
        "event_id",
        "member_id",
        F.lit("/resent").alias("page"),
        (F.col("event_ts") + F.expr("interval 5 seconds")).alias("event_ts"),
        (F.col("ingested_at") + F.expr("interval 30 seconds")).alias("ingested_at"),
    )
    landed = events.unionByName(events.where(F.col("i") % 10 == 0)).unionByName(resent)
    return landed.select(
        "event_id",
        "member_id",
        "page",
        "event_ts",
        "ingested_at",
        F.from_unixtime("hour_epoch", "yyyy-MM-dd").alias("ds"),
        F.hour(F.col("hour_epoch").cast("timestamp")).alias("hr"),
    )
