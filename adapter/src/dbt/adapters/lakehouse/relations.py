"""dbt's relation cache through the session's catalog: what `show databases` and
`show table extended in <schema> like '*'` answer, without running them.

Every dbt command fills its relation cache before it runs a node: dbt-spark lists the schemas
(`show databases`) and, for every schema the selection writes, runs `show table extended`, which
asks the metastore for each table of the schema in turn and formats it.  With the `session`
method the same answers come from the catalog in two calls: the schema's table names, and all of
their metadata at once (Hive's getTableObjectsByName).  The text of each table is the catalog
table's own `simpleString`, the string `show table extended` prints (checked against it, table
kind by table kind, in tests/functional/foundation/test_relation_cache.py).  Temporary views,
which the statement also lists, belong to no schema and are left out.
"""

from __future__ import annotations

from typing import Any

from python_hooks.catalog.scala import scala_list


def _catalog(spark: Any) -> Any:
    return spark._jsparkSession.sessionState().catalog()


def database_names(spark: Any) -> list[str]:
    """Every database, as `show databases` lists them."""
    return [str(name) for name in scala_list(_catalog(spark).externalCatalog().listDatabases())]


def tables_with_information(spark: Any, database: str) -> list[tuple[str, str, str]]:
    """[(database, table, information)] of the permanent tables and views of `database`, as
    `show table extended in <database> like '*'` gives them; [] when the database does not exist."""
    if str(spark.conf.get("spark.sql.caseSensitive", "false")).lower() != "true":
        database = database.lower()  # as Spark SQL names it
    catalog = _catalog(spark)
    external = catalog.externalCatalog()
    if not external.databaseExists(database):
        return []
    names = scala_list(external.listTables(database))
    if not names:
        return []
    jvm = spark._jvm
    some = jvm.scala.Some(database)
    idents = [jvm.org.apache.spark.sql.catalyst.TableIdentifier(name, some) for name in names]
    tables = scala_list(catalog.getTablesByName(jvm.org.apache.spark.api.python.PythonUtils.toSeq(idents)))
    return [(database, str(table.identifier().table()), _information(jvm, table)) for table in tables]


def _information(jvm: Any, table: Any) -> str:
    """A CatalogTable's text in `show table extended`: its simpleString, with char(n) and varchar(n)
    columns shown as `string`, as the statement shows them (it reads the table through
    getTableMetadata, which replaces them; getTablesByName does not)."""
    information = str(table.simpleString())
    if "char(" in information:
        schema = table.schema()
        replaced = (
            jvm.org.apache.spark.sql.catalyst.util.CharVarcharUtils.replaceCharVarcharWithStringInSchema(
                schema
            )
        )
        information = information.replace(str(schema.treeString()), str(replaced.treeString()))
    return f"{information}\n"
