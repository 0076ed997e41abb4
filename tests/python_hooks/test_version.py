"""One version everywhere: the adapter plugin's __version__.py is the source, and the distribution
(pyproject.toml reads it), the dbt package (dbt_project.yml must hold a literal) and the erasure
certificate (the adapter's entry points pass it down) agree with it."""

from __future__ import annotations

import re

import yaml
from dbt.adapters.lakehouse.__version__ import version

from python_hooks.erasure import certificate
from tests.conftest import REPO


def test_the_version_is_a_release_number():
    assert re.fullmatch(r"\d+\.\d+\.\d+", version), version


def test_the_distribution_reads_the_adapters_version():
    from setuptools.config.pyprojecttoml import read_configuration

    raw = read_configuration(REPO / "pyproject.toml", expand=False)
    assert "version" not in raw["project"] and "version" in raw["project"]["dynamic"]
    assert raw["tool"]["setuptools"]["dynamic"]["version"] == {
        "attr": "dbt.adapters.lakehouse.__version__.version"
    }

    assert read_configuration(REPO / "pyproject.toml", expand=True)["project"]["version"] == version


def test_the_dbt_package_holds_the_same_literal():
    assert str(yaml.safe_load((REPO / "dbt_project.yml").read_text())["version"]) == version


class _Adapter:
    """What the entry points take from LakehouseAdapter, without a session."""

    cancellation = None

    def spark_session(self):
        return None


def test_the_certificate_names_the_same_version(monkeypatch):
    # python_hooks never imports the adapter: the entry points pass the adapter's version down,
    # to the certificate and to the verification run's row
    from dbt.adapters.lakehouse.compliance import ComplianceMethods

    from python_hooks.erasure import verification

    passed = {}
    monkeypatch.setattr(certificate, "write", lambda *args: passed.setdefault("write", args))
    monkeypatch.setattr(verification, "verify", lambda *args: passed.setdefault("verify", args))
    ComplianceMethods.erasure_write_certificate(
        _Adapter(), "s", {}, None, None, [], [], [], {}, {}, None, str(REPO)
    )
    ComplianceMethods.erasure_verify(_Adapter(), "i", "manual", [], "", "string", [], [], [], "s")
    assert passed["write"][-1] == passed["verify"][-2] == version
    identity = certificate.product_identity("compliance", str(REPO), passed["write"][-1])
    assert identity["version"] == identity["package_version"] == version


def test_the_changelog_s_newest_entry_is_this_version():
    """CHANGELOG.md's first `## <version>` heading is the version a user installs; an `Unreleased`
    section may come first, for what the next version will bring."""
    headings = re.findall(r"^## (\S+)", (REPO / "CHANGELOG.md").read_text(), re.MULTILINE)
    released = headings[1:] if headings[:1] == ["Unreleased"] else headings
    assert released and released[0] == version, (headings[:2], version)
    assert "Unreleased" not in released, "only the first section may be Unreleased"
    assert len(set(headings)) == len(headings), headings
