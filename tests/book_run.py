"""Execute every chapter notebook into a folder, one after the other, with the notebook tests' parameters.

    python -m tests.book_run OUT        # from the repository root; the environment is the caller's

The notebook tests (:mod:`tests.test_notebooks`) start two of these at once, each in its own process with its own
empty cache, so that the two runs of the book share nothing and the two cores both work.
"""

from __future__ import annotations

import sys
from pathlib import Path

import papermill

ROOT = Path(__file__).resolve().parents[1]
CHAPTERS = sorted((ROOT / "notebooks").glob("[0-9][0-9]_*.ipynb"))
#: Parameters besides the profile, per chapter: Chapter 11 scores the release's first 240 rows of the test split here
#: (30 questions: every class, 143 rows with an annotator's label; all 7,826 rows are `make book`'s, minutes of NLI).
PARAMETERS = {"11_official_rows": {"row_limit": 240}}


def execute(out: Path) -> None:
    """Every chapter of ``CHAPTERS`` on the offline profile into ``out`` (executed notebooks, numbers files)."""
    for notebook in CHAPTERS:
        papermill.execute_notebook(str(notebook), str(out / notebook.name),
                                   parameters={"profile": "offline", **PARAMETERS.get(notebook.stem, {})},
                                   cwd=str(out), kernel_name="python3", execution_timeout=1800, progress_bar=False)


if __name__ == "__main__":
    execute(Path(sys.argv[1]))
