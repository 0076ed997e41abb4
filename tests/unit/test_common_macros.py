import pytest

from tests.unit.macro_harness import MacroRenderer, squash

render = MacroRenderer()


def test_literals_are_escaped_once():
    assert render("sql_string", "o'brien") == "'o\\'brien'"
    assert render("sql_string", "a\\b") == "'a\\\\b'"
    assert render("sql_string", None) == "null"


def test_identifiers_are_quoted():
    assert render("table_ref", "tracking", "event") == "`tracking`.`event`"
    assert render("quote_ident", "we`ird") == "`we``ird`"


def test_partition_clause_and_predicate_from_show_partitions_output():
    pairs = [["ds", "2024-01-01 10:00"], ["who", "o'brien"]]
    assert squash(render("partition_clause", pairs)) == "(`ds` = '2024-01-01 10:00', `who` = 'o\\'brien')"
    assert (
        squash(render("partition_predicate", pairs, "a"))
        == "a.`ds` = '2024-01-01 10:00' and a.`who` = 'o\\'brien'"
    )
    # Hive's default partition holds the NULLs
    assert squash(render("partition_predicate", [["ds", "__HIVE_DEFAULT_PARTITION__"], ["hr", "1"]])) == (
        "`ds` is null and `hr` = '1'"
    )


@pytest.mark.parametrize(
    ("value", "expected"),
    [
        (True, True),
        ("true", True),
        ("Yes", True),
        ("1", True),
        (1, True),
        (False, False),
        ("no", False),
        ("0", False),
    ],
)
def test_every_boolean_var_is_read_the_same_way(value, expected):
    assert MacroRenderer({"purge_dry_run": value})("bool_var", "purge_dry_run") is expected


def test_a_boolean_var_that_is_not_a_boolean_is_an_error_naming_it():
    for value in ("ture", "", "2", "on"):
        with pytest.raises(Exception, match=r'Var purge_dry_run is "?.*"?: expected true or false'):
            MacroRenderer({"purge_dry_run": value})("bool_var", "purge_dry_run")
    assert MacroRenderer()("bool_var", "audit_enabled", True) is True


def test_partition_ddl_is_one_macro_per_statement():
    pairs = [["ds", "a'b"]]
    assert squash(
        render("add_partitions_sql", "db", "t", [[pairs, "file:/w/1"], [[["ds", "c"]], "file:/w/2"]])
    ) == (
        "alter table `db`.`t` add if not exists partition (`ds` = 'a\\'b') location 'file:/w/1'"
        " partition (`ds` = 'c') location 'file:/w/2'"
    )
    assert squash(render("set_location_sql", "db", "t", [], "file:/w/t/1")) == (
        "alter table `db`.`t` set location 'file:/w/t/1'"
    )
    assert squash(render("drop_partition_sql", "db", "t", pairs)) == (
        "alter table `db`.`t` drop if exists partition (`ds` = 'a\\'b')"
    )


def test_side_tables_are_registered_by_properties():
    props = render("side_table_properties", "backup", "Tracking", "Event", 1700000000000)
    assert props == {
        "lakehouse.side_table": "backup",
        "lakehouse.side_table.of": "tracking.event",
        "lakehouse.side_table.created_at": "1700000000000",
        "lakehouse.side_table.invocation_id": "00000000-0000-0000-0000-000000000000",
    }
    assert squash(render("register_side_table_sql", "db", "t_backup_1", {"b": "x'y", "a": "1"})) == (
        "alter table `db`.`t_backup_1` set tblproperties ('a' = '1', 'b' = 'x\\'y')"
    )
    assert render("tblproperties_sql", {}) == ""
    with pytest.raises(Exception, match='kind "scratch" is not one of staging, backup, trash'):
        render("side_table_properties", "scratch", "db", "t", 1)
