"""What the acceptance tests share: a fresh store of each kind that several
server processes can share."""

from __future__ import annotations

from pathlib import Path

import pytest
from support.store_kinds import Fresh


@pytest.fixture(params=["sqlite", "redis", "postgres"])
def store_uri(request: pytest.FixtureRequest, tmp_path: Path, fresh: Fresh) -> str:
    """A fresh store of each kind several processes can share."""
    return fresh.uri(request.param, tmp_path)
