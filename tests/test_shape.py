"""The package stays in rooms a reader can take in: no module over 650 lines, no
class over 450, no more files at the top level than today (grow folders, not the
top), a writer of at most 400 lines. ``python tests/support/shape.py`` prints them.
"""

from __future__ import annotations

from support import shape


def test_no_module_is_longer_than_a_room() -> None:
    over = {name: n for name, n in shape.modules().items() if n > shape.MAX_MODULE}
    assert not over, (
        f"modules over {shape.MAX_MODULE} lines: {over}; split by what they hold"
    )


def test_no_class_is_longer_than_a_room() -> None:
    over = {name: n for name, n in shape.classes().items() if n > shape.MAX_CLASS}
    assert not over, f"classes over {shape.MAX_CLASS} lines: {over}"


def test_the_top_level_does_not_grow() -> None:
    files = shape.top_level()
    assert len(files) <= shape.MAX_TOP_LEVEL, f"grow a folder, not the top: {files}"


def test_the_writer_loops_over_its_side_writers() -> None:
    assert shape.modules()["recording/writer.py"] <= shape.MAX_WRITER
