"""Flask glue: ``Sitemap(app)`` or ``Sitemap().init_app(app)`` wraps ``app.wsgi_app``
with :class:`~sitemap_middleware.SitemapMiddleware`, configured from
``app.config["SITEMAP"]``; the middleware finds the app's routes itself. It adds
the ``flask sitemap ...`` commands.
"""

from __future__ import annotations

import os
from typing import Any

from .config import DEFAULT_STORE_FILE
from .errors import ConfigError
from .wsgi import SitemapMiddleware

EXTENSION = "sitemap"


class Sitemap:
    """The Flask extension. The store defaults to an SQLite file in the app's
    instance folder; the middleware lands in ``app.extensions["sitemap"]``.

    .. code-block:: python

        app.config["SITEMAP"] = {"base_url": "https://www.example.com"}
        Sitemap(app)
    """

    def __init__(self, app: Any = None) -> None:
        if app is not None:
            self.init_app(app)

    def init_app(self, app: Any) -> SitemapMiddleware:
        """Wrap ``app.wsgi_app``; calling it twice for one app is an error."""
        if EXTENSION in app.extensions:
            raise ConfigError(
                "Sitemap is already set up for this app"
                " (app.extensions['sitemap']): install one only"
            )
        config = app.config.get("SITEMAP")
        if config is None:
            raise ConfigError(
                "Sitemap needs app.config[\"SITEMAP\"], a dict with at least 'base_url'"
            )
        if "store" not in config:  # the middleware makes the instance folder
            path = os.path.join(app.instance_path, DEFAULT_STORE_FILE)
            config = {**config, "store": f"sqlite:///{path}"}
        # The middleware finds the app's routes through the bound wsgi_app.
        middleware = SitemapMiddleware(app.wsgi_app, config)
        app.wsgi_app = middleware
        app.extensions[EXTENSION] = middleware
        app.cli.add_command(_commands())
        return middleware


def _commands() -> Any:
    """``flask sitemap ...``: the commands of ``sitemap-middleware`` on the app
    ``flask`` loads, without ``--app``: its store and base URL are theirs."""
    # Imported here: only the flask command needs them.
    import click
    from flask.cli import ScriptInfo

    class Commands(click.Group):
        """The command line's commands, loaded when flask's command line asks
        for one, not with every app."""

        def list_commands(self, ctx: click.Context) -> list[str]:
            from .cli import main

            return main.list_commands(ctx)

        def get_command(self, ctx: click.Context, name: str) -> click.Command | None:
            from .cli import main
            from .cli.options import app_known

            command = main.get_command(ctx, name)
            return None if command is None else app_known(command)

    @click.group(EXTENSION, cls=Commands)
    @click.pass_context
    def group(context: click.Context) -> None:
        """The sitemap of this app: its store, and seed, verify, prune,
        explain, report."""
        from .cli.options import Target

        info = context.ensure_object(ScriptInfo)
        # The commands' Target, loading the app as flask does.
        context.obj = Target(load=lambda spec: info.load_app())

    return group


def get_sitemap(app: Any) -> SitemapMiddleware:
    """The middleware that ``Sitemap`` installed on ``app``."""
    middleware: SitemapMiddleware = app.extensions[EXTENSION]
    return middleware
