"""The app ``--app`` names: its module imported, its factory called, a Django
project from its settings module; an ``AppError`` saying what could not be.
"""

from __future__ import annotations

import importlib
import inspect
import sys
from typing import Any


class AppError(Exception):
    """The app could not be loaded, or holds no sitemap middleware."""


def load(spec: str) -> object:
    """The object ``module:attr`` names (``attr`` may be dotted; without it
    ``app``, else ``create_app``, else ``application``, as a Django
    project's ``wsgi.py`` names it); a function is a factory, called with no
    arguments. A Django settings module (``mysite.settings``) is its
    project, as ``DJANGO_SETTINGS_MODULE`` would name it. The current
    directory is importable, as for ``flask --app``.

    :raises AppError: saying what could not be imported or found.
    """
    module_name, _, attr = spec.partition(":")
    if "" not in sys.path and "." not in sys.path:
        sys.path.insert(0, "")
    try:
        module = importlib.import_module(module_name)
    except Exception as exc:  # the app's own import error, whatever it is
        raise AppError(f"cannot import {module_name!r}: {exc!r}") from exc
    names = [attr] if attr else ["app", "create_app", "application"]
    for name in names:
        found: Any = module
        try:
            for part in name.split("."):
                found = getattr(found, part)
        except AttributeError:
            continue
        if inspect.isfunction(found) or inspect.ismethod(found):
            try:
                found = found()
            except Exception as exc:
                raise AppError(f"{module_name}:{name}() failed: {exc!r}") from exc
        return found
    if not attr and hasattr(module, "ROOT_URLCONF"):  # Django's settings
        return _django_project(module_name)
    raise AppError(f"{module_name!r} has no {' or '.join(map(repr, names))}")


def _django_project(settings: str) -> object:
    """The WSGI handler of the Django project whose settings module is
    ``settings``."""
    import os

    from django.conf import settings as loaded
    from django.core.wsgi import get_wsgi_application

    if loaded.configured and settings != loaded.SETTINGS_MODULE:
        raise AppError(
            f"this process has the settings {loaded.SETTINGS_MODULE!r} already:"
            f" --app names {settings!r}"
        )
    # --app names the project, whatever the environment says.
    os.environ["DJANGO_SETTINGS_MODULE"] = settings
    try:
        return get_wsgi_application()
    except Exception as exc:  # the project's own error, whatever it is
        raise AppError(f"the Django project {settings!r} failed: {exc!r}") from exc
