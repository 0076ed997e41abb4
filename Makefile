# Two commands do everything on a fresh machine: `make demo` and `make test`.
SHELL := /bin/bash
.SHELLFLAGS := -eu -o pipefail -c
.DEFAULT_GOAL := help

PYTHON ?= python3
VENV := .venv
BIN := $(CURDIR)/$(VENV)/bin
SUDO := $(shell [ "$$(id -u)" = 0 ] || echo sudo)

export DBT_PROFILES_DIR := $(CURDIR)
ifneq ($(DBT_TARGET),cluster)
export SPARK_WAREHOUSE_DIR ?= $(CURDIR)/.warehouse/warehouse
export SPARK_METASTORE_DIR ?= $(CURDIR)/.warehouse/metastore_db
endif
export DBT_SEND_ANONYMOUS_USAGE_STATS := false
# Delta Lake in every session of `make` (the adapter adds its jars, extension and catalog:
# docs/formats.md); `make setup` resolves the jars
export LAKEHOUSE_DELTA_JARS ?= $(CURDIR)/.jars/formats
export PYTHONPATH := $(CURDIR)

.PHONY: help setup java graphviz chromium formats-jars demo test test-faults test-kills test-long test-adapter test-property test-mutations lint unit \
	functional dbt-build \
	graph reference bench benchmarks-page clean \
	cluster-up cluster-down test-cluster test-cluster-smoke \
	jars hdfs-up hdfs-down s3-up s3-down test-hdfs test-s3 test-storage-smoke

help:
	@echo "make demo   - set up, build the demo warehouse and run the main job on it"
	@echo "make test   - set up, lint (sqlfluff, ruff), pytest, dbt build on a throwaway warehouse"
	@echo "make test-kills - one kill case per capability (purge, retention, restore, compaction, audit, erasure)"
	@echo "make test-long - the tests that start processes of their own: kill subset, host project, audit (long)"
	@echo "make test-faults - the crash-safety matrix: kill dbt at every step, check the warehouse (long)"
	@echo "make test-adapter - the adapter conformance suite (dbt-tests-adapter's classes on a lakehouse profile)"
	@echo "make test-property - retention and the erasure ledger over many random histories (long)"
	@echo "make test-mutations - deliberate bugs in a copy of the repo: the tests must catch each (long)"
	@echo "make graph  - draw the workflow graph into target/ (dot and svg)"
	@echo "make reference - regenerate docs/reference/ (vars, operations, tables, statuses, errors) from the code"
	@echo "make bench  - run the benchmarks in bench/ (each writes its record in bench/results/)"
	@echo "make benchmarks-page - put bench/results/*.json into docs/benchmarks.md and the README"
	@echo "make cluster-up / cluster-down - a loopback Spark standalone cluster + Hive metastore (PostgreSQL)"
	@echo "make test-cluster - the purge, retention, compaction and audit suites and the reader test on it"
	@echo "make hdfs-up / hdfs-down - a loopback HDFS (NameNode + DataNode); prints the export lines"
	@echo "make s3-up / s3-down - a loopback S3-compatible object store; prints the export lines"
	@echo "make test-hdfs / test-s3 - the functional suites with the warehouse on HDFS / on S3 (s3a://)"
	@echo "make test-storage-smoke - what CI runs on HDFS and S3 at once: tests/functional/storage and the concurrent writer on each"

# ---- setup ---------------------------------------------------------------------------------
$(VENV)/.installed: requirements.txt constraints.txt pyproject.toml
	@test -x $(BIN)/python || $(PYTHON) -m venv $(VENV)
	$(BIN)/python -m pip install --quiet --upgrade pip
	$(BIN)/python -m pip install --quiet -r requirements.txt -c constraints.txt
	@# editable, so an edit of the adapter or of python_hooks takes effect at once; the
	@# host-project test installs the distribution as a user does
	$(BIN)/python -m pip install --quiet --no-deps --force-reinstall -e .
	rm -rf build
	@touch $@

java:
	@command -v java >/dev/null 2>&1 || { \
	  echo "java is missing: installing Debian's openjdk-17-jre-headless"; \
	  $(SUDO) apt-get update -qq && $(SUDO) env DEBIAN_FRONTEND=noninteractive apt-get install -y -qq openjdk-17-jre-headless >/dev/null; }
	@java -version 2>&1 | head -1 >&2

# graphviz's `dot` draws the workflow graph as SVG; without it only the .dot file is written.
graphviz:
	@command -v dot >/dev/null 2>&1 || { \
	  echo "graphviz is missing: installing Debian's graphviz"; \
	  { $(SUDO) apt-get update -qq && $(SUDO) env DEBIAN_FRONTEND=noninteractive apt-get install -y -qq graphviz >/dev/null; } \
	  || echo "could not install graphviz: workflow graphs will be written as .dot only"; }

# Debian's chromium renders the generated docs site in the host-project test
# (tests/functional/adopt/docs_site.py), as a user's browser does: `make test-long` installs it,
# nothing else needs it.
chromium:
	@command -v chromium >/dev/null 2>&1 || command -v chromium-browser >/dev/null 2>&1 || { \
	  echo "chromium is missing: installing Debian's chromium"; \
	  $(SUDO) apt-get update -qq && $(SUDO) env DEBIAN_FRONTEND=noninteractive apt-get install -y -qq chromium >/dev/null; }

# Delta Lake's jars from Maven Central (jvm/pom.xml, profile formats) into .jars/formats/
formats-jars:
	@scripts/storage/jars.sh formats

# what `make demo` and `make test` need: the virtualenv, Java, graphviz, the formats' jars
setup: $(VENV)/.installed java graphviz formats-jars

# ---- the main job on the embedded default ----------------------------------------------------
# The demo is its own dbt project (demo/) that installs the product as a local package.
# DBT_TARGET=cluster: the cluster named by HIVE_METASTORE_URIS, SPARK_MASTER_URL and
# SPARK_WAREHOUSE_DIR, or, when they are unset, the one `make cluster-up` started (.cluster/env).
CLUSTER_ENV = [ "$${DBT_TARGET:-local}" != cluster ] || [ -n "$${HIVE_METASTORE_URIS:-}" ] \
	|| { [ -f .cluster/env ] && source .cluster/env; } || true;

demo: setup
	$(CLUSTER_ENV) $(BIN)/python scripts/demo.py

# ---- tests ---------------------------------------------------------------------------------
lint: setup
	$(BIN)/sqlfluff lint models macros tests snapshots demo/models demo/macros --dialect sparksql --processes 2 --disable-progress-bar
	$(BIN)/ruff check python_hooks tools tests scripts bench adapter models demo
	$(BIN)/ruff format --check python_hooks tools tests scripts bench adapter models demo

# The kill matrix (tests/faults, docs/safety.md) is marked `faults`, the many random histories of
# the property tests `property`, the tests that start dbt and Spark processes of their own `slow`:
# `make test` runs the property tests' unmarked short subsets and leaves the `slow` ones to
# `make test-long`.  The adapter conformance suite (tests/adapter) runs on its own, and
# tests/functional/storage (every capability on one warehouse) on HDFS and S3 in
# `make test-storage-smoke`, not again on the local disk.
# TEST_WORKERS pytest-xdist processes, each with its own Spark session and Derby metastore; a
# file's tests stay in one process (its fixtures and ordered classes with them).
# The JUnit report (target/junit-unit.xml) is the unmutated run the mutation check starts from in CI.
TEST_WORKERS ?= 2
unit: setup
	$(BIN)/pytest tests -q -m "not faults and not property and not slow" --ignore=tests/adapter \
	  --ignore=tests/functional/storage --ignore=tests/functional/foundation/test_demo_build.py --durations=30 -n $(TEST_WORKERS) --dist loadfile --junitxml=target/junit-unit.xml -o junit_family=xunit2

# The long stories (marked `slow`), each of dbt and Spark processes of its own: one kill point of
# each capability and the SIGINT and SIGKILL purges (tests/faults without the `faults` mark), the
# docs run as written in a user's own project in a fresh venv (tests/functional/adopt), the
# formats guide as written (tests/functional/formats/test_formats_guide.py), two
# warehouses from one project, a refused run, a killed run's lease.  Not in `make test` nor in CI:
# on a slow day they alone took CI's machine past its hour.  Run them before a release and after a
# change to the journal, the audit's run record, the lease, a capability's steps or the docs.
test-long: setup chromium
	$(BIN)/pytest tests -q -m "slow and not faults and not property" --ignore=tests/adapter \
	  --durations=15 -n $(TEST_WORKERS) --dist loadfile

# dbt-tests-adapter's base classes on the `lakehouse` session profile, as dbt adapters test
# themselves (tests/adapter/conftest.py).
test-adapter: setup
	$(BIN)/pytest tests/adapter -q -n $(TEST_WORKERS) --dist loadfile

# Every kill point of tests/faults (the subset included); each case starts 3-5 dbt and Spark processes.
# FAULT_WORKERS pytest-xdist processes, each preparing the lakes of the cases it draws
FAULT_WORKERS ?= 2
test-faults: setup
	$(BIN)/pytest tests/faults -v -n $(FAULT_WORKERS)

# One kill case per capability, on the local disk (`make test-faults` runs every kill point,
# `make test-long` the Ctrl-C cases too): a purge killed while it rewrites, before its swap;
# retention killed at its first delete; a restore killed as it points the partition at its backup;
# a compaction killed in its insert overwrite; an audit load killed before its invocation row; a
# purge killed at its swaps, then the erasure ledger held to the files (every request `pending`;
# the rerun and its verification are `make test-long`'s).
# CI runs KILLS_CI (`make test-kills KILLS_SET=ci`), one on each worker: a purge killed at its
# swaps then the erasure ledger, and retention killed at its first delete (CI's storage smoke also
# kills a purge at its swaps on HDFS).  All six took 11 min of CI's hour, which it no longer had;
# the restore's, the compaction's, the audit's and the purge's rewrite run here and in the longer
# suites.
KILLS_CI := \
	"tests/faults/test_kill_retention.py::test_kill_retention[first_delete]" \
	tests/faults/test_kill_erasure.py::test_a_killed_purge_leaves_every_request_pending
KILLS := \
	"tests/faults/test_kill_purge.py::test_kill_purge[hive_parquet-rewrite]" \
	$(KILLS_CI) \
	"tests/faults/test_kill_restore.py::test_kill_restore[point_partition]" \
	"tests/faults/test_kill_compaction.py::test_kill_compaction[insert_overwrite]" \
	tests/faults/test_kill_audit.py
KILLS_SET ?= all
test-kills: setup
	$(BIN)/pytest $(if $(filter ci,$(KILLS_SET)),$(KILLS_CI),$(KILLS)) -q -n $(FAULT_WORKERS) --dist loadgroup --durations=10

# The property tests on many random histories: retention (200 histories and policies; `make test`
# runs 9 fixed ones; a failure prints hypothesis's seed) and the erasure ledger held to the files
# (PROPERTY_EXAMPLES, default 20), with the interrupted purges of tests/faults/test_kill_erasure.py.
test-property: setup
	RETENTION_PROPERTY_EXAMPLES=200 $(BIN)/pytest tests/functional/retention/test_retention_property.py -v
	$(BIN)/pytest tests/functional/erasure/test_ledger_property.py tests/faults/test_kill_erasure.py -v

# Deliberate bugs (tools/mutations.py), each in a copy of the repository, and the tests that must
# catch it: fails when a mutant is not killed by an assertion of its tests.  Its result table is
# written into docs/safety.md (MUTATION_DOCS= leaves it be).  CI passes MUTATION_ARGS="--baseline-report
# target/junit-unit.xml": the `make test` that just ran is the unmutated run.
MUTATION_ARGS ?=
MUTATION_DOCS ?= --docs docs/safety.md
test-mutations: setup
	$(BIN)/python -m tools.mutations $(MUTATION_DOCS) --markdown target/mutations.md $(MUTATION_ARGS)

# `dbt build` of the demo project (the product installed as a package, and the demo's inputs)
# on a throwaway warehouse, then the project checks (descriptions, tests, no hard-coded tables)
# of both projects over the manifest it wrote (tests/functional/foundation/test_demo_build.py), after
# the suite: beside the suite's two workers, a third JVM on two cores slowed every test.
dbt-build: setup
	$(BIN)/pytest tests/functional/foundation/test_demo_build.py -q -n 0

test: setup lint unit dbt-build

graph: setup
	$(BIN)/python -m python_hooks.audit.workflow_graph

# docs/reference/ from the code (tools/reference.py); `make test` fails when a page is stale
reference: setup
	$(BIN)/python -m tools.reference

bench: setup
	$(BIN)/python bench/run_all.py

# docs/benchmarks.md's and the README's benchmark rows from bench/results/*.json (tools/benchmarks.py);
# `make test` fails when they are stale
benchmarks-page: setup
	$(BIN)/python -m tools.benchmarks

# ---- a real cluster on this machine (scripts/cluster/, state under .cluster/) ----------------------
cluster-up: setup
	scripts/cluster/up.sh

cluster-down:
	scripts/cluster/down.sh

# a cluster of its own (.cluster-test/, other ports), the suites on it, stopped however they end
test-cluster: setup
	scripts/cluster/test.sh

# What CI runs on the cluster (the whole of test-cluster would take CI past the hour): the
# cluster-only tests (the `cluster` target's purge, retention and audit, the lease across
# drivers, the concurrent reader) and the metastore's partition-filter fallback.  The purge
# engine's own tests on the cluster (dry run, journal, cancellation) are `make test-cluster`'s:
# CI's hour went to the kill cases and the mutation check.
test-cluster-smoke: setup
	CLUSTER_TESTS="tests/functional/cluster tests/functional/foundation/test_warehouse_lease.py \
	  tests/functional/foundation/test_partition_filter_fallback.py" \
	  scripts/cluster/test.sh

# ---- other filesystems: a real HDFS and an S3-compatible store on loopback (scripts/storage/) -----
# The JVM jars come from Maven Central as jvm/pom.xml declares them, into the git-ignored .jars/.
jars:
	scripts/storage/jars.sh spark hdfs formats metastore

# `eval "$$(make -s hdfs-up)"` (or s3-up) points the profiles, the tests and the benchmarks at it.
hdfs-up: setup
	@scripts/storage/hdfs.sh up

hdfs-down:
	@scripts/storage/hdfs.sh down

s3-up: setup
	@scripts/storage/s3.sh up

s3-down:
	@scripts/storage/s3.sh down

# an HDFS / object store of its own (other ports, .hdfs-test/ / .s3-test/), the suites on it,
# stopped however they end
test-hdfs: setup
	scripts/storage/test.sh hdfs

test-s3: setup
	scripts/storage/test.sh s3a

# What CI runs on each (tests/functional/storage): a purge interrupted and finished, a restore,
# retention's deletes and the erasure ledger to `erased`, and the commit check against a
# concurrent writer (tests/functional/purge/test_concurrent_writer.py), on HDFS and on S3 at once.
test-storage-smoke: setup
	scripts/storage/smoke.sh

clean:
	rm -rf target logs .warehouse demo/target demo/logs demo/dbt_packages
