{#
    Python models on the local session.  dbt-spark writes a Python model's DataFrame with
    `df.write.saveAsTable(...)`, which ignores partition_by, tblproperties, options and location
    and defaults to delta.  Here the DataFrame becomes a temporary view and the table is created
    with the same `create table ... as select` that a SQL model gets, so both languages honour
    exactly the same configs.  A model returns a Spark, pandas-on-Spark or pandas DataFrame (the
    types dbt-spark's own py_write_table accepts).

    `session_conf` (a model config, {key: value}) sets Spark SQL settings for this model alone:
    set before `model()` runs, and put back as the session had them (set or unset) after the
    table is written, whether or not it is.  The settings that shape a plan must hold while the
    DataFrame is planned, and a Python model's DataFrame is planned by the write.
#}
{% macro py_write_table(compiled_code, target_relation) %}
{%- set view_name = '__dbt_py_' ~ target_relation.identifier -%}
{%- set create_sql = create_table_as(False, target_relation, 'select * from ' ~ view_name, 'sql') -%}
{{ compiled_code }}
# --- dbt-lakehouse: materialize the model's DataFrame in the session --- #
import sys

import pyspark

try:
    import pandas
except ImportError:
    pandas = None


def _dbt_spark_dataframe(spark, df):
    # a pandas-on-Spark DataFrame means its module is loaded: no import (slow) otherwise
    pandas_on_spark = sys.modules.get("pyspark.pandas")
    if pandas_on_spark is not None and isinstance(df, pandas_on_spark.DataFrame):
        return df.to_spark()
    if pandas is not None and isinstance(df, pandas.DataFrame):
        return spark.createDataFrame(df)
    if isinstance(df, pyspark.sql.DataFrame):
        return df
    raise TypeError(
        f"{type(df)} is not a supported return type for a dbt Python model:"
        " return a Spark, pandas-on-Spark or pandas DataFrame"
    )


def _dbt_write_model(spark, df):
    df = _dbt_spark_dataframe(spark, df)
    df.createOrReplaceTempView({{ tojson(view_name) }})
    try:
        spark.sql({{ tojson(create_sql) }})
    finally:
        spark.catalog.dropTempView({{ tojson(view_name) }})


dbt = dbtObj(spark.table)
_dbt_session_conf = {{ tojson(config.get('session_conf') or {}) }}
_dbt_session_saved = {key: spark.conf.get(key, None) for key in _dbt_session_conf}
for key, value in _dbt_session_conf.items():
    spark.conf.set(key, str(value))
try:
    _dbt_write_model(spark, model(dbt, spark))
finally:
    for key, value in _dbt_session_saved.items():
        if value is None:
            spark.conf.unset(key)
        else:
            spark.conf.set(key, value)
{%- endmacro -%}
