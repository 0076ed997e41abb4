"""One version everywhere: the adapter plugin's __version__.py is the source, and the distribution
(pyproject.toml reads it), the dbt package (dbt_project.yml must hold a literal) and the erasure
certificate agree with it."""

from __future__ import annotations

import re
import tomllib

import yaml

from dbt.adapters.lakehouse.__version__ import version
from python_hooks.erasure import certificate
from tests.conftest import REPO


def test_the_version_is_a_release_number():
    assert re.fullmatch(r"\d+\.\d+\.\d+", version), version


def test_the_distribution_reads_the_adapters_version():
    project = tomllib.loads((REPO / "pyproject.toml").read_text())
    assert "version" not in project["project"] and "version" in project["project"]["dynamic"]
    assert project["tool"]["setuptools"]["dynamic"]["version"] == {
        "attr": "dbt.adapters.lakehouse.__version__.version"
    }
    from setuptools.config.pyprojecttoml import read_configuration

    assert read_configuration(REPO / "pyproject.toml", expand=True)["project"]["version"] == version


def test_the_dbt_package_holds_the_same_literal():
    assert str(yaml.safe_load((REPO / "dbt_project.yml").read_text())["version"]) == version


def test_the_certificate_names_the_same_version():
    assert certificate.product_version() == version
    identity = certificate.product_identity("compliance", str(REPO))
    assert identity["version"] == identity["package_version"] == version
