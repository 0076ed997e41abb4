"""The session's JVM through py4j: remembered lookups and Scala collections as Python."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from python_hooks.catalog.scala import scala_list

__all__ = [
    "RememberedJVM",
    "compiled",
    "hadoop_path",
    "jvm",
    "path_string",
    "scala_list",
    "scala_map",
    "scala_seq",
]


class RememberedJVM:
    """`spark._jvm` that remembers every package, class and static member it has looked up.

    py4j resolves `jvm.org.apache.hadoop.fs.Path` one level at a time, a round trip to the JVM
    for each (five here), and does it again on every use; a purge makes thousands of such
    lookups.  This view makes each of them once per process.  What calls return is not wrapped.
    """

    __slots__ = ("_target", "_members")

    def __init__(self, target: Any) -> None:
        self._target = target
        self._members: dict[str, Any] = {}

    @property
    def target(self) -> Any:
        return self._target

    def __getattr__(self, name: str) -> Any:
        if name.startswith("__"):
            raise AttributeError(name)
        try:
            return self._members[name]
        except KeyError:
            pass
        from py4j.java_gateway import JavaClass, JavaPackage

        value = getattr(self._target, name)
        if isinstance(value, (JavaPackage, JavaClass)):
            value = RememberedJVM(value)
        self._members[name] = value
        return value

    def __call__(self, *args: Any) -> Any:
        return self._target(*args)


def jvm(spark: Any) -> Any:
    """The session's JVM view, with lookups remembered (see RememberedJVM), kept on the
    SparkContext whose gateway it views: it goes with the context, not with this process."""
    context = spark.sparkContext
    gateway = spark._jvm
    view = getattr(context, "_lakehouse_jvm_view", None)
    if view is None or view.target is not gateway:
        view = RememberedJVM(gateway)
        context._lakehouse_jvm_view = view
    return view


def compiled(spark: Any, source: Path, class_name: str) -> Any:
    """An instance of the Java class `class_name` (no-argument constructor) compiled from `source`
    by Janino, the compiler Spark ships for its own code generation, against the driver's classes;
    compiled once per SparkContext and kept on it (code, not state: it goes with the context)."""
    context = spark.sparkContext
    helpers = getattr(context, "_lakehouse_compiled", None)
    if helpers is None:
        helpers = context._lakehouse_compiled = {}
    if class_name not in helpers:
        view, gateway = jvm(spark), context._gateway
        compiler = view.org.codehaus.janino.SimpleCompiler()
        compiler.setParentClassLoader(view.java.lang.Thread.currentThread().getContextClassLoader())
        compiler.cook(source.read_text(encoding="utf-8"))
        cls = compiler.getClassLoader().loadClass(class_name)
        helpers[class_name] = cls.getDeclaredConstructor(
            gateway.new_array(view.java.lang.Class, 0)
        ).newInstance(gateway.new_array(view.java.lang.Object, 0))
    return helpers[class_name]


def java_array(spark: Any, element: str, values: list[Any]) -> Any:
    """A Java array of `values` (what the compiled helpers take: one py4j object, where a Python
    list would be converted element by element at every call); `element` is a primitive type's
    name (`boolean`, `int`, `long`) or a class's (`java.lang.String`)."""
    kind = jvm(spark)
    for part in element.split("."):
        kind = getattr(kind, part)
    array = spark.sparkContext._gateway.new_array(kind, len(values))
    for index, value in enumerate(values):
        array[index] = value
    return array


def string_array(spark: Any, values: list[str]) -> Any:
    """A Java String[] of `values`."""
    return java_array(spark, "java.lang.String", values)


def scala_seq(spark: Any, items: list[Any]) -> Any:
    """A Scala Seq of `items`."""
    return jvm(spark).org.apache.spark.api.python.PythonUtils.toSeq(items)


def scala_map(spark: Any, pairs: list[tuple[str, str]]) -> Any:
    """A Scala Map of string pairs (a partition spec, table or format options)."""
    view = jvm(spark)
    java_map = view.java.util.HashMap()
    for key, value in pairs:
        java_map.put(key, value)
    return view.org.apache.spark.api.python.PythonUtils.toScalaMap(java_map)


def hadoop_path(spark: Any, location: Any) -> Any:
    """An org.apache.hadoop.fs.Path of a string or a URI."""
    return jvm(spark).org.apache.hadoop.fs.Path(location)


def path_string(spark: Any, uri: Any) -> str:
    """A location URI as the Hadoop path string (`p=x%3A1`, not the URI's `p=x%253A1`), no trailing slash."""
    return str(hadoop_path(spark, uri).toString()).rstrip("/")
