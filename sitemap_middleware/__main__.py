"""``python -m sitemap_middleware``: runs the command line of ``cli``."""

from __future__ import annotations

from .cli import main

main(prog_name="sitemap-middleware")
