"""Scala collections from py4j as Python, for the adapter and the project's hooks alike."""

from __future__ import annotations

from typing import Any


def scala_list(seq: Any) -> list[Any]:
    """A Scala collection's elements, two JVM round trips each.

    Not `list(JavaConverters...asJava())`: py4j ends that iteration on a Java exception, which
    PySpark converts slowly, element by element.
    """
    items = []
    iterator = seq.iterator()
    while iterator.hasNext():
        items.append(iterator.next())
    return items
