"""The package's shape as issue 29's goals measure it: the longest modules and
classes, the files at the top level, the lines of ``stores/`` and of the writer.

Lines are physical lines of the ``.py`` files (docstrings, comments and blank lines
included); ``stores/`` is split into code, docstrings, comments and blank lines, so
that a change is seen for what it is. ``tests/test_shape.py`` holds the limits met.

Run from the repository root::

    python tests/support/shape.py

A measurement, not a test: the exit status is 0 whatever the figures.
"""

from __future__ import annotations

import ast
import io
import tokenize
from collections import Counter
from pathlib import Path

PACKAGE = Path(__file__).resolve().parents[2] / "sitemap_middleware"
MAX_MODULE = 650
MAX_CLASS = 450
MAX_TOP_LEVEL = 22
MAX_STORES = 4_800
MAX_WRITER = 400


def modules() -> dict[str, int]:
    """Each module of the package (its path below the package) -> its lines."""
    return {
        str(path.relative_to(PACKAGE)): len(path.read_text().splitlines())
        for path in sorted(PACKAGE.rglob("*.py"))
    }


def classes() -> dict[str, int]:
    """Each class of the package (module path: class name) -> its lines."""
    found = {}
    for path in sorted(PACKAGE.rglob("*.py")):
        for node in ast.walk(ast.parse(path.read_text())):
            if isinstance(node, ast.ClassDef) and node.end_lineno is not None:
                name = f"{path.relative_to(PACKAGE)}: {node.name}"
                found[name] = node.end_lineno - node.lineno + 1
    return found


def top_level() -> list[str]:
    """The files at the package's top level (folders aside)."""
    return sorted(path.name for path in PACKAGE.iterdir() if path.is_file())


def kinds(folder: Path) -> Counter[str]:
    """The lines of a folder's modules by kind: code, doc, comment, blank."""
    count: Counter[str] = Counter()
    for path in folder.rglob("*.py"):
        source = path.read_text()
        lines = source.splitlines()
        kind = ["code"] * len(lines)
        before = tokenize.NEWLINE
        for token in tokenize.generate_tokens(io.StringIO(source).readline):
            if token.type == tokenize.COMMENT and token.line.lstrip().startswith("#"):
                kind[token.start[0] - 1] = "comment"
            elif token.type == tokenize.STRING and before in (
                tokenize.NEWLINE,
                tokenize.INDENT,
                tokenize.DEDENT,
            ):
                for index in range(token.start[0] - 1, token.end[0]):
                    kind[index] = "doc"
            if token.type not in (tokenize.NL, tokenize.COMMENT):
                before = token.type
        for line, what in zip(lines, kind, strict=True):
            count["blank" if not line.strip() else what] += 1
    return count


def main() -> None:
    sizes, spans = modules(), classes()
    for what, found, limit in (
        ("modules", sizes, MAX_MODULE),
        ("classes", spans, MAX_CLASS),
    ):
        longest = sorted(found.items(), key=lambda item: -item[1])[:4]
        over = sum(n > limit for n in found.values())
        print(f"{what} over {limit} lines: {over}; the longest:")
        print("  " + ", ".join(f"{name} {n}" for name, n in longest))
    print(f"files at the top level: {len(top_level())} (at most {MAX_TOP_LEVEL})")
    stores = kinds(PACKAGE / "stores")
    split = ", ".join(f"{kind} {n}" for kind, n in sorted(stores.items()))
    print(f"stores/: {stores.total()} lines (at most {MAX_STORES}): {split}")
    writer = sizes["recording/writer.py"]
    print(f"recording/writer.py: {writer} lines (at most {MAX_WRITER})")
    print(f"the package: {sum(sizes.values())} lines in {len(sizes)} modules")


if __name__ == "__main__":
    main()
