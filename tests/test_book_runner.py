"""scripts/run_book.py: a chapter is re-executed only when what it depends on changed (issue 16, item 7)."""

from __future__ import annotations

import json

import pytest

from tests.scripts import load_script


@pytest.fixture
def runner(tmp_path, monkeypatch):
    """The book runner writing into a temporary folder, with papermill replaced by a recorder of what ran."""
    run_book = load_script("run_book")
    monkeypatch.setattr(run_book, "OUTPUT", tmp_path)
    monkeypatch.setattr(run_book, "RUNS", tmp_path / "runs.json")
    executed: list[str] = []

    def run_chapter(notebook, parameters, timeout):
        executed.append(notebook.stem)
        (tmp_path / notebook.name).write_text("{}")
        (tmp_path / f"{notebook.stem}.numbers.json").write_text(json.dumps(parameters))
        return 0.0

    monkeypatch.setattr(run_book, "run_chapter", run_chapter)
    return run_book, executed


def test_unchanged_chapters_are_not_re_executed_and_force_runs_them(runner, tmp_path, capsys):
    run_book, executed = runner
    only = ["--only", "01_taxonomy", "09_reported_numbers", "--no-build"]
    assert run_book.main(only) == 0 and executed == ["01_taxonomy", "09_reported_numbers"]
    assert run_book.main(only) == 0 and executed == ["01_taxonomy", "09_reported_numbers"]  # nothing ran again
    assert capsys.readouterr().out.count("inputs unchanged since its last run, not re-executed") == 2
    assert run_book.main([*only, "--row-limit", "5"]) == 0  # a parameter neither chapter declares changes nothing
    assert executed[2:] == []
    assert run_book.main([*only, "--force"]) == 0 and executed[2:] == ["01_taxonomy", "09_reported_numbers"]


def test_a_chapter_runs_again_when_its_inputs_or_outputs_change(runner, tmp_path):
    run_book, executed = runner
    only = ["--only", "01_taxonomy", "09_reported_numbers", "--no-build"]
    run_book.main(only)
    (tmp_path / "01_taxonomy.numbers.json").unlink()  # an output removed: 01 runs again...
    run_book.main(only)
    assert executed[2:] == ["01_taxonomy"]  # ...and 09, which reads 01's numbers, stays (they are the same bytes)
    (tmp_path / "05_monotonicity.numbers.json").write_text("{}")  # other numbers that 09 reads appear
    run_book.main(only)
    assert executed[3:] == ["09_reported_numbers"]
    (tmp_path / "10_labeler.numbers.json").write_text("{}")  # a later chapter's numbers, which 09 does not read
    run_book.main(only)
    assert executed[4:] == []
    mine = tmp_path / "mine.yaml"  # another profile (the offline one under another name)
    mine.write_text((run_book.ROOT / "caplib" / "profiles" / "offline.yaml").read_text().replace("name: offline",
                                                                                                 "name: mine"))
    run_book.main(["--only", "01_taxonomy", "--no-build", "--profile", str(mine)])
    assert executed[4:] == ["01_taxonomy"]


def test_the_inputs_hash_follows_parameters_and_notebook_content(tmp_path):
    run_book = load_script("run_book")
    from caplib.profiles import load_profile

    profile = load_profile("offline")
    notebook = run_book.NOTEBOOKS / "01_taxonomy.ipynb"
    key = run_book.inputs_hash(notebook, {"profile": "offline"}, profile)
    assert key == run_book.inputs_hash(notebook, {"profile": "offline"}, profile) and len(key) == 64
    assert key != run_book.inputs_hash(notebook, {"profile": "offline", "seed": 1}, profile)
    edited = tmp_path / "01_taxonomy.ipynb"
    edited.write_bytes(notebook.read_bytes().replace(b"taxonomy", b"Taxonomy", 1))
    assert key != run_book.inputs_hash(edited, {"profile": "offline"}, profile)


def test_long_code_cells_and_injected_parameters_are_folded_and_short_calls_stay_open(tmp_path):
    import nbformat

    run_book = load_script("run_book")
    short = "\n".join(["x = 1"] * run_book.OPEN_CODE_LINES)
    long = "\n".join(["x = 1"] * (run_book.OPEN_CODE_LINES + 1))
    cells = [nbformat.v4.new_code_cell(short), nbformat.v4.new_code_cell(long),
             nbformat.v4.new_code_cell("alpha = 0.5", metadata={"tags": ["injected-parameters"]}),
             nbformat.v4.new_code_cell(long, metadata={"tags": ["show-input"]}),
             nbformat.v4.new_code_cell(long, metadata={"tags": ["remove-input"]}),
             nbformat.v4.new_markdown_cell(long)]
    path = tmp_path / "chapter.ipynb"
    nbformat.write(nbformat.v4.new_notebook(cells=cells), path)
    run_book.fold_code(path)
    tags = [cell.metadata.get("tags", []) for cell in nbformat.read(path, as_version=4).cells]
    assert tags == [[], ["hide-input"], ["injected-parameters", "hide-input"], ["show-input"], ["remove-input"], []]
