"""The command line run in this process through click's test runner, answering as
a script sees it: the exit code, stdout and stderr."""

from __future__ import annotations

from click.testing import CliRunner

from sitemap_middleware.cli import main


def run(*args: str) -> tuple[int, str, str]:
    result = CliRunner().invoke(main, list(args), catch_exceptions=False)
    return result.exit_code, result.stdout, result.stderr
