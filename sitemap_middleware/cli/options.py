"""The options every command takes (--app, --store, --base-url, --site) and the
:class:`Target` they fill once per invocation: the app, and the site a command
works on, found from them.
"""

from __future__ import annotations

import copy
from collections.abc import Callable, Iterator
from contextlib import AbstractContextManager, closing, contextmanager
from dataclasses import dataclass
from functools import cached_property
from typing import TYPE_CHECKING, Any

import click

from ..config import DEFAULT_STORE, Config
from ..errors import ConfigError, StoreError
from ..stores import Store
from .site import Exit, Site, fail, hinted, opened, site_listing

if TYPE_CHECKING:
    from ..recording.recheck import Judge
    from ..routes import Route
    from .replay import Answer, Hold, Replay


AppSource = Callable[[str | None], object | None]
"""From the ``--app`` option's value (``None``: not given): the app, if any."""


def load_app(spec: str | None) -> object | None:
    if spec is None:
        return None
    from .loading import AppError, load

    try:
        return load(spec)
    except AppError as exc:
        fail(str(exc), Exit.APP)


@dataclass(frozen=True, slots=True)
class Judged:
    """What prune, explain and report need: the config, its store and its
    judge, and the app's route of a path when the app is known."""

    config: Config
    store: Store
    judge: Judge
    route: Callable[[str], Route | None]
    answer: Callable[[str], Answer] | None = None
    """What the app beneath the middleware answers an anonymous GET of a
    path (nothing recorded), when the app is known."""
    sitemap: object | None = None
    """The app's middleware, when the app is known (its route table)."""


class Target:
    """What a command works on, as its common options name it: one per
    invocation (``click.Context.obj``, as Flask's ``ScriptInfo``), each
    option's value set as it is parsed. A group that knows its app (``flask
    sitemap``) makes it with that app's ``load``."""

    def __init__(self, load: AppSource = load_app) -> None:
        self.load = load
        self.app_spec: str | None = None
        self.store_uri: str | None = None
        self.base_url: str | None = None
        self.site_name: str | None = None

    @cached_property
    def app(self) -> object | None:
        """The app, loaded once: ``--app``'s, or the group's."""
        return self.load(self.app_spec)

    @contextmanager
    def site(
        self, *, existing: bool, needs_base_url: bool, writes: bool = False
    ) -> Iterator[Site]:
        """The config and store a store command works on: with the app, its
        middleware's (``--site``'s site's), each option overriding its own;
        without, the options' (``--site``: that site's listing in the store).
        ``existing``: refuse a store that holds no sitemap; ``writes``: the
        command writes, and refuses a ``--site`` listing that holds none
        without the app (``site.check_exists``)."""
        if self.app is None:
            if needs_base_url and self.base_url is None:
                raise _missing("base_url")
            with self._opened(existing, writes) as site:
                yield site
            return
        # The app's middleware itself: its whole config (what it refuses, the
        # query it keeps, how it serves) and its store, whose removals settle
        # the other sites' hreflang clusters as the middleware's own do. Held
        # as any replayed one is: a store command never re-checks the store
        # (invariant 21).
        with self._replay(
            self.app, self.store_uri, self.base_url, existing=existing
        ) as ready:
            yield Site(ready.sitemap.config, ready.sitemap.store)

    @contextmanager
    def replayed(
        self, *, existing: bool, limited: bool = True, hold: Hold | None = None
    ) -> Iterator[Replay]:
        """The app, which the command needs, ready to be asked (``replay``),
        with ``--store`` and ``--base-url`` in place of its own."""
        app = self.app
        if app is None:
            raise _missing("app_spec")
        with self._replay(
            app, self.store_uri, self.base_url, existing, limited, hold
        ) as ready:
            yield ready

    @contextmanager
    def judged(self, *, writes: bool = False) -> Iterator[Judged]:
        """The config that judges the stored pages: the app's, else the
        defaults' for ``--base-url`` and ``--store`` (``writes``: as
        :meth:`site`'s)."""
        if self.app is not None:
            with self.replayed(existing=True) as ready:
                sitemap = ready.sitemap
                yield Judged(
                    sitemap.config,
                    sitemap.store,
                    sitemap.judge,
                    ready.route,
                    ready.answer,
                    sitemap,
                )
            return
        if self.base_url is None:
            fail("give --app, or --base-url (and --store)", Exit.USAGE)
        from ..recording.recheck import ConfigJudge
        from ..routes import Routes
        from ..watching.policy import Policy

        with self._opened(True, writes) as site:
            config = site.config
            judge = ConfigJudge(config, Policy(config), Routes(config).resolve)
            yield Judged(config, site.store, judge, lambda path: None)

    def _opened(self, existing: bool, writes: bool) -> AbstractContextManager[Site]:
        """The store of the options, without the app: ``--site``'s listing
        in it, as the middleware names it (``config.site_store``)."""
        uri = DEFAULT_STORE if self.store_uri is None else self.store_uri
        name = self.site_name
        listing = uri if name is None else site_listing(uri, name)
        return opened(
            listing, self.base_url, existing=existing, site=name, writes=writes
        )

    @contextmanager
    def _replay(
        self,
        app: object,
        store_uri: str | None = None,
        base_url: str | None = None,
        existing: bool = True,
        limited: bool = True,
        hold: Hold | None = None,
    ) -> Iterator[Replay]:
        from .loading import AppError
        from .replay import UnknownSite, replay

        try:
            with replay(
                app,
                store_uri,
                base_url,
                limited,
                hold,
                self.site_name,
                existing,
                _closed_when_done,
            ) as ready:
                yield ready
        except UnknownSite as exc:
            fail(str(exc), Exit.USAGE)
        except AppError as exc:
            fail(str(exc), Exit.APP)
        except ConfigError as exc:
            fail(hinted(exc, store_uri), Exit.USAGE)
        except StoreError as exc:
            fail(f"the store failed: {exc}", Exit.STORE)


def _closed_when_done(store: Store) -> None:
    """Close ``store`` once the command is done (its click context closed):
    a run that removes applies its held removals after its replay is over."""
    click.get_current_context().with_resource(closing(store))


def _missing(name: str) -> click.MissingParameter:
    """The usage error of a command's option it needs here: click's own for a
    required option (with the app, --base-url is not; without, it is)."""
    context = click.get_current_context()
    param = next(p for p in context.command.params if p.name == name)
    return click.MissingParameter(ctx=context, param=param)


def _keep(context: click.Context, param: click.Parameter, value: Any) -> None:
    # As Flask's --app fills its ScriptInfo: the invocation's one Target.
    setattr(context.ensure_object(Target), str(param.name), value)


pass_target = click.make_pass_decorator(Target, ensure=True)

_OPTIONS = (
    click.option(
        "--app",
        "app_spec",
        metavar="MODULE:ATTR",
        envvar="SITEMAP_APP",
        expose_value=False,
        callback=_keep,
        help="The app: a Flask, Starlette or FastAPI app, a factory (called with"
        " no arguments) or the sitemap middleware; its store and base URL are the"
        " defaults (env SITEMAP_APP).",
    ),
    click.option(
        "--store",
        "store_uri",
        envvar="SITEMAP_STORE",
        expose_value=False,
        callback=_keep,
        help="The store URI, as in the config; default: the app's, else"
        f" {DEFAULT_STORE} (env SITEMAP_STORE).",
    ),
    click.option(
        "--base-url",
        envvar="SITEMAP_BASE_URL",
        expose_value=False,
        callback=_keep,
        help="The site's public URL, as in the config's base_url; default: the"
        " app's (env SITEMAP_BASE_URL).",
    ),
    click.option(
        "--site",
        "site_name",
        envvar="SITEMAP_SITE",
        expose_value=False,
        callback=_keep,
        help="A site of the config's 'sites': its name; default: the first (env"
        " SITEMAP_SITE). Without --app, its listing in the store, and --base-url"
        " is then its own.",
    ),
)


def common_options(command: Callable[..., Any]) -> Callable[..., Any]:
    """--app, --store, --base-url and --site, in this order, and the
    :class:`Target` they fill passed as the command's first argument."""
    command = pass_target(command)
    for option in reversed(_OPTIONS):
        command = option(command)
    return command


def app_known(command: click.Command) -> click.Command:
    """``command`` for a group that knows its app (``flask sitemap``): the
    same callback and options, but --app."""
    known = copy.copy(command)
    known.params = [param for param in command.params if param.name != "app_spec"]
    return known
