"""The verifier's reading of an Iceberg table's metadata bytes (python_hooks/erasure/iceberg_copies.py):
an Avro manifest decompressed as Iceberg writes it (fastavro writes the files here, so the reading
is checked against another implementation), and the encodings an id is sought by."""

from __future__ import annotations

import io
import struct

import fastavro
import pytest

from python_hooks.erasure.iceberg_copies import _needles, avro_bytes, upper_bound

SCHEMA = {
    "type": "record",
    "name": "entry",
    "fields": [{"name": "lower_bound", "type": "bytes"}, {"name": "path", "type": "string"}],
}


def manifest(codec: str, bound: bytes) -> bytes:
    out = io.BytesIO()
    records = [{"lower_bound": bound, "path": f"data/{i}.parquet"} for i in range(50)]
    fastavro.writer(out, fastavro.parse_schema(SCHEMA), records, codec=codec, sync_interval=200)
    return out.getvalue()


@pytest.mark.parametrize("codec", ["null", "deflate"])
def test_a_statistic_is_found_in_a_manifest_once_its_blocks_are_decompressed(codec):
    bound = struct.pack("<q", 8001)
    content = manifest(codec, bound)
    assert bound in avro_bytes(content, "m0.avro")
    if codec == "deflate":  # the bytes as written do not show it: a raw search would say clean
        assert manifest(codec, struct.pack("<q", 8001)).count(bound) < 50


def test_a_codec_the_verifier_does_not_decompress_is_an_error_naming_the_file():
    # the header's codec renamed in place (same length: the header's sizes still hold)
    content = manifest("null", b"x").replace(b"\x14avro.codec\x08null", b"\x14avro.codec\x08zstd", 1)
    assert b"zstd" in content
    with pytest.raises(
        ValueError, match=r"m1.avro is compressed with zstd, which the verifier does not decompress"
    ):
        avro_bytes(content, "s3a://b/t/metadata/m1.avro")


def test_a_cut_file_is_an_error():
    content = manifest("deflate", b"x" * 8)
    with pytest.raises(ValueError, match="not a whole Avro file"):
        avro_bytes(content[:-5] + b"\x00" * 5, "m2.avro")


def test_an_id_is_sought_by_every_encoding_a_statistic_can_have():
    # an int that fits in 4 bytes: those 4, the start of its 8-byte form too (a widened column)
    assert _needles("bigint", 8001, 16) == ([struct.pack("<i", 8001)], "8001")
    assert struct.pack("<q", 8001).startswith(struct.pack("<i", 8001))
    assert _needles("bigint", 2**40, 16) == ([struct.pack("<q", 2**40)], str(2**40))
    # a string cut as the table's metrics cut it; `full` keeps it whole
    # a string cut as the table's metrics cut it (its lower bound), and the cut Iceberg writes as
    # its upper bound: the last character incremented; `full` keeps it whole
    assert _needles("string", "guest-0123456789-abcdef", 16)[0] == [b"guest-0123456789", b"guest-012345678:"]
    assert _needles("string", "guest-0123456789-abcdef", 4)[0] == [b"gues", b"guet"]
    assert _needles("string", "guest-0123456789-abcdef", None)[0] == [b"guest-0123456789-abcdef"]
    # a string no longer than the cut is its own bound, either way
    assert _needles("string", "guest-1", 16)[0] == [b"guest-1"]
    # the last character at the top of Unicode cannot be incremented: the one before it is
    assert upper_bound("ab\U0010ffff") == "ac"
    assert upper_bound("\U0010ffff") is None
    # past the surrogates, which are no characters, as Iceberg's increment goes
    assert upper_bound("a\ud7ff") == "a\ue000"


def test_delete_files_are_read_for_the_row_they_carry_unless_a_column_is_named_row():
    from pyspark.sql.types import LongType, StringType, StructField, StructType

    from python_hooks.erasure.iceberg_copies import row_problem, with_row

    plain = StructType([StructField("guestid", LongType()), StructField("page", StringType())])
    extended = with_row(plain)
    assert extended.fieldNames() == ["guestid", "page", "row"] and extended["row"].dataType == plain
    assert row_problem(extended, "db.t") is None
    # a table's own column named row: its delete files are reported unread, never clean
    own = StructType([StructField("guestid", LongType()), StructField("row", StringType())])
    assert with_row(own) == own
    assert "db.t has a column named row" in row_problem(with_row(own), "db.t")
