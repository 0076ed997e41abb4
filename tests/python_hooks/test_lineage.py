"""Column lineage from compiled Spark SQL (sqlglot), without Spark."""

from python_hooks.audit import lineage

COLUMNS = {
    "tracking.event": {"datepartition": "string", "is_guest": "string", "metadata": "struct<guestid:bigint>"},
    "u_purger.guestids": {"guestid": "bigint"},
}
RELATIONS = {
    "tracking.event": "model.compliance.demo_tracking_event",
    "u_purger.guestids": "seed.compliance.ids",
}


def edges(sql):
    found = {}
    for e in lineage.column_lineage("model.x", sql, RELATIONS, COLUMNS.get):
        found.setdefault(e.column_name, set()).add((e.source_unique_id, e.source_column))
    return found


def test_star_ctes_joins_nested_fields_and_literals():
    sql = """
    with events as (select * from `tracking`.`event`),
    ids as (select guestid from `u_purger`.`guestids`)
    select e.datepartition, count(*) as n, max(e.metadata.guestid) as g, 'x' as lit,
           concat(e.is_guest, i.guestid) as c
    from events as e left join ids as i on e.metadata.guestid = i.guestid
    group by e.datepartition
    """
    assert edges(sql) == {
        "datepartition": {("model.compliance.demo_tracking_event", "datepartition")},
        "n": {(None, None)},
        "g": {("model.compliance.demo_tracking_event", "metadata")},
        "lit": {(None, None)},
        "c": {("model.compliance.demo_tracking_event", "is_guest"), ("seed.compliance.ids", "guestid")},
    }


def test_table_functions_have_no_upstream_relation():
    assert edges("select id as member_id, id * 2 as twice from range(10)") == {
        "member_id": {(None, None)},
        "twice": {(None, None)},
    }


def test_unknown_upstream_relation_keeps_its_name():
    found = lineage.column_lineage("model.x", "select a.k from `other`.`t` as a", {}, lambda r: None)
    assert [(e.column_name, e.source_unique_id, e.source_relation, e.source_column) for e in found] == [
        ("k", None, "other.t", "k")
    ]


def test_edges_come_from_the_parent_map():
    manifest = {"parent_map": {"model.b": ["model.a", "seed.s"], "test.t": ["model.b"], "model.a": []}}
    assert lineage.lineage_edges(manifest) == [
        ("model.a", "model.b"),
        ("model.b", "test.t"),
        ("seed.s", "model.b"),
    ]


def test_python_models_get_model_level_edges():
    rows = lineage.model_level_lineage("model.py", ["model.b", "model.a"], lambda p: f"db.{p.split('.')[-1]}")
    assert [(r.source_unique_id, r.source_relation, r.lineage_level, r.is_python_model) for r in rows] == [
        ("model.a", "db.a", "model", True),
        ("model.b", "db.b", "model", True),
    ]
