"""The product's entry points for macros: one small group of typed `@available` methods per
capability, each a thin call into that capability's public module of `python_hooks`.

This is the only place where Jinja reaches the product's Python (`adapter.<method>(...)`, each
named literally, so grep finds every caller).  A method takes plain values, passes the session
first, and returns what the capability returns; errors are raised (python_hooks.errors)
and reach dbt as the runtime error of the node or operation.  The capability modules are imported
when first called, so that loading the adapter costs nothing for commands that never call them.
During parsing (`execute` false) the methods return None (or an empty list) without starting Spark.

The dependency runs one way, from the adapter to python_hooks: what only the adapter knows (the
product's version, where its run lock leaves the records of refused runs) is computed here and
passed down as arguments (tests/unit/test_layering.py).
"""

from __future__ import annotations

import os
from pathlib import Path
from typing import TYPE_CHECKING, Any

from dbt.adapters.base import available
from dbt.adapters.base.meta import AdapterMeta
from dbt.adapters.lakehouse import run_lock
from dbt.adapters.lakehouse.__version__ import version as product_version

if TYPE_CHECKING:  # the types only; the modules are imported when first called
    from python_hooks.purge.plan import PurgePlan, ScannedPlan


def _empty_list(*args: Any, **kwargs: Any) -> list[Any]:
    return []


class _Session(metaclass=AdapterMeta):
    """What each group below takes from LakehouseAdapter: its session and its cancellation."""

    cancellation: Any  # LakehouseAdapter's (cancellation.py)

    def spark_session(self) -> Any:  # pragma: no cover - LakehouseAdapter defines it
        raise NotImplementedError


class _CatalogAndPurge(_Session):
    """The catalog, the purge engine, onboarding and the command's selection."""

    # ---- the catalog ---------------------------------------------------------------------------
    @available.parse(_empty_list)
    def catalog_databases(self) -> list[str]:
        """Every database of the metastore, lower case, sorted."""
        from python_hooks.catalog import tables

        return tables.list_databases(self.spark_session())

    @available.parse(_empty_list)
    def catalog_tables(self, database: str) -> list[str]:
        """The tables (not temporary views) of `database`, lower case, sorted; [] when it is missing."""
        from python_hooks.catalog import tables

        return tables.list_tables(self.spark_session(), database)

    @available.parse_none
    def describe_table(self, database: str, table: str) -> dict[str, Any]:
        """{exists, database, table, table_type, provider, location, partition_columns,
        data_columns, columns: {name: type}, properties} from the metastore only."""
        from python_hooks.catalog import tables

        return tables.describe_table(self.spark_session(), database, table)

    @available.parse(_empty_list)
    def side_table_adoption_candidates(self, databases: list[str] | None = None) -> list[dict[str, Any]]:
        """Unregistered tables named like side tables, with whether each can be adopted and why."""
        from python_hooks.catalog import side_tables

        return side_tables.adoption_candidates(self.spark_session(), databases)

    # ---- the purge engine: plan -> render -> execute (docs/architecture.md) ---------------------
    @available.parse_none
    def purge_plan(self, config: dict[str, Any]) -> PurgePlan:
        """The node's typed plan (python_hooks/purge/planning.py): the journal completed into
        purge_log first, then the id table, the selected tables, their identifiers, partitions
        and locations, and what their files' footers rule out."""
        from python_hooks.purge import planning

        self.cancellation.check("the purge was not started")
        return planning.plan_purge(self.spark_session(), config)

    @available.parse_none
    def purge_scan(self, plan: PurgePlan, scans: dict[str, Any]) -> ScannedPlan:
        """A new plan with the partitions holding listed ids, from the scans the macros rendered
        (`plan` is left as it was): the Hive tables' (scanning.py), then the Delta Lake tables'
        (delta.py)."""
        from python_hooks.purge import delta, scanning

        scanned = scanning.run_scans(self.spark_session(), plan, scans, self.cancellation)
        return delta.run_scans(self.spark_session(), scanned, scans, self.cancellation)

    @available.parse_none
    def purge_execute(
        self,
        plan: ScannedPlan,
        statements: dict[str, dict[str, Any]],
        relation: Any,
        delta_statements: dict[str, dict[str, Any]] | None = None,
    ) -> dict[str, Any]:
        """The statements `purge_render_table` rendered (checked into TableStatements: a missing
        or extra key is refused), run table by table, then the Delta Lake tables' (checked as
        well); the records written; the summary."""
        from python_hooks.purge import delta, execution
        from python_hooks.purge.statements import TableStatements

        typed = {name: TableStatements.of(rendered, name) for name, rendered in statements.items()}
        deltas = {
            name: delta.statements_of(rendered, name) for name, rendered in (delta_statements or {}).items()
        }
        return execution.execute(
            self.spark_session(),
            plan,
            typed,
            self.cancellation,
            [relation.schema, relation.identifier],
            deltas,
        )

    @available
    def id_table_name(self, text: str) -> list[str] | None:
        """[database, table] of var compliance_id_table, or None when it does not name one as
        `db.table` (python_hooks/purge/id_table.py: the one parse of the name)."""
        from python_hooks.purge.id_table import table_name_parts

        parts = table_name_parts(text)
        return list(parts) if parts else None

    @available.parse_none
    def purge_id_source(self, id_table: str, id_column: str) -> dict[str, Any]:
        """The checked id table: {database, table, column, type, name}."""
        from python_hooks.purge.id_table import id_source_of

        return id_source_of(self.spark_session(), id_table, id_column)

    @available.parse_none
    def purge_resolve_identifier(self, database: str, table: str, ids: dict[str, Any]) -> dict[str, Any]:
        """A table's identifier as the purge reads it: {field, path, type}, or {error}."""
        from python_hooks.purge import planning

        return planning.identifier_of(self.spark_session(), database, table, ids)

    # ---- onboarding ----------------------------------------------------------------------------
    @available.parse(_empty_list)
    def onboard_read_list(self, path: str) -> list[dict[str, Any]]:
        """The entries ({table, identifier}) of a yml or csv onboarding list; ConfigError otherwise."""
        from python_hooks.purge import onboarding

        return onboarding.read_list(self.spark_session(), path)

    @available.parse(_empty_list)
    def onboard_plan(
        self, entries: list[dict[str, Any]], id_table: str | None = None, id_column: str | None = None
    ) -> list[dict[str, Any]]:
        """Each entry checked against the metastore (and the id column's type, when the id table
        exists): {entry, table, field, type, status, ...}."""
        from python_hooks.purge import onboarding

        return onboarding.plan(self.spark_session(), entries, id_table, id_column)

    @available.parse_none
    def onboard_apply(self, rows: list[dict[str, Any]]) -> dict[str, Any]:
        """The planned descriptors written: {written: [table], failed: {table: error}}."""
        from python_hooks.purge import onboarding

        return onboarding.apply(self.spark_session(), rows)

    # ---- the command's selection: destructive nodes act only when named ---------------------------
    @available.parse_none
    def command_selection(
        self,
        node_id: str,
        args: dict[str, Any],
        selected: list[str],
        graph_nodes: list[dict[str, Any]],
        root_project: str,
        command: str,
    ) -> dict[str, Any]:
        """Whether this command's own selection names the node (python_hooks/purge/command_selection.py):
        {named, reason, command}; `graph_nodes`: the compliance job's nodes from dbt's `graph`."""
        from python_hooks.purge import command_selection

        job = [command_selection.JobNode.from_graph(node, root_project) for node in graph_nodes]
        decision = command_selection.decide(node_id, args or {}, selected or [], job, command)
        return {"named": decision.named, "reason": decision.reason, "command": decision.command}


class _Lifecycle(_Session):
    """Retention, restore and compaction."""

    # ---- retention -----------------------------------------------------------------------------
    @available.parse(_empty_list)
    def retention_base_tables(self, stale_relation: list[str] | None = None) -> list[list[str]]:
        """[database, table] of every table retention may clean around."""
        from python_hooks.retention import engine

        return engine.base_tables(self.spark_session(), stale_relation)

    @available.parse(_empty_list)
    def retention_validate_policies(
        self,
        rows: list[dict[str, Any]],
        defaults: dict[str, Any],
        min_hours: Any,
        allow_short: Any,
        scope: Any = "",
        tables: list[list[str]] | None = None,
    ) -> list[str]:
        """Every retention var and seed row checked (ConfigError naming each bad one); the warnings:
        patterns of the rows or of retention_scope that match none of `tables` (the pass's, from
        retention_base_tables), with the nearest names."""
        from python_hooks.retention import policy

        return policy.validate_policies(
            self.spark_session(), rows, defaults, min_hours, allow_short, scope, tables
        )

    @available.parse_none
    def retention_run(
        self,
        invocation_id: str,
        policies: dict[str, dict[str, Any]],
        defaults: dict[str, Any],
        dry_run: bool,
        now: Any,
        stale_relation: list[str],
        view_name: str,
        progress_seconds: Any = 10,
        allow_future: Any = False,
        allow_short: Any = False,
    ) -> dict[str, Any]:
        """One retention pass: deletes (or lists) what is past its policy, never anything live;
        tells its progress every `progress_seconds`; `now` (var retention_now) in the future is
        refused unless `allow_future`; Delta's own check of a short VACUUM horizon is overridden
        only with `allow_short` (var retention_allow_short)."""
        from python_hooks.retention import engine

        return engine.run_retention(
            self.spark_session(),
            invocation_id,
            policies,
            defaults,
            dry_run,
            now,
            stale_relation,
            view_name,
            progress_seconds,
            allow_future,
            allow_short,
        )

    @available.parse_none
    def retention_raise_failures(self, invocation_id: str, rows: list[dict[str, Any]]) -> None:
        """retention_log's post-hook: a StatementError naming the failed attempts of this pass."""
        from python_hooks.retention import attempts

        attempts.raise_failures(invocation_id, rows)

    @available
    def raise_config_error(self, message: str) -> None:
        """A var or argument a macro checked is not usable: raised as ConfigError, a runtime error
        of the node or operation (never a compilation error), with the macro's message."""
        from python_hooks.errors import ConfigError

        raise ConfigError(message)

    # ---- restore -------------------------------------------------------------------------------
    @available.parse_none
    def restore_plan(
        self,
        table: str,
        partition: str | None,
        backup: str | None,
        now: Any,
        allow_future: Any = False,
        version: Any = None,
    ) -> dict[str, Any]:
        """Every check of a restore, before the first change: the locations and names it uses
        (`now`: var retention_now, refused in the future unless `allow_future`); a Delta Lake
        table's plan is its version (`format` `delta`)."""
        from python_hooks.restore import plan

        return plan.plan_restore(self.spark_session(), table, partition, backup, now, allow_future, version)

    # ---- compaction ----------------------------------------------------------------------------
    @available.parse_none
    def compaction_write_plan(self, database: str, table: str, sql: str) -> dict[str, Any]:
        """The hourly plan's rows (from `sql`) written as one parquet file of `database.table`."""
        from python_hooks.compaction import plan

        return plan.write_plan(self.spark_session(), database, table, sql)

    @available.parse(_empty_list)
    def compaction_read_plan(self, database: str, table: str) -> list[dict[str, Any]]:
        """The hourly plan's rows, as the pre-hook wrote them."""
        from python_hooks.compaction import records

        return records.read_plan(self.spark_session(), database, table)

    @available.parse_none
    def compaction_record_completion(
        self,
        plan: list[dict[str, Any]],
        output: list[str],
        watermarks: list[str],
        log: list[str],
        late_counts_sql: str | None = None,
    ) -> dict[str, Any]:
        """The hours published: watermarks and the compaction log appended."""
        from python_hooks.compaction import records

        return records.record_completion(self.spark_session(), plan, output, watermarks, log, late_counts_sql)

    @available.parse_none
    def session_conf_apply(self, settings: dict[str, Any] | None) -> dict[str, str]:
        """A model's `session_conf` set for its statement; the session's values kept to put back."""
        from python_hooks.compaction import session_settings

        return session_settings.apply(self.spark_session(), settings)

    @available.parse_none
    def session_conf_restore(self) -> dict[str, str | None]:
        """The settings `session_conf_apply` changed, put back as the session had them."""
        from python_hooks.compaction import session_settings

        return session_settings.restore(self.spark_session())


class _Evidence(_Session):
    """Erasure evidence, coverage and the audit."""

    # ---- erasure evidence ----------------------------------------------------------------------
    @available.parse_none
    def erasure_verify(
        self,
        invocation_id: str,
        trigger: str,
        request_ids: list[str],
        ids_sql: str,
        id_type: str,
        scope: list[dict[str, Any]],
        backup_dirs: list[str],
        stale_relation: list[str],
        target_schema: str,
        view_name: str | None = None,
    ) -> dict[str, Any]:
        """Reads the bytes of every onboarded table and every copy for the requests, records the run
        (the per-request rows in temporary view `view_name` when given, for the model to append)."""
        from python_hooks.erasure import verification

        return verification.verify(
            self.spark_session(), invocation_id, trigger, request_ids, ids_sql, id_type, scope, backup_dirs,
            stale_relation, target_schema, product_version, view_name,
        )  # fmt: skip

    @available.parse(_empty_list)
    def erasure_warehouse_changes(self, scope: list[dict[str, Any]]) -> list[dict[str, Any]]:
        """The purges and restores the metastore and the purge journal show, with their times."""
        from python_hooks.erasure import locations

        return locations.warehouse_changes(self.spark_session(), scope)

    @available.parse_none
    def erasure_write_certificate(
        self,
        target_schema: str,
        request: dict[str, Any],
        verified: dict[str, Any] | None,
        run: dict[str, Any] | None,
        locations: list[dict[str, Any]],
        runs: list[dict[str, Any]],
        copies: list[dict[str, Any]],
        selection: dict[str, Any],
        generated_by: dict[str, Any],
        target_path: str | None,
        project_dir: str | None,
    ) -> dict[str, Any]:
        """The request's certificate under `<target>/erasure/`, or a status report saying why not."""
        from python_hooks.erasure import certificate

        return certificate.write(
            self.spark_session(), target_schema, request, verified, run, locations, runs, copies, selection,
            generated_by, target_path, project_dir, product_version,
        )  # fmt: skip

    @available.parse_none
    def erasure_check_certificate(
        self, target_schema: str, path: str, project_dir: str | None
    ) -> dict[str, Any]:
        """A certificate's evidence digest recomputed from the tables, part by part."""
        from python_hooks.erasure import certificate

        return certificate.check(self.spark_session(), target_schema, path, project_dir)

    @available.parse(_empty_list)
    def coverage_describe_tables(self, tables: list[Any]) -> list[dict[str, Any]]:
        """The tables' columns, field paths and onboarding, for the coverage check."""
        from python_hooks.erasure import coverage

        return coverage.describe_tables(self.spark_session(), tables)

    @available.parse_none
    def coverage_match_columns(
        self, tables: list[dict[str, Any]], names: list[str], patterns: Any
    ) -> dict[str, list[str]]:
        """{table: [fields]} of the fields named like an identifier in use or a PII pattern."""
        from python_hooks.erasure import coverage

        return coverage.match_columns(self.spark_session(), tables, names, patterns)

    @available.parse_none
    def coverage_downstream_tables(
        self,
        edges_relation: str,
        nodes_relation: str,
        onboarded: list[str],
        exempt_tags: list[str],
        manifest_nodes: list[dict[str, Any]] | None = None,
    ) -> dict[str, Any]:
        """The tables downstream of an onboarded one, from the audit's lineage tables and this
        command's manifest (its models judged before they are built)."""
        from python_hooks.erasure import coverage

        return coverage.downstream_tables(
            self.spark_session(), edges_relation, nodes_relation, onboarded, exempt_tags, manifest_nodes
        )

    # ---- audit ---------------------------------------------------------------------------------
    @available.parse_none
    def audit_load_pending(
        self,
        invocation_id: str,
        target_schema: str,
        target_path: str | None,
        project_dir: str | None,
        invocation_args: Any = None,
        target_name: str | None = None,
    ) -> dict[str, Any]:
        """on-run-start: loads what earlier commands of this warehouse could not (a command killed
        before its on-run-end is recorded `interrupted`), and marks this one running; a report,
        never an error."""
        from python_hooks.audit import artifacts

        spark = self.spark_session()
        return artifacts.load_pending(
            spark,
            invocation_id=invocation_id,
            target_schema=target_schema,
            target_path=target_path,
            project_dir=project_dir,
            invocation_args=invocation_args,
            target_name=target_name,
            refusal_dirs=_refusal_dirs(spark),
        )

    @available.parse_none
    def audit_load_run(
        self,
        results: Any,
        invocation_id: str,
        invocation_args: Any,
        target_name: str | None,
        target_schema: str,
        dbt_version: str | None,
        project_name: str | None,
        run_started_at: Any,
        target_path: str | None,
        project_dir: str | None,
        write_graph: bool,
        write_openlineage: bool,
        graph_tests: bool = False,
    ) -> dict[str, Any]:
        """on-run-end: this invocation's results, lineage and graph (status `cancelled` when it was
        cancelled); a report, never an error."""
        from python_hooks.audit import artifacts

        return artifacts.load_run(
            self.spark_session(),
            results=results,
            invocation_id=invocation_id,
            invocation_args=invocation_args,
            target_name=target_name,
            target_schema=target_schema,
            dbt_version=dbt_version,
            project_name=project_name,
            run_started_at=run_started_at,
            target_path=target_path,
            project_dir=project_dir,
            write_graph=write_graph,
            write_openlineage=write_openlineage,
            status="cancelled" if self.cancellation.requested else None,
            graph_tests=graph_tests,
        )


class ComplianceMethods(_CatalogAndPurge, _Lifecycle, _Evidence):
    """Mixed into LakehouseAdapter; `spark_session()` is the adapter's.  The groups above keep
    each under 250 lines; dbt's AdapterMeta collects every group's `@available` methods."""


def _refusal_dirs(spark: Any) -> list[str]:
    """Where the run lock left the records of runs it refused on this session's warehouse (local,
    or on HDFS or an object store): the audit loads them, but only the adapter knows its lock."""
    conf = spark.conf
    return run_lock.refusal_dirs(
        conf.get("spark.sql.warehouse.dir", None),
        conf.get("spark.hadoop.javax.jdo.option.ConnectionURL", None),
    )


def record_connected(settings: Any, target_schema: str | None, target_name: str | None = None) -> str | None:
    """Leave this command's run record in the target directory, naming the warehouse it runs on
    (python_hooks/audit/pending.py): the audit adopts a run_results.json only from a command of
    its own warehouse, whether the command has hooks or not.  `settings`: the running session
    (its warehouse is the truth), or the profile's Spark settings before a session starts.  Best
    effort; returns the invocation id recorded."""
    try:
        import dbt.flags
        from dbt_common.invocation import get_invocation_id

        from python_hooks.audit import pending

        flags = dbt.flags.get_flags()
        invocation_id = get_invocation_id()
        target = Path(getattr(flags, "PROJECT_DIR", None) or os.getcwd()) / (
            getattr(flags, "TARGET_PATH", None) or "target"
        )
        if settings is None or not invocation_id:
            return None
        if isinstance(settings, dict):
            warehouse = pending.warehouse_identity(settings)
        else:
            warehouse = pending.warehouse_of(settings)
        record = pending.run_record(target, invocation_id)
        if record is None or record.get("warehouse") != warehouse:
            fields = {"target_schema": target_schema, "target_name": target_name}
            pending.record_run(target, invocation_id, warehouse, "connected", **fields)
        return str(invocation_id)
    except Exception:  # noqa: BLE001 - the audit says less, the command goes on
        return None
