"""Build notebooks/NN_name.ipynb from notebooks/src/NN_name.py (percent format), outputs empty.

The .py sources are what we edit and review; the .ipynb files are what papermill runs. Cells start with
``# %%`` (code) or ``# %% [markdown]`` (markdown, every line prefixed by ``# ``). The first code cell must be
tagged parameters: write it as ``# %% tags=["parameters"]``.

Usage: python scripts/py2nb.py [notebooks/src/NN_name.py ...]   (default: all sources)
"""

from __future__ import annotations

import re
import sys
from pathlib import Path

import nbformat

ROOT = Path(__file__).resolve().parents[1]
CELL = re.compile(r"^# %%(?P<markdown> \[markdown\])?(?P<tags> tags=\[(?P<taglist>[^\]]*)\])?\s*$")


def convert(source: Path) -> nbformat.NotebookNode:
    """Parse one percent-format script into a notebook without outputs."""
    cells: list[nbformat.NotebookNode] = []
    kind, tags, lines = None, [], []

    def flush() -> None:
        text = "\n".join(lines).strip("\n")
        if kind is None or not text:
            return
        if kind == "markdown":
            text = "\n".join(re.sub(r"^# ?", "", line) for line in text.splitlines())
            cells.append(nbformat.v4.new_markdown_cell(text))
        else:
            cell = nbformat.v4.new_code_cell(text)
            if tags:
                cell.metadata["tags"] = tags
            cells.append(cell)

    for line in source.read_text().splitlines():
        match = CELL.match(line)
        if match:
            flush()
            kind = "markdown" if match["markdown"] else "code"
            tags = [t.strip().strip("'\"") for t in (match["taglist"] or "").split(",") if t.strip()]
            lines = []
        else:
            lines.append(line)
    flush()
    code = [c for c in cells if c.cell_type == "code"]
    if not code or "parameters" not in code[0].metadata.get("tags", []):
        raise SystemExit(f"{source}: the first code cell must be tagged parameters")
    for number, cell in enumerate(cells):
        cell.id = f"cell-{number:02d}"  # stable ids: regenerating gives identical files
    notebook = nbformat.v4.new_notebook(cells=cells)
    notebook.metadata["kernelspec"] = {"name": "python3", "display_name": "Python 3", "language": "python"}
    notebook.metadata["language_info"] = {"name": "python"}
    return notebook


def main(argv: list[str]) -> None:
    sources = [Path(a).resolve() for a in argv] or sorted((ROOT / "notebooks" / "src").glob("[0-9][0-9]_*.py"))
    for source in sources:
        target = ROOT / "notebooks" / f"{source.stem}.ipynb"
        nbformat.write(convert(source), target)
        print(f"{source.relative_to(ROOT)} -> {target.relative_to(ROOT)}")


if __name__ == "__main__":
    main(sys.argv[1:])
