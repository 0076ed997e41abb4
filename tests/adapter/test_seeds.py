"""dbt-tests-adapter's seed tests on the lakehouse adapter: values, delimiters, formats, types.

The expected table of the `simple_seed` classes is written for Postgres (TEXT, TIMESTAMP WITHOUT
TIME ZONE, double-quoted names, two statements); it is created here in Spark SQL from the same
text.  The seeds load through the session cursor's literal binding, so every cell of the 500-row
seed, its NULL included, compares equal to that table.
"""

from __future__ import annotations

from pathlib import Path

import pytest
from dbt.tests.adapter.simple_seed import fixtures, seeds, test_seed
from dbt.tests.adapter.simple_seed.test_seed import (
    BaseBasicSeedTests,
    BaseSeedConfigFullRefreshOff,
    BaseSeedConfigFullRefreshOn,
    BaseSeedCustomSchema,
    BaseSeedParsing,
    BaseSeedSpecificFormats,
    BaseSeedWithEmptyDelimiter,
    BaseSeedWithUniqueDelimiter,
    BaseSeedWithWrongDelimiter,
    BaseSimpleSeedEnabledViaConfig,
    BaseSimpleSeedWithBOM,
    BaseTestEmptySeed,
)
from dbt.tests.adapter.simple_seed.test_seed_type_override import BaseSimpleSeedColumnOverride
from dbt.tests.util import copy_file, read_file, rm_dir, run_dbt


def create_seed_expected(project) -> None:
    """dbt-tests-adapter's `seed_expected` table in Spark SQL: its rows (the Postgres insert's
    VALUES) selected with Spark's types, in one statement (a Spark statement is one statement)."""
    values = seeds.seeds__expected_sql.split("VALUES", 1)[1].strip().rstrip(";")
    project.run_sql(
        "create table {schema}.seed_expected as"
        " select cast(seed_id as int) as seed_id, first_name, email, ip_address,"
        " cast(birthday as timestamp) as birthday"
        f" from values {values} as rows (seed_id, first_name, email, ip_address, birthday)"
    )


class SparkExpectedTable:
    @pytest.fixture(scope="class", autouse=True)
    def setUp(self, project):
        create_seed_expected(project)


class TestEmptySeed(BaseTestEmptySeed):
    pass


# dbt drops a seed it reloads in full with `drop table ... cascade` where the database has it; a
# Spark table has no dependent objects to drop: the view over it stays (and reads the new seed).
NO_CASCADE = "Spark's drop table does not cascade to the views over the table: the downstream view stays"


class TestBasicSeedTests(SparkExpectedTable, BaseBasicSeedTests):
    @pytest.mark.skip(reason=NO_CASCADE)
    def test_simple_seed_full_refresh_flag(self, project):
        pass


@pytest.mark.skip(reason=NO_CASCADE)
class TestSeedConfigFullRefreshOn(SparkExpectedTable, BaseSeedConfigFullRefreshOn):
    pass


class TestSeedConfigFullRefreshOff(SparkExpectedTable, BaseSeedConfigFullRefreshOff):
    pass


class TestSeedCustomSchema(SparkExpectedTable, BaseSeedCustomSchema):
    pass


class TestSeedWithUniqueDelimiter(SparkExpectedTable, BaseSeedWithUniqueDelimiter):
    pass


class TestSeedWithWrongDelimiter(SparkExpectedTable, BaseSeedWithWrongDelimiter):
    pass


class TestSeedWithEmptyDelimiter(SparkExpectedTable, BaseSeedWithEmptyDelimiter):
    pass


class TestSimpleSeedEnabledViaConfig(BaseSimpleSeedEnabledViaConfig):
    pass


class TestSeedParsing(SparkExpectedTable, BaseSeedParsing):
    pass


class TestSimpleSeedWithBOM(BaseSimpleSeedWithBOM):
    @pytest.fixture(scope="class", autouse=True)
    def setUp(self, project):
        create_seed_expected(project)
        # the BOM file ships beside dbt-tests-adapter's test module
        copy_file(
            Path(test_seed.__file__).parent,
            "seed_bom.csv",
            project.project_root / Path("seeds") / "seed_bom.csv",
            "",
        )


class TestSeedSpecificFormats(BaseSeedSpecificFormats):
    # no `seed.with.dots`: the Hive metastore refuses a dot in a table's name
    @pytest.fixture(scope="class")
    def seeds(self, test_data_dir):
        big_seed = read_file(self._make_big_seed(test_data_dir))
        yield {"big_seed.csv": big_seed, "seed_unicode.csv": seeds.seed__unicode_csv}
        rm_dir(test_data_dir)

    def test_simple_seed(self, project):
        results = run_dbt(["seed"])
        assert sorted(r.node.name for r in results if r.status == "success") == ["big_seed", "seed_unicode"]
        count, total = project.run_sql(
            f"select count(*), sum(seed_id) from {project.test_schema}.big_seed", fetch="one"
        )
        assert (count, total) == (20000, sum(range(20000)))
        unicode = project.run_sql(f"select seed_id from {project.test_schema}.seed_unicode", fetch="all")
        assert [row[0] for row in unicode] == ["Uh – Oh"]


# Spark's names for the types the seeds ask for and the types a test reads back: string for
# text, bigint for an integer a seed infers, timestamp for a timestamp without a time zone.
def _spark_types(text: str) -> str:
    return (
        text.replace("timestamp without time zone", "timestamp").replace("type: text", "type: string")
    ).replace("type: integer", "type: bigint")


class TestSimpleSeedColumnOverride(BaseSimpleSeedColumnOverride):
    @pytest.fixture(scope="class")
    def models(self):
        return {"schema.yml": _spark_types(fixtures.properties__schema_yml)}

    @staticmethod
    def seed_enabled_types():
        return {"seed_id": "string", "birthday": "date"}

    @staticmethod
    def seed_tricky_types():
        return {"seed_id_str": "string", "looks_like_a_bool": "string", "looks_like_a_date": "string"}
