"""``python manage.py sitemap ...``: the commands of ``sitemap-middleware`` on
this project, without ``--app``: its store and base URL are ``settings.SITEMAP``'s.
"""

from __future__ import annotations

import os
from typing import Any

from django.core.management.base import BaseCommand


class Command(BaseCommand):  # type: ignore[misc]
    help = (
        "The sitemap of this project: its store, and seed, verify, prune,"
        " explain, report (python manage.py sitemap --help)."
    )

    def run_from_argv(self, argv: list[str]) -> None:
        # click parses the arguments, as sitemap-middleware does: one set of
        # commands, their options and exit codes.
        import click
        from django.core.wsgi import get_wsgi_application

        from ....cli import main
        from ....cli.options import Target, app_known

        group = click.Group("sitemap", help=self.help)
        for command in main.commands.values():
            group.add_command(app_known(command))
        prog = f"{os.path.basename(argv[0])} {argv[1]}"
        target = Target(load=lambda spec: get_wsgi_application())
        group.main(args=argv[2:], prog_name=prog, obj=target)

    def handle(self, *args: Any, **options: Any) -> None:
        # call_command() lands here: its arguments are click's.
        self.run_from_argv(["manage.py", "sitemap", *args])
