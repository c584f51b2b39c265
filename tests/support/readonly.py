"""A folder that cannot be written, for real: a tmpfs mounted read-only when the
tests run as root (chmod does not stop root), the folder and its files chmod'ed
read-only otherwise; skipped when neither can be had."""

from __future__ import annotations

import os
import subprocess
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from pathlib import Path

import pytest


def _run(*argv: str) -> bool:
    done = subprocess.run(argv, capture_output=True, check=False)
    return done.returncode == 0


@contextmanager
def read_only_folder(where: Path, fill: Callable[[Path], None]) -> Iterator[Path]:
    """``where`` (made here), filled by ``fill`` and then read-only until the
    block ends: os.access says so, and a write fails with EROFS or EACCES."""
    where.mkdir()
    if os.geteuid() != 0:
        fill(where)
        files = [p for p in where.iterdir() if p.is_file()]
        for path in files:
            path.chmod(0o444)
        where.chmod(0o555)
        try:
            yield where
        finally:
            where.chmod(0o755)
            for path in files:
                path.chmod(0o644)
        return
    if not _run("mount", "-t", "tmpfs", "-o", "size=64m", "tmpfs", str(where)):
        pytest.skip("running as root without the right to mount a read-only tmpfs")
    try:
        fill(where)
        assert _run("mount", "-o", "remount,ro", str(where))
        assert not os.access(where, os.W_OK)
        yield where
    finally:
        _run("umount", "-l", str(where))
