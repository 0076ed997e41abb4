"""dbt-lakehouse: the `spark` adapter, extended for an in-process lakehouse.

It depends on the `spark` adapter (as dbt-databricks does), so every `spark__` macro and
materialization still applies, and adds:

* a ``session`` submission method, so Python models run in the local Spark session;
* seeds loaded cell for cell in the session: values bound as Spark SQL literals
  (python_hooks/catalog/literals.py);
* ``@available`` Hadoop FileSystem methods (list, exists, move, delete, ...) for macros and hooks;
* one run per warehouse: a second dbt command against a warehouse in use stops at once;
* Python's garbage collector tuned for a command that holds a manifest, when asked
  (`DBT_LAKEHOUSE_GC_TUNING=1`, gc_tuning.py): importing it changes nothing outside it otherwise.
"""

from dbt.adapters.base import AdapterPlugin
from dbt.adapters.lakehouse import gc_tuning
from dbt.adapters.lakehouse.connections import LakehouseConnectionManager, LakehouseCredentials
from dbt.adapters.lakehouse.impl import LakehouseAdapter
from dbt.include import lakehouse

__all__ = ["LakehouseAdapter", "LakehouseConnectionManager", "LakehouseCredentials", "Plugin"]

gc_tuning.tune()

Plugin = AdapterPlugin(
    adapter=LakehouseAdapter,  # type: ignore[arg-type]
    credentials=LakehouseCredentials,
    include_path=lakehouse.PACKAGE_PATH,
    dependencies=["spark"],
)
