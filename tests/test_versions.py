"""The oldest releases pyproject.toml promises are the ones .ci/run tests: each
lower bound equals the pin in the constraints file of the oldest run.
"""

from __future__ import annotations

from pathlib import Path

import pytest
from packaging.requirements import Requirement
from packaging.version import Version

tomllib = pytest.importorskip("tomllib")  # the standard library from Python 3.11

ROOT = Path(__file__).resolve().parent.parent
# Where pyproject.toml states each bound, and the constraints file that pins it.
PROMISES = {
    "werkzeug": (None, "oldest.txt"),
    "click": (None, "oldest.txt"),
    "flask": ("flask", "oldest.txt"),
    "starlette": ("starlette", "oldest.txt"),
    "fastapi": ("fastapi", "oldest-fastapi.txt"),
    "django": ("django", "oldest.txt"),
}


def _project() -> dict[str, list[str]]:
    """The dependency lists by extra, None for the required ones."""
    project = tomllib.loads((ROOT / "pyproject.toml").read_text())["project"]
    return {None: project["dependencies"], **project["optional-dependencies"]}


def _floor(requirements: list[str], name: str) -> Version:
    (requirement,) = (r for r in map(Requirement, requirements) if r.name == name)
    (floor,) = (s.version for s in requirement.specifier if s.operator == ">=")
    return Version(floor)


def _pins(constraints: str) -> dict[str, Version]:
    pins = {}
    for line in (ROOT / ".ci" / constraints).read_text().splitlines():
        line = line.partition("#")[0].strip()
        if line:
            requirement = Requirement(line)
            (pin,) = requirement.specifier
            assert pin.operator == "==", line
            pins[requirement.name] = Version(pin.version)
    return pins


@pytest.mark.parametrize("name", sorted(PROMISES))
def test_the_promised_floor_is_the_tested_pin(name: str) -> None:
    extra, constraints = PROMISES[name]
    # The first release of the floor, not a later patch of it.
    assert _pins(constraints)[name] == _floor(_project()[extra], name)


def test_no_extra_asks_for_more_than_the_promised_floor() -> None:
    """An extra that asked for a newer framework than the stated floor would
    make the oldest set impossible to install together with it."""
    project = _project()
    floors = {
        name: _floor(project[extra], name) for name, (extra, _) in PROMISES.items()
    }
    for extra, requirements in project.items():
        for requirement in map(Requirement, requirements):
            for spec in requirement.specifier:
                if requirement.name in floors and spec.operator == ">=":
                    assert Version(spec.version) <= floors[requirement.name], extra
