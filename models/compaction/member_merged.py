"""Merge a snapshot with ordered deltas by primary key (Gobblin's Hive snapshot/delta compactor).

Inputs come from `member_merge_inputs` (snapshot first, then deltas in pull order).  A key in
delta j beats delta i < j beats the snapshot; with `member_merge_mode: latest_timestamp` the row
with the latest `timestamp_column` wins instead (later input on ties).  The output has the last
delta's schema: columns it lacks are dropped, columns an older input lacks are null.  Deletions
are not visible in deltas; only the next full snapshot drops deleted members.
"""

from functools import reduce

from pyspark.sql import DataFrame, Window
from pyspark.sql import functions as F

MODES = ("delta_order", "latest_timestamp")


def merge_snapshot_with_deltas(inputs, key, mode="delta_order", timestamp_column=None) -> DataFrame:
    """Keep one row per `key`: the last input's row, or the latest `timestamp_column`."""
    if mode not in MODES:
        raise ValueError(f"member_merge_mode {mode!r} is not one of {', '.join(MODES)}")
    last = inputs[-1]
    schema = {field.name: field.dataType for field in last.schema.fields}
    for name in key + ([timestamp_column] if mode == "latest_timestamp" else []):
        if name not in schema:
            raise ValueError(f"column {name!r} is not in the last delta's schema ({', '.join(last.columns)})")
    aligned = [
        df.select(
            *[(F.col(c) if c in df.columns else F.lit(None)).cast(schema[c]).alias(c) for c in last.columns],
            F.lit(position).alias("_merge_position"),
        )
        for position, df in enumerate(inputs)
    ]
    union = reduce(DataFrame.unionByName, aligned)
    ordering = [F.col("_merge_position").desc()]
    if mode == "latest_timestamp":
        ordering = [F.col(timestamp_column).desc_nulls_last()] + ordering
    window = Window.partitionBy(*key).orderBy(*ordering)
    return (
        union.withColumn("_merge_rank", F.row_number().over(window))
        .where(F.col("_merge_rank") == 1)
        .drop("_merge_rank", "_merge_position")
    )


def model(dbt, spark):
    manifest = dbt.ref("member_merge_inputs")
    inputs = manifest.orderBy("position").collect()
    if len(inputs) < 2:
        raise ValueError("member_merged needs a snapshot and at least one delta (var member_deltas is empty)")
    # plain `dbt.config.get(...)` statements: dbt only passes the keys it finds called this way
    merge_key = dbt.config.get("merge_key", "member_id")
    mode = dbt.config.get("member_merge_mode", "delta_order")
    timestamp_column = dbt.config.get("timestamp_column", "updated_at")
    return merge_snapshot_with_deltas(
        [spark.table(row.relation_name) for row in inputs],
        [k.strip() for k in str(merge_key).split(",")],
        mode=mode,
        timestamp_column=timestamp_column,
    )
