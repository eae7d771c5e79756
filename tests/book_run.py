"""Execute the chapter notebooks into a folder, one after the other, with the notebook tests' parameters.

    python -m tests.book_run OUT [CHAPTER ...]   # from the repository root; the environment is the caller's

The notebook tests (:mod:`tests.test_notebooks`) execute every chapter once from an empty cache, and compare its
numbers with a second run: ``make book``'s, for each chapter it executed from exactly the inputs these tests give
(:func:`reuse_make_book`), and a run here, in a process of its own with the machine's score cache, for the others.
"""

from __future__ import annotations

import json
import shutil
import sys
from pathlib import Path

import papermill

from tests.scripts import load_script

ROOT = Path(__file__).resolve().parents[1]
CHAPTERS = sorted((ROOT / "notebooks").glob("[0-9][0-9]_*.ipynb"))
#: Parameters besides the profile, per chapter: Chapter 11 scores the release's first 240 rows of the test split here
#: (30 questions: every class, 143 rows with an annotator's label; all 7,826 rows are `make book`'s, minutes of NLI).
PARAMETERS = {"11_official_rows": {"row_limit": 240}}
#: The book runner (scripts/run_book.py), loaded once: its parameter filter, inputs hash and record of runs.
RUN_BOOK = load_script("run_book")


def parameters(notebook: Path) -> dict:
    """What the tests pass to ``notebook``: the offline profile and :data:`PARAMETERS`, as ``make book`` passes
    them (only the parameters the chapter declares)."""
    return RUN_BOOK.declared_parameters(notebook, {"profile": "offline", **PARAMETERS.get(notebook.stem, {})})


def execute(out: Path, chapters: list[Path] = CHAPTERS) -> None:
    """``chapters`` in order on the offline profile into ``out`` (executed notebooks, numbers files)."""
    for notebook in chapters:
        papermill.execute_notebook(str(notebook), str(out / notebook.name), parameters=parameters(notebook),
                                   cwd=str(out), kernel_name="python3", execution_timeout=1800, progress_bar=False)


def reuse_make_book(out: Path) -> list[Path]:
    """Copy into ``out`` the executed notebook and numbers of every chapter that ``make book`` last executed from
    exactly the inputs :func:`execute` would give it (``scripts/run_book.py``'s inputs hash: notebook, parameters,
    caplib, data, backbone, dependencies, runner, and the numbers of the chapters before it as they are in ``out``).
    Returns the chapters left to execute, in order. A chapter that reads the numbers of the chapters before it is
    left too once one of those is left (its inputs are not known yet)."""
    from caplib.profiles import load_profile

    runs = json.loads(RUN_BOOK.RUNS.read_text(encoding="utf-8")) if RUN_BOOK.RUNS.is_file() else {}
    profile = load_profile("offline")
    left: list[Path] = []
    for notebook in CHAPTERS:
        reads_numbers = "chapters_dir" in papermill.inspect_notebook(str(notebook))
        if (not left or not reads_numbers) and RUN_BOOK.up_to_date(
                notebook, RUN_BOOK.inputs_hash(notebook, parameters(notebook), profile, out), runs):
            for name in (notebook.name, f"{notebook.stem}.numbers.json"):
                shutil.copy2(RUN_BOOK.OUTPUT / name, out / name)
        else:
            left.append(notebook)
    return left


if __name__ == "__main__":
    execute(Path(sys.argv[1]), [path for path in CHAPTERS if path.stem in sys.argv[2:]] if sys.argv[2:] else CHAPTERS)
