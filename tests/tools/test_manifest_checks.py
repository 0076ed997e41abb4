"""The pre-commit manifest checker on a small fake manifest."""

import json

from tools import manifest_checks


def model(name, *, description="d", columns=None, raw_code="select 1 as x", language="sql", package="proj"):
    return {
        "resource_type": "model",
        "name": name,
        "package_name": package,
        "original_file_path": f"models/{name}.sql",
        "description": description,
        "columns": {"x": {"description": "an x"}} if columns is None else columns,
        "raw_code": raw_code,
        "language": language,
    }


def fake_manifest():
    nodes = {
        "model.proj.good": model(
            "good", raw_code="select * from {{ ref('other') }} as o join {{ source('s', 't') }}"
        ),
        "model.proj.undocumented": model("undocumented", description="", columns={"x": {"description": ""}}),
        "model.proj.untested": model("untested"),
        "model.proj.hardcoded": model(
            "hardcoded",
            raw_code="-- from comment.table is fine\nselect 'from a.b' as s from tracking.event e left join `u`.`ids` i on 1=1",
        ),
        "model.proj.py": model("py", language="python", raw_code="spark.table('a.b')"),
        "model.other.theirs": model("theirs", description="", package="other"),
        "test.proj.not_null_good_x": {
            "resource_type": "test",
            "name": "not_null_good_x",
            "package_name": "proj",
        },
    }
    child_map = {
        "model.proj.good": ["test.proj.not_null_good_x"],
        "model.proj.undocumented": ["test.proj.a"],
        "model.proj.hardcoded": ["test.proj.b"],
        "model.proj.py": ["unit_test.proj.py.t"],
        "model.proj.untested": [],
    }
    nodes["seed.proj.ids"] = {
        "resource_type": "seed",
        "name": "ids",
        "package_name": "proj",
        "description": "",
    }
    sources = {
        "source.proj.raw.events": {
            "resource_type": "source",
            "name": "events",
            "source_name": "raw",
            "package_name": "proj",
            "description": "raw events",
            "columns": {"id": {"description": ""}},
        }
    }
    return {
        "metadata": {"project_name": "proj"},
        "nodes": nodes,
        "sources": sources,
        "child_map": child_map,
        "unit_tests": {},
    }


def test_findings_name_the_model_and_the_rule():
    findings = {(f.node, f.check, f.message) for f in manifest_checks.check_manifest(fake_manifest())}
    assert findings == {
        ("undocumented", "description", "the model has no description in its yml"),
        ("undocumented", "columns", "column `x` has no description"),
        ("untested", "tests", "the model has no data test or unit test"),
        ("hardcoded", "hard-coded", "`tracking.event` is named directly: use ref(), source() or a var"),
        ("hardcoded", "hard-coded", "`u.ids` is named directly: use ref(), source() or a var"),
        ("ids", "description", "the seed has no description in its yml"),
        ("raw.events", "columns", "column `id` has no description"),
    }


def test_hard_coded_tables_ignore_jinja_comments_and_strings():
    sql = "/* from x.y */ select 'join a.b' from {{ ref('m') }} join cte on 1=1 -- from c.d\njoin db.t2"
    assert manifest_checks.hard_coded_tables(sql) == ["db.t2"]


def test_cli_exit_codes(tmp_path, capsys):
    path = tmp_path / "manifest.json"
    path.write_text(json.dumps(fake_manifest()))
    assert manifest_checks.main([str(path)]) == 1
    assert "models/untested.sql: untested: [tests]" in capsys.readouterr().out
    clean = fake_manifest()
    clean["nodes"] = {"model.proj.good": clean["nodes"]["model.proj.good"]}
    clean["sources"] = {}
    path.write_text(json.dumps(clean))
    assert manifest_checks.main([str(path)]) == 0
    assert manifest_checks.main([str(tmp_path / "missing.json")]) == 2
