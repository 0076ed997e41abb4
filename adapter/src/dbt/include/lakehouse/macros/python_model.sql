{#
    Python models on the local session.  dbt-spark writes a Python model's DataFrame with
    `df.write.saveAsTable(...)`, which ignores partition_by, tblproperties, options and location
    and defaults to delta.  Here the DataFrame becomes a temporary view and the table is created
    with the same `create table ... as select` that a SQL model gets, so both languages honour
    exactly the same configs.
#}
{% macro py_write_table(compiled_code, target_relation) %}
{%- set view_name = '__dbt_py_' ~ target_relation.identifier -%}
{%- set create_sql = create_table_as(False, target_relation, 'select * from ' ~ view_name, 'sql') -%}
{{ compiled_code }}
# --- dbt-lakehouse: materialize the model's DataFrame in the session --- #
dbt = dbtObj(spark.table)
df = model(dbt, spark)

import pyspark

try:
    import pandas
except ImportError:
    pandas = None

if pandas is not None and isinstance(df, pandas.DataFrame):
    df = spark.createDataFrame(df)
if not isinstance(df, pyspark.sql.DataFrame):
    raise TypeError(f"{type(df)} is not a supported return type for a dbt Python model: return a Spark or pandas DataFrame")

df.createOrReplaceTempView({{ tojson(view_name) }})
try:
    spark.sql({{ tojson(create_sql) }})
finally:
    spark.catalog.dropTempView({{ tojson(view_name) }})
{%- endmacro -%}
