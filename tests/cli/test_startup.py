"""The command line starts fast: ``--version`` and ``--help`` (of the group and of
each command) load the package and click, not the recorder, the server, the app's
replay, a store's driver, werkzeug or an XML parser. Told by the modules a fresh
process holds, not by a clock.
"""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]

# What only a command's own work needs.
HEAVY = (
    "sitemap_middleware.core",
    "sitemap_middleware.recording",
    "sitemap_middleware.watching",
    "sitemap_middleware.serving.server",
    "sitemap_middleware.stores.sqlite",
    "sitemap_middleware.cli.replay",
    "sitemap_middleware.cli.sources",
    "sitemap_middleware.cli.verdict",
    "sitemap_middleware.cli.held",
    "werkzeug",
    "sqlite3",
    "xml",
    "pyexpat",
    "asyncio",
    "urllib.request",
)

PROBE = """
import json, sys
from sitemap_middleware.cli import main
try:
    main(sys.argv[1:], prog_name="sitemap-middleware")
except SystemExit as exc:
    assert not exc.code, exc.code
print(json.dumps(sorted(sys.modules)))
"""


def _loaded(*args: str) -> list[str]:
    done = subprocess.run(
        [sys.executable, "-c", PROBE, *args],
        cwd=ROOT,
        env={"PYTHONPATH": str(ROOT), "PATH": ""},
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert done.returncode == 0, done.stderr
    modules: list[str] = json.loads(done.stdout.splitlines()[-1])
    return modules


@pytest.mark.parametrize(
    "args",
    [
        ("--version",),
        ("--help",),
        ("verify", "--help"),
        ("import", "--help"),
        ("export", "--help"),
    ],
)
def test_version_and_help_load_nothing_heavy(args: tuple[str, ...]) -> None:
    loaded = _loaded(*args)
    heavy = [m for m in loaded if m.startswith(HEAVY)]
    assert heavy == []
