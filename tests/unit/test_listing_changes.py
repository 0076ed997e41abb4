"""What a failed commit check says changed (file_facts.Listing.changes_since), and that its
fingerprint sees every field of a file, the store's version included."""

from __future__ import annotations

from python_hooks.catalog.file_facts import DataFile, Listing

ROOT = "s3a://lake/w/t/ds=a"
BEFORE = [
    DataFile(f"{ROOT}/part-0.parquet", 100, 1_000, "etag:a"),
    DataFile(f"{ROOT}/part-1.parquet", 200, 1_000, "etag:b"),
    DataFile(f"{ROOT}/part-2.parquet", 300, 1_000, "etag:c"),
]


def listing(files: list[DataFile]) -> Listing:
    return Listing(location=ROOT, files=files)


def test_an_unchanged_listing_says_nothing_and_fingerprints_the_same():
    again = listing(list(reversed(BEFORE)))
    assert again.changes_since(BEFORE) == ""
    assert again.fingerprint() == listing(BEFORE).fingerprint()


def test_each_field_of_a_file_changes_its_fingerprint():
    for field, value in (("size", 101), ("modified", 1_001), ("version", "etag:z")):
        changed = DataFile(**{**BEFORE[0].__dict__, field: value})
        now = listing([changed, *BEFORE[1:]])
        assert now.fingerprint() != listing(BEFORE).fingerprint(), field
    now = listing([DataFile(f"{ROOT}/part-0.parquet", 100, 1_000, "etag:z"), *BEFORE[1:]])
    assert now.changes_since(BEFORE) == "part-0.parquet written again (version changed)"


def test_additions_removals_and_rewrites_are_named_the_first_three_then_counted():
    now = listing(
        [
            DataFile(f"{ROOT}/part-0.parquet", 100, 2_000, "etag:z"),
            DataFile(f"{ROOT}/part-1.parquet", 201, 2_000, "etag:y"),
            DataFile(f"{ROOT}/part-9.parquet", 10, 2_000, "etag:x"),
        ]
    )
    assert now.changes_since(BEFORE) == (
        "part-9.parquet added; part-2.parquet removed; part-0.parquet written again (modification time,"
        " version changed); 1 more change(s)"
    )
    assert now.changes_since(BEFORE, most=5).endswith(
        "part-1.parquet written again (size, modification time, version changed)"
    )
