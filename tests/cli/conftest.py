"""Fixtures of the command line's tests: an example app on each stack, and a SQLite
store's URI (a module that wants it filled overrides ``uri`` and fills it)."""

from __future__ import annotations

from pathlib import Path

import pytest


@pytest.fixture(params=["flask_app", "fastapi_app"])
def example(request: pytest.FixtureRequest) -> str:
    """The module of an example app, on each stack."""
    name: str = request.param
    return name


@pytest.fixture
def uri(tmp_path: Path) -> str:
    return f"sqlite:///{tmp_path / 'site.sqlite3'}"
