"""Work on threads that a caller owns: made for one call, joined before it returns.

A pool's threads run their Spark jobs in the caller's Spark job group (the node's: cancelling
the node cancels them too), as pyspark's InheritableThread does.  Nothing here outlives the
`with` block that made it: no module-level pool, no thread left running after a node.
"""

from __future__ import annotations

from collections.abc import Callable
from concurrent.futures import Future, ThreadPoolExecutor
from typing import Any


class Pool:
    """A thread pool for one call: `with Pool(spark, 4) as pool: pool.submit(fn, ...)`; leaving the
    block waits for every task."""

    def __init__(self, spark: Any, workers: int, name: str = "lakehouse") -> None:
        self.spark = spark
        self.workers = max(1, workers)
        self.name = name
        self._executor: ThreadPoolExecutor | None = None

    def __enter__(self) -> Pool:
        self._executor = ThreadPoolExecutor(max_workers=self.workers, thread_name_prefix=self.name)
        return self

    def __exit__(self, *exc: Any) -> None:
        assert self._executor is not None
        self._executor.shutdown(wait=True)
        self._executor = None

    def submit(self, function: Callable[..., Any], *args: Any, **kwargs: Any) -> Future:
        """Run `function(*args, **kwargs)` on a thread of the pool, in the caller's job group."""
        assert self._executor is not None, "use the pool in a `with` block"
        properties = self.spark.sparkContext._jsc.sc().getLocalProperties().clone()

        def inherit() -> Any:
            self.spark.sparkContext._jsc.sc().setLocalProperties(properties)
            return function(*args, **kwargs)

        return self._executor.submit(inherit)
