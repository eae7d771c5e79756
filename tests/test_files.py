"""caplib.files (issue 34): files are written as ``open()`` would write them (the umask's mode, an existing file's
own), and files that belong together are written together or not at all."""

from __future__ import annotations

import os
import stat

import pytest

from caplib.files import write_atomically, write_together


def test_write_atomically_gives_the_umasks_mode_and_keeps_an_existing_files(tmp_path):
    previous = os.umask(0o027)
    try:
        write_atomically(tmp_path / "new.txt", lambda path: path.write_text("x"))
        kept = tmp_path / "kept.txt"
        kept.write_text("old")
        kept.chmod(0o644)
        write_atomically(kept, lambda path: path.write_text("new"))
    finally:
        os.umask(previous)
    assert stat.S_IMODE((tmp_path / "new.txt").stat().st_mode) == 0o640
    assert stat.S_IMODE(kept.stat().st_mode) == 0o644 and kept.read_text() == "new"


def test_files_written_together_are_all_written_or_none(tmp_path):
    first, second = tmp_path / "out.csv", tmp_path / "out.csv.signature.json"
    first.write_text("old")

    def fail(path):
        raise OSError("disk full")

    with pytest.raises(OSError, match="disk full"):
        write_together({first: lambda path: path.write_text("new"), second: fail})
    assert first.read_text() == "old" and not second.exists()
    assert sorted(p.name for p in tmp_path.iterdir()) == ["out.csv"]  # no temporary left
    write_together({first: lambda path: path.write_text("new"), second: lambda path: path.write_text("{}")})
    assert (first.read_text(), second.read_text()) == ("new", "{}")
