"""What starting costs, counted with callgrind: the instructions of three new
interpreters a user meets, this checkout beside another (``--base``) in one run.

import     ``import sitemap_middleware``
flask      a Flask app with the middleware installed (``Sitemap(app)``, a
           ``memory://`` store): flask imported, the app made, no request
starlette  the same for Starlette (``add_sitemap``, then the middleware stack
           built, as a server's first call builds it)

Each figure is the whole interpreter's (Python's own start-up included); the
``share`` column takes away the same script without the middleware (a bare
``python``, the framework's app alone), what the package itself costs. The
target: each whole figure no more than the base's (ratio <= 1.00x).

Run it from the repository root with the project's virtualenv, the base a
worktree of the commit to compare with::

    git worktree add ../base <commit> --detach
    python tests/benchmarks/startup.py --base ../base    # ~1 minute

Each interpreter runs in an empty folder with ``PYTHONPATH`` naming the
checkout, so that the package is the checkout's whatever is installed, once
before it is counted (the bytecode cached, as an app's start-up finds it).
Counts repeat to within about 0.1% (the hash seed is fixed). A measurement, not a
test: the exit status is 0 whatever the figures.
"""

from __future__ import annotations

import argparse
import os
import subprocess
import sys
import tempfile
from pathlib import Path

from callgrind import counted

ROOT = Path(__file__).resolve().parents[2]

# Each case: the set-up without the middleware, then the middleware's lines.
CASES: dict[str, tuple[str, str]] = {
    "import": ("", "import sitemap_middleware\n"),
    "flask": (
        "from flask import Flask\n"
        "app = Flask('startup')\n"
        "app.config['SITEMAP'] = {'base_url': 'http://localhost', 'store': 'memory://'}\n",
        "from sitemap_middleware.flask import Sitemap\nSitemap(app)\n",
    ),
    "starlette": (
        "from starlette.applications import Starlette\napp = Starlette()\n",
        "from sitemap_middleware.starlette import add_sitemap\n"
        "add_sitemap(app, {'base_url': 'http://localhost', 'store': 'memory://'})\n"
        "app.middleware_stack = app.build_middleware_stack()\n",
    ),
}


def _checked(root: Path, folder: str) -> None:
    """Fail unless an interpreter run as measured imports the package from root."""
    found = subprocess.run(
        [sys.executable, "-c", "import sitemap_middleware as m; print(m.__file__)"],
        cwd=folder,
        env={**os.environ, "PYTHONPATH": str(root)},
        capture_output=True,
        text=True,
        check=True,
    ).stdout.strip()
    if not Path(found).resolve().is_relative_to(root.resolve()):
        sys.exit(f"{root}: the package imported is {found}")


def _count(code: str, root: Path, folder: str) -> int:
    script = os.path.join(folder, "case.py")
    Path(script).write_text(code)
    previous = os.environ.get("PYTHONPATH")
    os.environ["PYTHONPATH"] = str(root)
    try:
        # Once outside callgrind first: the modules' bytecode is then cached,
        # not compiled in the counted run.
        subprocess.run([sys.executable, script], check=True, cwd=folder)
        return counted(script)
    finally:
        if previous is None:
            del os.environ["PYTHONPATH"]
        else:
            os.environ["PYTHONPATH"] = previous


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--base", type=Path, help="another checkout to compare with")
    parser.add_argument("--only", choices=sorted(CASES), action="append")
    args = parser.parse_args()
    roots = {"this": ROOT, **({"base": args.base} if args.base else {})}
    with tempfile.TemporaryDirectory() as folder:
        for root in roots.values():
            _checked(root, folder)
        print(f"{'case':<10} {'checkout':<9} {'whole':>13} {'share':>13}")
        for case in args.only or CASES:
            bare, added = CASES[case]
            alone = _count(bare, ROOT, folder)
            figures = {}
            for name, root in roots.items():
                figures[name] = _count(bare + added, root, folder)
                share = figures[name] - alone
                print(f"{case:<10} {name:<9} {figures[name]:>13,} {share:>13,}")
            if "base" in figures:
                whole = figures["this"] / figures["base"]
                share = (figures["this"] - alone) / (figures["base"] - alone)
                print(f"{case:<10} {'ratio':<9} {whole:>12.3f}x {share:>12.3f}x")


if __name__ == "__main__":
    main()
