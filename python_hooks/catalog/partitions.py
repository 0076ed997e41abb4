"""Hive partition specs: `show partitions` returns path-escaped values (`%3A`, `%27`)."""

from __future__ import annotations

import re
from typing import List, Tuple

# Hive's FileUtils.escapePathName character set (Unix).
_ESCAPED = {chr(c) for c in range(1, 0x20)} | set("\"#%'*/:=?\\\x7f{[]^")


def escape_path_name(value: str) -> str:
    return "".join(f"%{ord(ch):02X}" if ch in _ESCAPED else ch for ch in value)


def unescape_path_name(value: str) -> str:
    return re.sub(r"%([0-9A-Fa-f]{2})", lambda m: chr(int(m.group(1), 16)), value)


def parse_spec(spec: str) -> List[Tuple[str, str]]:
    """`k=v/k2=v2` (escaped, as `show partitions` prints it) into [(k, v), (k2, v2)] unescaped."""
    pairs = []
    for part in spec.strip("/").split("/"):
        if "=" not in part:
            raise ValueError(f"Partition spec {spec!r} is not of the form key=value/key2=value2.")
        key, _, value = part.partition("=")
        pairs.append((unescape_path_name(key), unescape_path_name(value)))
    return pairs


def spec_path(pairs: List[Tuple[str, str]]) -> str:
    """[(k, v), ...] (unescaped) into the directory path Hive uses: `k=v/k2=v2`, escaped."""
    return "/".join(f"{escape_path_name(k)}={escape_path_name(str(v))}" for k, v in pairs)
