"""Chapter notebooks are generated from notebooks/src/*.py and stored without outputs."""

from pathlib import Path

import nbformat
import pytest

from tests.scripts import load_script

ROOT = Path(__file__).resolve().parents[1]
SOURCES = sorted((ROOT / "notebooks" / "src").glob("[0-9][0-9]_*.py"))
py2nb = load_script("py2nb")


def test_there_are_ten_chapters():
    assert [s.stem[:2] for s in SOURCES] == [f"{i:02d}" for i in range(1, 11)]


@pytest.mark.parametrize("source", SOURCES, ids=lambda s: s.stem)
def test_notebook_matches_its_source_and_has_no_outputs(source):
    stored = nbformat.read(ROOT / "notebooks" / f"{source.stem}.ipynb", as_version=4)
    expected = py2nb.convert(source)
    assert [c.source for c in stored.cells] == [c.source for c in expected.cells], (
        f"notebooks/{source.stem}.ipynb is stale: run `python scripts/py2nb.py {source.relative_to(ROOT)}`")
    assert all(not c.get("outputs") for c in stored.cells if c.cell_type == "code")
    code = [c for c in stored.cells if c.cell_type == "code"]
    assert code[0].metadata.get("tags") == ["parameters", "hide-input"]  # shown folded (results first)
    assert code[1].metadata.get("tags") == ["hide-input"]  # the imports and plumbing cell, folded too
    assert sum("parameters" in c.metadata.get("tags", []) for c in code) == 1
    assert "profile" in code[0].source and "record_to" in code[0].source
