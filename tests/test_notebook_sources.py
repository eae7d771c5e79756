"""Chapter notebooks are generated from notebooks/src/*.py and stored without outputs."""

from pathlib import Path

import nbformat
import pytest

from tests.scripts import load_script

ROOT = Path(__file__).resolve().parents[1]
SOURCES = sorted((ROOT / "notebooks" / "src").glob("[0-9][0-9]_*.py"))
py2nb = load_script("py2nb")


def test_there_are_eleven_chapters():
    assert [s.stem[:2] for s in SOURCES] == [f"{i:02d}" for i in range(1, 12)]


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


@pytest.fixture(scope="module")
def paper_numbers():
    from tests.prose_numbers import paper_numbers

    return paper_numbers()


@pytest.mark.parametrize("source", SOURCES, ids=lambda s: s.stem)
def test_prose_states_no_number_of_a_run(source, paper_numbers):
    """Issue 33: a number a chapter states in its prose (markdown, and the text of the strings it displays) is the
    paper's, the protocol's or a reference; any other is a run's and must be computed, or a later run, another
    profile or another sample can make the sentence false (tests/prose_numbers.py says what counts as which)."""
    from tests.prose_numbers import unexplained_numbers

    found = unexplained_numbers(source, paper_numbers)
    assert not found, "numbers written into the prose instead of computed:\n" + "\n".join(found)


def test_the_prose_check_finds_a_run_number_and_passes_the_papers(paper_numbers):
    from tests.prose_numbers import matches, numbers_in

    said = dict(numbers_in("The split holds 160 rows (Tab. 12, Sec. 7.2); CAP's ρ is 60.4 in the paper "
                           "(`-p row_limit 200`), 7,827-example test split, at the 97.5th percentile."))
    assert sorted(str(value) for value in said) == ["160", "60.4", "7827", "97.5"]
    assert [str(value) for value in said if not matches(value, paper_numbers)] == ["160"]
