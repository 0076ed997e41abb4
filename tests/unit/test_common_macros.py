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
