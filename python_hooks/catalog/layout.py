"""Where a purge writes a table's new data, and which directories belong to a table.

A partitioned table's rewrite goes to `<L>/<ts>/<partition path>`: only registered partition
directories are read, so nothing under `<L>` is seen before its swap.  An unpartitioned table's
rewrite goes beside its directory, to `<root>__purge_<ts>` (as the snapshot materialization writes
`<root>__v<ts>`): a reader of `<L>` lists `<L>` recursively, so the new files must not be under it,
and the new location's own name must not start with `_` or `.`, which Hadoop's input formats
(Hive's reader, and every engine reading through them) treat as hidden and then refuse as
"Input path does not exist".  Tables purged before this layout live at `<L>/_purge_<ts>`; their
next purge moves them beside their root, where every reader reads them.
"""

from __future__ import annotations

import re

# the run levels under a table's directory: `/<ts>` (partitioned) and `/_purge_<ts>` (unpartitioned,
# the layout before `__purge_<ts>`)
RUN_LEVEL = re.compile(r"/(_purge_)?\d{10,}$")
PURGED_SIBLING = re.compile(r"__purge_\d{10,}$")
SIBLING_SUFFIX = r"(__v\d+|__purge_\d{10,})?"


def table_root(location: str) -> str:
    """The directory a table was created in: its location without the run levels and the
    `__purge_<ts>` suffix that purges add."""
    location = location.rstrip("/")
    while RUN_LEVEL.search(location) or PURGED_SIBLING.search(location):
        location = PURGED_SIBLING.sub("", RUN_LEVEL.sub("", location))
    return location


def unpartitioned_rewrite(location: str, ts: int | str) -> str:
    """Where a purge of the unpartitioned table at `location` writes its new files."""
    return f"{table_root(location)}__purge_{ts}"


def family(root: str) -> tuple[str, re.Pattern[str]] | None:
    """(parent directory, a pattern of the names) of the directories a table's rewrites and
    versions take beside `root` (`<name>`, `<name>__purge_<ts>`, `<name>__v<ts>`)."""
    match = re.match(r"^(?P<parent>.+)/(?P<name>[^/]+?)(__v\d+)?$", root.rstrip("/"))
    if match is None:
        return None
    return match.group("parent"), re.compile(re.escape(match.group("name")) + SIBLING_SUFFIX)
