"""The config digest stays what it was: a regression pin.

Stores keep the digest of the config that last judged them; a digest that changes
for the same config makes every store re-check all its pages on upgrade. The values
below were computed by the release before the config became a table of keys and are
hard-coded on purpose: never update them to make this pass. They are the
digests under version 2 of the refusal rules (``recheck.RULES``): a release whose
rules refuse more bumps it, and so every digest, on purpose.
"""

from __future__ import annotations

from typing import Any

import pytest

from sitemap_middleware.config import Config
from sitemap_middleware.recording import recheck
from sitemap_middleware.recording.recheck import config_digest

BASE = {"base_url": "https://www.example.com", "store": "memory://"}

ROUTES = {
    "/blog/<slug>": {
        "changefreq": "daily",
        "priority": 0.8,
        "max_urls": 100,
        "query": ["ref"],
    },
    "/old/<x>": {"exclude": True},
}


@pytest.mark.parametrize(
    ("extra", "digest"),
    [
        ({}, "844ce3bc719ef2948bcf2e380f30ab15"),
        (
            {
                "exclude": ["/drafts/*"],
                "include": ["/drafts/public/*"],
                "query": ["page", "lang"],
                "changefreq": "weekly",
                "priority": 0.5,
                "max_urls": 5000,
                "routes": ROUTES,
            },
            "ba6ffe7e4454affec33af07f50a6125a",
        ),
        (
            {"default_exclude": ["*/admin/*"], "max_urls": None},
            "7d6483b573eafdb175d2f58301878c24",
        ),
        (
            {"html_sitemap": {"path": "/site-map", "title": "Plan"}},
            "aa4a53550e45859b1523070eb777de75",
        ),
        (
            {"sections": {"posts": ["/blog/<slug>", "/news/*"], "docs": "/docs/*"}},
            "9c8ebc8ef58e6fff4e329f7acff05270",
        ),
        (
            {
                "html_sitemap": "/plan",
                "sections": {"posts": ["/blog/*"]},
                "priority": 1,
            },
            "0ded64f1c78302d2e2e8788d14b617c0",
        ),
        # Keys that do not decide what is listed leave the digest of the bare
        # config as it is.
        (
            {
                "gzip_level": 9,
                "cache_max_age": 60,
                "images": False,
                "text_sitemap": True,
                "lastmod_source": "changes",
                "stale_after": 1e6,
                "indexnow": {"key": "abcdef123456"},
                "crawlers": False,
                "robots": {"lines": ["Disallow: /x"]},
            },
            "844ce3bc719ef2948bcf2e380f30ab15",
        ),
    ],
)
def test_the_digest_of_a_config_is_pinned(
    extra: dict[str, Any], digest: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    config = Config.from_mapping({**BASE, **extra})
    bumped = config_digest(config)
    monkeypatch.setattr(recheck, "RULES", "2")
    assert config_digest(config) == digest
    assert bumped != digest  # the rules' version is part of the digest
