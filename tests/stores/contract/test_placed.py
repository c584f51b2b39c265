"""Placed (stores.base): a store kept in a file is refused at start-up where no
file can be, and its folder is made when the app owns it."""

from __future__ import annotations

from pathlib import Path

import pytest
from support.store_kinds import Fresh
from support.stored import T0, paths

from sitemap_middleware import ConfigError, Entry
from sitemap_middleware.stores.contract import Placed

CAPABILITIES = (Placed,)


def test_an_owned_folder_is_made_and_another_missing_one_refused(
    kind: str, fresh: Fresh, tmp_path: Path
) -> None:
    owned, missing = tmp_path / "instance", tmp_path / "nowhere"
    with fresh.store(kind, missing) as store:
        assert isinstance(store, Placed)
        with pytest.raises(ConfigError, match=str(missing)):
            store.place()
        assert not missing.exists()
    with fresh.store(kind, owned) as store:
        assert isinstance(store, Placed)
        store.place(own=str(owned))
        assert owned.is_dir()
        store.place()  # there now: nothing to refuse
        store.upsert([Entry("/a", T0)])
        assert paths(store) == ["/a"]
