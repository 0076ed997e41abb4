"""How `parquet_append` turns rows into arrow columns: exact values, refusals, and no pandas.

The audit hooks write a few rows per table on every dbt command; the rows become arrow columns
through pyarrow's JSON reader against the table's schema.  Values must come back exactly (an
instant to the microsecond, a 63-bit integer, a double's last bit), a value its column cannot
hold must be refused (the caller then uses Spark's writer, which casts), and the conversion must
not import pandas (0.2 s on every command, which `pa.array` on Python values costs).
"""

from __future__ import annotations

import subprocess
import sys
from datetime import datetime, timedelta, timezone
from pathlib import Path

import pyarrow as pa
import pytest

from python_hooks.catalog.parquet_append import _arrow_table

REPO = Path(__file__).resolve().parents[2]
TYPES = [
    pa.timestamp("us", tz="UTC"),
    pa.int64(),
    pa.int32(),
    pa.float64(),
    pa.bool_(),
    pa.string(),
    pa.list_(pa.string()),
]
NAMES = ["at", "big", "small", "ratio", "flag", "text", "tags"]


def test_values_come_back_exactly():
    paris = timezone(timedelta(hours=2))
    rows = [
        (
            datetime(2026, 3, 29, 3, 30, 15, 123456, tzinfo=paris),
            2**62 + 1,
            -(2**31),
            0.1 + 0.2,
            True,
            'quote " backslash \\ newline \n é 日本',
            ["a", None, ""],
        ),
        (None, None, None, None, None, None, None),
        (datetime(1969, 12, 31, 23, 59, 59, 999999, tzinfo=timezone.utc), -1, 0, 1e308, False, "", []),
    ]
    table = _arrow_table(pa, NAMES, TYPES, rows)
    assert table.schema.types == TYPES
    got = table.to_pylist()
    assert got[0]["at"] == datetime(2026, 3, 29, 1, 30, 15, 123456, tzinfo=timezone.utc)
    assert [got[0][n] for n in NAMES[1:]] == list(rows[0][1:])
    assert got[1] == dict.fromkeys(NAMES)
    assert got[2]["at"] == rows[2][0] and got[2]["ratio"] == 1e308 and got[2]["tags"] == []


def test_a_naive_datetime_is_local_time():
    naive = datetime(2026, 7, 1, 12, 0, 0, 5)
    table = _arrow_table(pa, ["at"], [pa.timestamp("us", tz="UTC")], [(naive,)])
    assert table.column("at")[0].as_py() == naive.astimezone(timezone.utc)


@pytest.mark.parametrize(
    ("arrow_type", "value"),
    [(pa.int64(), "x"), (pa.int64(), 1.5), (pa.int32(), 2**40), (pa.bool_(), 1), (pa.string(), "\ud800")],
)
def test_a_value_its_column_cannot_hold_is_refused(arrow_type, value):
    with pytest.raises((pa.ArrowException, ValueError)):
        _arrow_table(pa, ["c"], [arrow_type], [(value,)])


def test_the_conversion_does_not_import_pandas():
    code = (
        "import sys, io, pyarrow as pa, pyarrow.parquet as pq\n"
        "from datetime import datetime, timezone\n"
        "from python_hooks.catalog.parquet_append import _arrow_table\n"
        "t = _arrow_table(pa, ['at', 'n'], [pa.timestamp('us', tz='UTC'), pa.int64()],"
        " [(datetime.now(timezone.utc), 1)])\n"
        "pq.write_table(t, io.BytesIO(), compression='snappy', use_deprecated_int96_timestamps=True)\n"
        "print('pandas' in sys.modules)\n"
    )
    done = subprocess.run([sys.executable, "-c", code], cwd=REPO, capture_output=True, text=True, check=True)
    assert done.stdout.strip() == "False"
