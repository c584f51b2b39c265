"""Instructions a script's run costs, counted with callgrind: what the benchmarks
that print instruction counts share (``instructions.py``, ``parts.py``).
"""

from __future__ import annotations

import os
import re
import subprocess
import sys
import tempfile


def counted(script: str, *args: str, first_thread: bool = False) -> int:
    """The instructions of ``python script args...`` under callgrind (hash
    seed fixed); with ``first_thread``, those of its main thread only."""
    with tempfile.TemporaryDirectory() as tmp:
        out = os.path.join(tmp, "callgrind.out")
        subprocess.run(
            [
                "valgrind",
                "--tool=callgrind",
                f"--callgrind-out-file={out}",
                *(["--separate-threads=yes"] if first_thread else []),
                sys.executable,
                script,
                *args,
            ],
            check=True,
            capture_output=True,
            env={**os.environ, "PYTHONHASHSEED": "0"},
        )
        # With threads apart, the main thread's file ends in -01.
        with open(f"{out}-01" if first_thread else out) as f:
            text = f.read()
    match = re.search(r"^summary: (\d+)", text, re.MULTILINE) or re.search(
        r"^totals: (\d+)", text, re.MULTILINE
    )
    assert match, "no totals in callgrind output"
    return int(match.group(1))
