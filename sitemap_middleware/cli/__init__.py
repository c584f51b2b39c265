"""The ``sitemap-middleware`` command line (also ``python -m sitemap_middleware``):
look into a store, list and remove its URLs, export the sitemap as files and import
one from elsewhere (``cli/store.py``); with the app, seed, verify and prune its
pages (``cli/pages.py``), explain them and report the sitemap's health
(``cli/health.py``). Every command takes the common options (``cli/options.py``);
``flask sitemap ...`` has them all, on its app. Exit codes are in :class:`Exit`.
"""

from __future__ import annotations

import errno
import sys
from collections.abc import Sequence
from typing import Any

import click

# Only what the package itself loads, and click: ``--version``, ``--help`` and
# ``flask sitemap`` (loaded with every Flask app) start fast. Each command
# imports what it needs (the recorder, the server, the app's replay, the XML
# parser); tests/cli/test_startup.py holds it.
from .health import explain, report
from .pages import prune, seed, verify
from .site import BRAKE_URLS, Exit, fail
from .store import export, import_, list_, remove, stats


class _Main(click.Group):
    """The command group, whose errors are one line each: a usage error
    names the help to read, an unreadable or unwritable path its reason."""

    def main(
        self,
        args: Sequence[str] | None = None,
        prog_name: str | None = None,
        complete_var: str | None = None,
        standalone_mode: bool = True,
        **extra: Any,
    ) -> Any:
        if not standalone_mode:
            return super().main(args, prog_name, complete_var, False, **extra)
        try:
            code = super().main(args, prog_name, complete_var, False, **extra)
        except click.UsageError as exc:
            where = exc.ctx.command_path if exc.ctx else "sitemap-middleware"
            fail(f"{exc.format_message()} (see '{where} --help')", exc.exit_code)
        except click.ClickException as exc:
            fail(exc.format_message(), exc.exit_code)
        except click.Abort:
            fail("aborted", Exit.PROBLEMS)
        except OSError as exc:
            if exc.errno == errno.EPIPE:  # the reader left (| head): not an error
                sys.exit(Exit.OK)
            # A file or folder named on the command line (export's DIRECTORY).
            where = f"{exc.filename}: " if exc.filename else ""
            fail(f"{where}{exc.strerror or exc}", Exit.USAGE)
        sys.exit(code if isinstance(code, int) else Exit.OK)


@click.group(cls=_Main, context_settings={"help_option_names": ["-h", "--help"]})
@click.version_option(package_name="sitemap-middleware")
def main() -> None:
    """Look into a sitemap store, export it as files, import a sitemap into it."""


for _command in (
    *(stats, list_, remove, export, import_),
    *(seed, verify, prune, explain, report),
):
    main.add_command(_command)

__all__ = ["BRAKE_URLS", "Exit", "main"]
