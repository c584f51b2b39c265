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
    """``flask sitemap ...``: the commands of ``sitemap-middleware``, on the
    app ``flask`` loads: its store and base URL are the store commands'
    defaults, and the app commands need no ``--app``."""
    # Imported here: only the flask command needs them.
    import click
    from flask.cli import ScriptInfo

    from .cli import STORE_COMMANDS, app_commands, main

    def this_app(spec: str | None) -> object:
        return click.get_current_context().ensure_object(ScriptInfo).load_app()

    @click.group(EXTENSION)
    @click.pass_context
    def group(context: click.Context) -> None:
        """The sitemap of this app: its store, and seed, verify, prune,
        explain, report."""
        config = get_sitemap(this_app(None)).config
        site = {"base_url": config.base_url}
        if isinstance(config.store, str):  # a Store object has no URI
            site["store_uri"] = config.store
        # Below the command line and the environment, as click ranks them.
        context.default_map = dict.fromkeys(STORE_COMMANDS, site)

    for name in STORE_COMMANDS:
        group.add_command(main.commands[name])
    for command in app_commands(this_app, with_option=False):
        group.add_command(command)
    return group


def get_sitemap(app: Any) -> SitemapMiddleware:
    """The middleware that ``Sitemap`` installed on ``app``."""
    middleware: SitemapMiddleware = app.extensions[EXTENSION]
    return middleware
